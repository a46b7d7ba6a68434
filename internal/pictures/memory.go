package pictures

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
)

// MemoryFilePrefix starts the file name of a memory failure's picture in its artifact folder
// (artifacts/<case>/request-<i>/ or artifacts/<case>/load/): the server start's memory over
// time with the limit, the failing window shaded and the spike marked.
const MemoryFilePrefix = "memory-"

// Sample is a value (MiB) at a time (ms since the server started).
type Sample struct {
	Ms, MiB float64
}

// MemoryLine is one source's memory over time, a step line: each value holds until the next.
type MemoryLine struct {
	Label   string
	Samples []Sample
}

// Span is a stretch of the time axis (ms), e.g. one request in flight; MiB is a level over
// it (a server-reported peak), when it has one.
type Span struct {
	Label          string
	StartMs, EndMs float64
	MiB            float64
}

// Reported is what the server said about its own memory, one peak per window (e.g.
// server_reserved from its perf records), drawn as a bar over each window.
type Reported struct {
	Label string
	Spans []Span
}

// Memory is the content of a memory failure's picture.
type Memory struct {
	Title string
	Lines []Line
	// Series are the measured sources, each in its colour; Reported are the spans with the
	// server's own peaks (server_reserved, ...), by source label.
	Series   []MemoryLine
	Reported []Reported
	// Windows are the load and the requests of the server start, shaded alternately;
	// Failing is the one that failed, shaded red.
	Windows []Span
	Failing Span
	// Limit is the failing check's limit (NaN: none), LimitLabel what it is.
	Limit      float64
	LimitLabel string
	// Spike is the highest value of the failing source inside the failing window; SpikeLabel
	// says what it is.
	Spike      *Sample
	SpikeLabel string
	// View is the stretch of time drawn (the failing window and what came just before it);
	// zero: the whole timeline. What falls outside it is cut at its edges.
	View Span
}

// Memory picture layout, in pixels.
const memW, memH = 760, 260

var (
	failShade   = color.RGBA{253, 224, 224, 255}
	windowShade = color.RGBA{236, 239, 244, 255}
	limitColour = color.RGBA{200, 30, 30, 255}
)

// RenderMemory draws m: the header, the plot (time across, MiB up from 0 to a little above
// the highest value or the limit), windows shaded, the failing one in red, the limit as a
// dashed red line, the spike as a ringed point with its value, and a legend.
func RenderMemory(m Memory) (*image.RGBA, error) {
	loT, hiT, top, err := memoryScale(m)
	if err != nil {
		return nil, err
	}
	face, err := Face()
	if err != nil {
		return nil, err
	}
	legend := len(m.Series) + len(m.Reported) + 2
	header := margin + lineHeight*(1+len(m.Lines)) + gap
	width := headerWidth(face, 2*margin+axisLeft+memW, m.Title, m.Lines)
	height := header + memH + 2*lineHeight + legend*lineHeight + margin
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	drawHeader(img, face, m.Title, m.Lines)
	x0, y0 := margin+axisLeft, header
	px := func(ms float64) int {
		ms = math.Min(math.Max(ms, loT), hiT) // what lies outside the view is cut at its edges
		return x0 + int(math.Round((ms-loT)/(hiT-loT)*float64(memW-1)))
	}
	py := func(v float64) int { return y0 + memH - 1 - int(math.Round(v/top*float64(memH-1))) }
	draw.Draw(img, image.Rect(x0, y0, x0+memW, y0+memH), image.NewUniform(color.White), image.Point{}, draw.Src)
	shade := func(s Span, c color.RGBA) {
		a, b := px(s.StartMs), max(px(s.EndMs), px(s.StartMs)+1)
		draw.Draw(img, image.Rect(a, y0, b, y0+memH), image.NewUniform(c), image.Point{}, draw.Src)
	}
	for i, w := range m.Windows {
		if i%2 == 0 {
			shade(w, windowShade)
		}
	}
	shade(m.Failing, failShade)
	gridC := color.RGBA{222, 225, 230, 255}
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		line(img, x0, py(v), x0+memW-1, py(v), gridC, 1)
		text(img, face, margin, py(v)+4, fmt.Sprintf("%.0f", v), grey)
	}
	step := niceCeil((hiT - loT) / 8)
	for t := math.Ceil(loT/step) * step; t <= hiT; t += step {
		line(img, px(t), y0, px(t), y0+memH-1, gridC, 1)
		text(img, face, px(t)-3, y0+memH+lineHeight-2, seconds(t), grey)
	}
	text(img, face, x0+memW-textWidth(face, "time since the server started (MiB up)"), y0+memH+2*lineHeight-2, "time since the server started (MiB up)", grey)
	ly := y0 + memH + 2*lineHeight
	if !math.IsNaN(m.Limit) {
		for x := x0; x < x0+memW; x += 8 {
			line(img, x, py(m.Limit), min(x+4, x0+memW-1), py(m.Limit), limitColour, 2)
		}
		ly += lineHeight
		line(img, margin, ly-4, margin+20, ly-4, limitColour, 2)
		text(img, face, margin+28, ly, fmt.Sprintf("%s (%.0f MiB)", m.LimitLabel, m.Limit), limitColour)
	}
	ly += lineHeight
	draw.Draw(img, image.Rect(margin, ly-10, margin+20, ly), image.NewUniform(failShade), image.Point{}, draw.Src)
	text(img, face, margin+28, ly, m.Failing.Label, ink)
	drawMemoryLines(img, face, m, px, py, hiT, ly)
	if sp := m.Spike; sp != nil {
		x, y := px(sp.Ms), py(sp.MiB)
		ring(img, x, y, 7, ink)
		label := fmt.Sprintf("%s %.0f MiB at %s", m.SpikeLabel, sp.MiB, seconds(sp.Ms))
		lx := x + 10
		if lx+textWidth(face, label) > x0+memW {
			lx = x - 10 - textWidth(face, label)
		}
		text(img, face, max(lx, x0), max(y-6, y0+lineHeight), label, ink)
	}
	return img, nil
}

