package drill

import (
	"math"
	"sort"
)

// Availability is what one fault cost the clients, in milliseconds.
type Availability struct {
	// WriteGapMS: the longest time within the fault's window (from its
	// start to the next fault's) in which no write succeeded on any node;
	// ReadGapMS the same for reads.
	WriteGapMS float64 `json:"write_unavailable_ms"`
	ReadGapMS  float64 `json:"read_unavailable_ms"`
	// FirstWriteMS: from the fault's start to the first success of a
	// write sent after it (-1: none succeeded in the window).
	FirstWriteMS float64 `json:"first_write_ms"`
	// Operations in the window, by outcome.
	OK      int `json:"ok"`
	Failed  int `json:"failed"`
	Unknown int `json:"unknown"`
}

// Percentiles summarise one measure over the faults of a kind.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// KindSummary summarises the faults of one kind, in milliseconds.
type KindSummary struct {
	Count            int         `json:"count"`
	Failed           int         `json:"failed_to_inject,omitempty"`
	WriteUnavailable Percentiles `json:"write_unavailable_ms"`
	ReadUnavailable  Percentiles `json:"read_unavailable_ms"`
	FirstWrite       Percentiles `json:"first_write_ms"`
}

// availability measures each fault's window over the history.
func availability(ops []Op, faults []*Fault) {
	var writes, reads []int64 // return times of successes, sorted
	for _, op := range ops {
		if op.Outcome != OK {
			continue
		}
		if op.Kind.Write() {
			writes = append(writes, op.Return)
		} else {
			reads = append(reads, op.Return)
		}
	}
	sort.Slice(writes, func(i, j int) bool { return writes[i] < writes[j] })
	sort.Slice(reads, func(i, j int) bool { return reads[i] < reads[j] })
	for _, f := range faults {
		a := &Availability{
			WriteGapMS:   ms(longestGap(writes, f.start, f.end)),
			ReadGapMS:    ms(longestGap(reads, f.start, f.end)),
			FirstWriteMS: -1,
		}
		first := int64(math.MaxInt64)
		for _, op := range ops {
			if op.Invoke < f.start || op.Invoke >= f.end {
				continue
			}
			switch op.Outcome {
			case OK:
				a.OK++
				if op.Kind.Write() && op.Return < first {
					first = op.Return
				}
			case Failed:
				a.Failed++
			default:
				a.Unknown++
			}
		}
		if first != math.MaxInt64 {
			a.FirstWriteMS = ms(first - f.start)
		}
		f.Avail = a
	}
}

// longestGap returns the longest interval of [from, to] holding none of
// the sorted times.
func longestGap(times []int64, from, to int64) int64 {
	i := sort.Search(len(times), func(i int) bool { return times[i] > from })
	prev, gap := from, int64(0)
	for ; i < len(times) && times[i] <= to; i++ {
		gap = max(gap, times[i]-prev)
		prev = times[i]
	}
	return max(gap, to-prev)
}

// summarise groups the faults by kind.
func summarise(faults []*Fault) map[string]*KindSummary {
	out := map[string]*KindSummary{}
	vals := map[string][3][]float64{}
	for _, f := range faults {
		s := out[f.Kind]
		if s == nil {
			s = &KindSummary{}
			out[f.Kind] = s
		}
		if f.Error != "" || f.Avail == nil {
			s.Failed++
			continue
		}
		s.Count++
		v := vals[f.Kind]
		v[0] = append(v[0], f.Avail.WriteGapMS)
		v[1] = append(v[1], f.Avail.ReadGapMS)
		if f.Avail.FirstWriteMS >= 0 {
			v[2] = append(v[2], f.Avail.FirstWriteMS)
		}
		vals[f.Kind] = v
	}
	for k, v := range vals {
		out[k].WriteUnavailable = percentiles(v[0])
		out[k].ReadUnavailable = percentiles(v[1])
		out[k].FirstWrite = percentiles(v[2])
	}
	return out
}

// percentiles by the nearest-rank method.
func percentiles(v []float64) Percentiles {
	if len(v) == 0 {
		return Percentiles{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Percentiles{P50: rank(50), P99: rank(99), Max: s[len(s)-1]}
}
