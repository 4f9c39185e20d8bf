package resp

import (
	"sync"
	"time"
)

// opsMeter samples the server's counters ten times a second and gives
// their rates over the last samples, as Redis's instantaneous_* fields:
// the mean of 16 samples 100 ms apart.
type opsMeter struct {
	mu    sync.Mutex
	last  [meterSeries]int64
	at    time.Time
	rates [meterSeries][meterSamples]float64
	n     int // samples taken
}

const (
	meterSamples = 16
	meterPeriod  = 100 * time.Millisecond
)

// The series the meter follows.
const (
	meterOps = iota
	meterNetIn
	meterNetOut
	meterSeries
)

// sample records the counters' values now.
func (m *opsMeter) sample(now time.Time, vals [meterSeries]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at.IsZero() {
		secs := now.Sub(m.at).Seconds()
		if secs > 0 {
			for i, v := range vals {
				m.rates[i][m.n%meterSamples] = max(float64(v-m.last[i]), 0) / secs
			}
			m.n++
		}
	}
	m.last, m.at = vals, now
}

// rate returns series i's mean rate per second over the samples kept.
func (m *opsMeter) rate(i int) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := min(m.n, meterSamples)
	if k == 0 {
		return 0
	}
	var sum float64
	for _, r := range m.rates[i][:k] {
		sum += r
	}
	return sum / float64(k)
}

// meter samples the counters until the server closes.
func (s *Server) meter() {
	t := time.NewTicker(meterPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case now := <-t.C:
			s.stats.ops.sample(now, [meterSeries]int64{
				meterOps:    s.stats.commands.Load(),
				meterNetIn:  s.stats.netIn.Load(),
				meterNetOut: s.stats.netOut.Load(),
			})
			s.refreshReplyBudget()
		}
	}
}