// memoryScale is the picture's time axis (loT to hiT, ms: the view, else the whole timeline)
// and memory axis top (MiB), so that every sample, reported span and window in view, and the
// limit, fit; a sample that is not a finite number ≥ 0 is an error.
func memoryScale(m Memory) (loT, hiT, top float64, err error) {
	hiT, hiV := m.Failing.EndMs, 0.0
	// The first pass finds the timeline's end and refuses bad samples; the values that set
	// the memory axis are those in view.
	note := func(ms, v float64) error {
		if math.IsNaN(ms) || math.IsNaN(v) || math.IsInf(ms, 0) || math.IsInf(v, 0) || ms < 0 || v < 0 {
			return fmt.Errorf("draw memory: a sample at %g ms of %g MiB", ms, v)
		}
		hiT = math.Max(hiT, ms)
		return nil
	}
	for _, s := range m.Series {
		for _, p := range s.Samples {
			if err := note(p.Ms, p.MiB); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	for _, r := range m.Reported {
		for _, w := range r.Spans {
			if err := note(w.EndMs, w.MiB); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	for _, w := range m.Windows {
		if err := note(w.EndMs, 0); err != nil {
			return 0, 0, 0, err
		}
	}
	if v := m.View; v.EndMs > v.StartMs && v.StartMs >= 0 {
		loT, hiT = v.StartMs, v.EndMs
	}
	inView := func(from, to float64) bool { return to >= loT && from <= hiT }
	for _, s := range m.Series {
		for j, p := range s.Samples {
			end := math.Inf(1) // a step holds until the next sample
			if j+1 < len(s.Samples) {
				end = s.Samples[j+1].Ms
			}
			if inView(p.Ms, end) {
				hiV = math.Max(hiV, p.MiB)
			}
		}
	}
	for _, r := range m.Reported {
		for _, w := range r.Spans {
			if inView(w.StartMs, w.EndMs) {
				hiV = math.Max(hiV, w.MiB)
			}
		}
	}
	if !math.IsNaN(m.Limit) {
		hiV = math.Max(hiV, m.Limit)
	}
	if hiV <= 0 {
		hiV = 1
	}
	if hiT <= loT {
		hiT = loT + 1
	}
	return loT, hiT, niceCeil(hiV * 1.08), nil
}

// drawMemoryLines draws the sampled series as steps and the server's reported peaks as
// spans, each with its legend row below ly (the legend's last row so far).
func drawMemoryLines(img *image.RGBA, face font.Face, m Memory, px, py func(float64) int, hiT float64, ly int) {
	for i, s := range m.Series {
		col := palette[i%len(palette)]
		for j, p := range s.Samples {
			end := hiT
			if j+1 < len(s.Samples) {
				end = s.Samples[j+1].Ms
			}
			line(img, px(p.Ms), py(p.MiB), px(end), py(p.MiB), col, 2)
			if j+1 < len(s.Samples) {
				line(img, px(end), py(p.MiB), px(end), py(s.Samples[j+1].MiB), col, 1)
			}
		}
		ly += lineHeight
		draw.Draw(img, image.Rect(margin, ly-6, margin+20, ly-3), image.NewUniform(col), image.Point{}, draw.Src)
		text(img, face, margin+28, ly, s.Label, ink)
	}
	for i, s := range m.Reported {
		col := palette[(3+i)%len(palette)] // after the three measured sources' colours
		for _, w := range s.Spans {
			line(img, px(w.StartMs), py(w.MiB), max(px(w.EndMs), px(w.StartMs)+3), py(w.MiB), col, 2)
		}
		ly += lineHeight
		line(img, margin, ly-4, margin+20, ly-4, col, 2)
		text(img, face, margin+28, ly, s.Label+" (the server's own peak per request)", ink)
	}
}

// WriteMemory renders m and saves it as a PNG at path.
func WriteMemory(path string, m Memory) error {
	return writeRendered(path, func() (*image.RGBA, error) { return RenderMemory(m) })
}

// ring draws a circle of radius r around (x, y), two pixels thick.
func ring(img *image.RGBA, x, y, r int, c color.RGBA) {
	for a := 0; a < 360; a += 3 {
		rad := float64(a) * math.Pi / 180
		for _, rr := range []float64{float64(r), float64(r) - 1} {
			p := image.Pt(x+int(math.Round(rr*math.Cos(rad))), y+int(math.Round(rr*math.Sin(rad))))
			if p.In(img.Rect) {
				img.SetRGBA(p.X, p.Y, c)
			}
		}
	}
}

// niceCeil is the smallest 1, 2 or 5 × 10^k at or above v > 0.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// seconds writes a time in ms as seconds, with the decimals a short axis needs.
func seconds(ms float64) string {
	switch {
	case ms >= 10000:
		return fmt.Sprintf("%.0f s", ms/1000)
	case ms >= 1000:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
