package main

import (
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// throughput is each engine's bars, one per workload: relative to
// redis-server without persistence when it was measured, else in
// thousands of commands per second.
func (rp *report) throughput() (relative bool, values []plotter.Values) {
	for k := range rp.runs {
		if k[1] == engRedis {
			relative = true
		}
	}
	for _, e := range rp.engines {
		vals := make(plotter.Values, len(rp.workloads))
		for j, wl := range rp.workloads {
			s, ref := rp.runs[[2]string{wl, e}], rp.runs[[2]string{wl, engRedis}]
			switch {
			case s == nil:
			case !relative:
				vals[j] = s.ops / 1000
			case ref != nil && ref.ops > 0:
				vals[j] = s.ops / ref.ops
			}
		}
		values = append(values, vals)
	}
	return relative, values
}

// chart draws two panels into a PNG: every workload's throughput relative
// to redis-server without persistence (the dashed line is parity), or in
// commands per second when redis was not measured, and bytes per member
// after the replay.
func (rp *report) chart(path, title string) error {
	relative, values := rp.throughput()
	thr := plot.New()
	thr.Title.Text = title + ": throughput (× redis, no persistence)"
	thr.Y.Label.Text = "commands/s relative to redis"
	if !relative {
		thr.Title.Text = title + ": throughput"
		thr.Y.Label.Text = "thousands of commands/s"
	}
	thr.Y.Min = 0
	thr.Legend.Top = true
	width := vg.Points(7)
	n := len(rp.engines)
	for i, e := range rp.engines {
		vals := values[i]
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		thr.Add(bars)
		thr.Legend.Add(e, bars)
	}
	if relative {
		parity := plotter.NewFunction(func(float64) float64 { return 1 })
		parity.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		parity.Color = plotutil.Color(7)
		thr.Add(parity)
	}
	thr.NominalX(rp.workloads...)
	thr.Y.Max *= 1.25 // room for the legend
	thr.X.Tick.Label.Rotation = 0.5
	thr.X.Tick.Label.XAlign = draw.XRight

	mem := plot.New()
	mem.Title.Text = "memory after the replay"
	mem.Y.Label.Text = "bytes per member"
	mem.Legend.Top = true
	var names []string
	var rss, used plotter.Values
	for _, e := range rp.engines {
		if s := rp.mem[e]; s != nil {
			names = append(names, e)
			rss, used = append(rss, s.rss), append(used, s.used)
		}
	}
	if len(names) > 0 {
		for i, series := range []struct {
			name string
			v    plotter.Values
		}{{"RSS", rss}, {"used_memory", used}} {
			bars, err := plotter.NewBarChart(series.v, width*2)
			if err != nil {
				return err
			}
			bars.Color = plotutil.Color(i + 3)
			bars.LineStyle.Width = 0
			bars.Offset = vg.Length(float64(i)-0.5) * width * 2
			mem.Add(bars)
			mem.Legend.Add(series.name, bars)
		}
		mem.NominalX(names...)
		mem.Y.Min = 0
		mem.Y.Max *= 1.2
		mem.X.Tick.Label.Rotation = 0.5
		mem.X.Tick.Label.XAlign = draw.XRight
	}

	img := vgimg.New(15*vg.Inch, 5.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(10), PadY: vg.Points(10), PadTop: vg.Points(5), PadBottom: vg.Points(5), PadLeft: vg.Points(5), PadRight: vg.Points(5)}
	plots := [][]*plot.Plot{{thr, mem}}
	canvases := plot.Align(plots, tiles, dc)
	thr.Draw(canvases[0][0])
	mem.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
