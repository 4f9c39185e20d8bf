package drill

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// The picture's palette.
const (
	colWrite   = "#2e9e5b"
	colRead    = "#4a7fc1"
	colFailed  = "#d9534f"
	colUnknown = "#f0ad4e"
	colLeader  = "#e0a800"
	colFollow  = "#cfd8dc"
	colDown    = "#37474f"
	colFault   = "#f4c7c3"
	colText    = "#222"
	colGrid    = "#e6e6e6"
)

// svgDoc accumulates SVG elements.
type svgDoc struct{ b strings.Builder }

func (s *svgDoc) f(format string, args ...any) {
	fmt.Fprintf(&s.b, format, args...)
	s.b.WriteByte('\n')
}

func (s *svgDoc) rect(x, y, w, h float64, fill string, extra string) {
	if w <= 0 || h <= 0 {
		return
	}
	s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" %s/>`, x, y, w, h, fill, extra)
}

func (s *svgDoc) text(x, y float64, size int, anchor, fill, text string) {
	s.f(`<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s">%s</text>`, x, y, size, anchor, fill, html.EscapeString(text))
}

// timelineSVG draws the run: operations per interval (successes above
// the axis, failures below), each node's role over time, the latency of
// operations, and the faults' windows shaded across all three.
func timelineSVG(d *Drill, r *Report) []byte {
	ops := d.hist.all()
	samples := d.mon.all()
	const (
		width   = 1200.0
		left    = 70.0
		right   = 20.0
		plotW   = width - left - right
		titleH  = 92.0
		opsH    = 200.0
		laneH   = 22.0
		latH    = 150.0
		gap     = 34.0
		legendH = 40.0
	)
	total := int64(r.Seconds * 1e9)
	if total <= 0 {
		total = 1
	}
	// Bars of a round interval, at most 300 across.
	bucket := int64(50e6)
	for _, b := range []int64{50e6, 100e6, 200e6, 250e6, 500e6, 1e9, 2e9, 5e9, 10e9, 30e9, 60e9} {
		bucket = b
		if total/b < 300 {
			break
		}
	}
	nb := int(total/bucket) + 1
	x := func(t int64) float64 { return left + plotW*float64(t)/float64(total) }

	type counts struct{ w, rd, fail, unk int }
	bars := make([]counts, nb)
	maxLat := make([]float64, nb) // seconds, successful ops
	for _, op := range ops {
		i := int(op.Return / bucket)
		if i >= nb {
			i = nb - 1
		}
		switch {
		case op.Outcome == OK && op.Kind.Write():
			bars[i].w++
		case op.Outcome == OK:
			bars[i].rd++
		case op.Outcome == Failed:
			bars[i].fail++
		default:
			bars[i].unk++
		}
		if op.Outcome == OK {
			maxLat[i] = math.Max(maxLat[i], float64(op.Return-op.Invoke)/1e9)
		}
	}
	peak := 1
	for _, b := range bars {
		peak = max(peak, b.w+b.rd, b.fail+b.unk)
	}

	nodes := ids(d.nodes)
	lanesH := laneH * float64(len(nodes))
	opsTop := titleH
	axisY := opsTop + opsH*0.62 // successes above, failures below
	lanesTop := opsTop + opsH + gap
	latTop := lanesTop + lanesH + gap
	height := latTop + latH + gap + legendH

	var s svgDoc
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`, width, height, width, height)
	s.rect(0, 0, width, height, "#fff", "")
	verdict := "PASS"
	verdictCol := colWrite
	if r.Failed() {
		verdict, verdictCol = "FAIL", colFailed
	} else if !r.Pass {
		verdict, verdictCol = "INCONCLUSIVE", colUnknown
	}
	s.text(left, 24, 18, "start", colText, fmt.Sprintf("goblin drill: %d nodes, %.0f s, seed %d", len(nodes), r.Seconds, r.Seed))
	s.text(width-right, 24, 18, "end", verdictCol, verdict+": "+r.Verdict)
	lin := map[string]string{"ok": "linearizable", "illegal": "NOT linearizable", "unknown": "linearizability unknown"}[r.Linearizability.Result]
	s.text(left, 46, 13, "start", "#555", fmt.Sprintf("%d operations: %d ok, %d failed, %d unknown · %d acknowledged writes lost · %d phantom · %s · %d faults",
		r.Ops.Total, r.Ops.OK, r.Ops.Failed, r.Ops.Unknown, r.Witness.LostCount, r.Witness.PhantomCount, lin, len(r.Faults)))

	// Fault windows, behind everything.
	bottom := latTop + latH
	for _, f := range r.Faults {
		x0, x1 := x(f.start), x(max(f.heal, f.start+bucket/2))
		s.rect(x0, opsTop, x1-x0, bottom-opsTop, colFault, `opacity="0.55"`)
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.2"/>`, x0, opsTop, x0, bottom, colFailed)
	}
	// Their labels above the panels, on two rows so neighbours do not
	// overlap: number, kind, target, and how long writes stopped.
	// Many faults close together get their number only (the report has
	// the rest).
	dense := len(r.Faults) > 0 && plotW/float64(len(r.Faults)) < 110
	for i, f := range r.Faults {
		label := fmt.Sprintf("%d %s %s", f.N, f.Kind, strings.Join(f.Targets, ","))
		if f.Avail != nil {
			label += fmt.Sprintf(" %.1fs", f.Avail.WriteGapMS/1000)
		}
		if dense {
			label = fmt.Sprint(f.N)
		}
		y := opsTop - 20 + float64(i%2)*11
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="0.8"/>`, x(f.start), y+2, x(f.start), opsTop, colFailed)
		s.text(x(f.start)+2, y, 10, "start", colFailed, label)
	}

	// Time grid and axis labels.
	step := niceStep(float64(total) / 1e9 / 12)
	for t := 0.0; t <= float64(total)/1e9; t += step {
		xx := x(int64(t * 1e9))
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, xx, opsTop, xx, bottom, colGrid)
		s.text(xx, bottom+14, 11, "middle", "#555", fmt.Sprintf("%gs", t))
	}

	// Operations per interval.
	bw := plotW / float64(nb)
	upScale := (axisY - opsTop - 4) / float64(peak)
	downScale := (opsTop + opsH - axisY - 4) / float64(peak)
	for i, b := range bars {
		xx := left + float64(i)*bw
		h1 := float64(b.w) * upScale
		h2 := float64(b.rd) * upScale
		s.rect(xx, axisY-h1, bw*0.9, h1, colWrite, "")
		s.rect(xx, axisY-h1-h2, bw*0.9, h2, colRead, "")
		f1 := float64(b.fail) * downScale
		f2 := float64(b.unk) * downScale
		s.rect(xx, axisY, bw*0.9, f1, colFailed, "")
		s.rect(xx, axisY+f1, bw*0.9, f2, colUnknown, "")
	}
	s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, left, axisY, left+plotW, axisY)
	s.text(left-6, opsTop+10, 11, "end", "#555", fmt.Sprint(peak))
	s.text(left-6, axisY+4, 11, "end", "#555", "0")
	s.text(left-6, opsTop+opsH, 11, "end", "#555", fmt.Sprint(peak))
	s.f(`<text x="16" y="%.1f" font-size="12" fill="#555" transform="rotate(-90 16 %.1f)" text-anchor="middle">ops per %s</text>`,
		opsTop+opsH/2, opsTop+opsH/2, fmtDur(bucket))

	// Node lanes: the role each node reported.
	s.text(left, lanesTop-8, 12, "start", "#555", "node roles (leader · follower · not answering)")
	bySample := map[string][]sample{}
	for _, sm := range samples {
		bySample[sm.node] = append(bySample[sm.node], sm)
	}
	for li, id := range nodes {
		y := lanesTop + float64(li)*laneH
		s.text(left-6, y+laneH*0.7, 12, "end", colText, id)
		ss := bySample[id]
		sort.Slice(ss, func(i, j int) bool { return ss[i].at < ss[j].at })
		for k, sm := range ss {
			end := total
			if k+1 < len(ss) {
				end = ss[k+1].at
			}
			col := colFollow
			switch {
			case !sm.up:
				col = colDown
			case sm.leader:
				col = colLeader
			}
			s.rect(x(sm.at), y+2, x(end)-x(sm.at)+0.3, laneH-4, col, "")
		}
	}

	// Latency of successful operations: the slowest per interval, log scale.
	s.text(left, latTop-8, 12, "start", "#555", "slowest successful operation per interval (log scale)")
	lo, hi := math.Log10(0.001), math.Log10(20)
	ly := func(v float64) float64 {
		v = math.Min(math.Max(v, 0.001), 20)
		return latTop + latH - latH*(math.Log10(v)-lo)/(hi-lo)
	}
	for _, v := range []float64{0.001, 0.01, 0.1, 1, 10} {
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, left, ly(v), left+plotW, ly(v), colGrid)
		s.text(left-6, ly(v)+4, 11, "end", "#555", fmtSecs(v))
	}
	for i, v := range maxLat {
		if v > 0 {
			s.f(`<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>`, left+(float64(i)+0.5)*bw, ly(v), colRead)
		}
	}

	// Legend.
	ly0 := height - legendH + 12
	lx := left
	for _, it := range []struct{ col, label string }{
		{colWrite, "write ok"}, {colRead, "read ok"}, {colFailed, "failed (not applied)"}, {colUnknown, "unknown outcome"},
		{colFault, "fault in effect"}, {colLeader, "leader"}, {colFollow, "follower"}, {colDown, "not answering"},
	} {
		s.rect(lx, ly0, 12, 12, it.col, `stroke="#999" stroke-width="0.5"`)
		s.text(lx+16, ly0+10, 12, "start", colText, it.label)
		lx += 34 + 6.6*float64(len(it.label))
	}
	s.f(`</svg>`)
	return []byte(s.b.String())
}

// niceStep rounds a raw grid step (seconds) to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtSecs(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%gms", v*1000)
	}
	return fmt.Sprintf("%gs", v)
}

func fmtDur(ns int64) string {
	if ns < 1e9 {
		return fmt.Sprintf("%d ms", ns/1e6)
	}
	return fmt.Sprintf("%.1f s", float64(ns)/1e9)
}
