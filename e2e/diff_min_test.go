package e2e

import (
	"strings"
	"time"
)

// Minimizing a difference: delta debugging (ddmin) over the commands that
// preceded it, each candidate replayed on emptied servers and fresh
// connections, keeping the smallest history after which the last command
// still differs.

// minimize returns a small subsequence of hist after which s still
// differs, within the deadline.
func (d *differ) minimize(hist []step, s step, want, got []byte, deadline time.Time) []step {
	// A candidate reproduces the difference when both servers answer the
	// last command as they did (judged by each reply's first line).
	first := func(b []byte) string {
		if i := strings.Index(string(b), "\r\n"); i >= 0 {
			return string(b[:i])
		}
		return string(b)
	}
	reproduces := func(h []step) bool {
		if err := d.reset(); err != nil {
			d.t.Logf("minimize: %v", err)
			return false
		}
		for _, x := range h {
			if blocksLong(x) && !d.inMulti[x.conn] {
				continue // outside the MULTI it was sent in, it would wait
			}
			if _, _, _, err := d.run(x, false); err != nil {
				d.t.Logf("minimize: replaying %v: %v", x, err)
				return false
			}
		}
		same, w, g, err := d.run(s, true)
		return err == nil && !same && first(w) == first(want) && first(g) == first(got)
	}
	if !reproduces(hist) {
		d.t.Logf("minimize: the full history does not reproduce the difference (timing-dependent?)")
		return hist
	}
	// First try what followed the last FLUSHALL, with the SELECTs before it.
	if cut := lastFlushAll(hist); cut > 0 {
		var h []step
		for _, x := range hist[:cut] {
			if strings.EqualFold(x.argv[0], "SELECT") {
				h = append(h, x)
			}
		}
		h = append(h, hist[cut:]...)
		if reproduces(h) {
			hist = h
		}
	}
	n := 2
	for len(hist) > 0 && time.Now().Before(deadline) {
		if reproduces(nil) {
			return nil
		}
		if len(hist) < n {
			n = len(hist)
		}
		chunks := split(hist, n)
		reduced := false
		for i := range chunks {
			if time.Now().After(deadline) {
				return hist
			}
			if reproduces(chunks[i]) {
				hist, n, reduced = chunks[i], 2, true
				break
			}
		}
		if !reduced {
			for i := range chunks {
				if time.Now().After(deadline) {
					return hist
				}
				c := complement(chunks, i)
				if reproduces(c) {
					hist, n, reduced = c, max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(hist) {
				break
			}
			n = min(2*n, len(hist))
		}
	}
	return hist
}

func lastFlushAll(h []step) int {
	for i := len(h) - 1; i >= 0; i-- {
		if strings.EqualFold(h[i].argv[0], "FLUSHALL") && len(h[i].argv) == 1 {
			return i + 1
		}
	}
	return 0
}

func split(h []step, n int) [][]step {
	var out [][]step
	for i := 0; i < n; i++ {
		lo, hi := i*len(h)/n, (i+1)*len(h)/n
		if lo < hi {
			out = append(out, h[lo:hi])
		}
	}
	return out
}

func complement(chunks [][]step, skip int) []step {
	var out []step
	for i, c := range chunks {
		if i != skip {
			out = append(out, c...)
		}
	}
	return out
}

// blocksLong reports whether s is a blocking pop whose timeout is not one
// of the generator's tiny ones.
func blocksLong(s step) bool {
	switch strings.ToUpper(s.argv[0]) {
	case "BZPOPMIN", "BZPOPMAX":
		return !tinyTimeout(s.argv[len(s.argv)-1])
	case "BZMPOP":
		return len(s.argv) > 1 && !tinyTimeout(s.argv[1])
	}
	return false
}

func tinyTimeout(t string) bool {
	switch t {
	case "0.01", "0.005", "1e-2":
		return true
	}
	return false
}
