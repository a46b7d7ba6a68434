package pictures

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"golang.org/x/image/draw"
)

// Point is one value of a curve: Y (an SSIM) at frame X.
type Point struct {
	X int
	Y float64
}

// Series is one curve of a chart, e.g. "request 2 vs request 1".
type Series struct {
	Label  string
	Points []Point
}

// Limit is a horizontal line of a chart, e.g. a threshold.
type Limit struct {
	Label string
	Y     float64
}

// Curves is the content of a per-frame chart: one curve per series over the frames of an
// output, with the limits drawn across.
type Curves struct {
	Title  string
	Lines  []Line
	Frames int // the x axis runs over frames 0 … Frames−1
	Series []Series
	Limits []Limit
}

// Chart layout, in pixels.
const (
	plotW, plotH = 640, 240
	axisLeft     = 56 // room for the y labels
)

// palette colours the series in order; limits are drawn in grey.
var palette = []color.RGBA{{31, 119, 180, 255}, {214, 39, 40, 255}, {44, 160, 44, 255}, {148, 103, 189, 255}, {255, 127, 14, 255}}

// RenderCurves draws c: a header with the title and lines, the plot (y from just below the
// lowest value to 1, x over the frames), and a legend naming each series in its colour.
func RenderCurves(c Curves) (*image.RGBA, error) {
	lo, err := c.bottom()
	if err != nil {
		return nil, err
	}
	face, err := Face()
	if err != nil {
		return nil, err
	}
	legend := len(c.Series) + len(c.Limits)
	header := margin + lineHeight*(1+len(c.Lines)) + gap
	width := headerWidth(face, 2*margin+axisLeft+plotW, c.Title, c.Lines)
	height := header + plotH + 2*lineHeight + legend*lineHeight + margin
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	drawHeader(img, face, c.Title, c.Lines)
	x0, y0 := margin+axisLeft, header
	px := func(frame int) int {
		if c.Frames == 1 {
			return x0 + plotW/2
		}
		return x0 + frame*(plotW-1)/(c.Frames-1)
	}
	py := func(v float64) int { return y0 + int(math.Round((1-v)/(1-lo)*float64(plotH-1))) }
	draw.Draw(img, image.Rect(x0, y0, x0+plotW, y0+plotH), image.NewUniform(color.White), image.Point{}, draw.Src)
	gridC := color.RGBA{222, 225, 230, 255}
	for i := 0; i <= 4; i++ {
		v := lo + (1-lo)*float64(i)/4
		line(img, x0, py(v), x0+plotW-1, py(v), gridC, 1)
		text(img, face, margin, py(v)+4, fmt.Sprintf("%.3f", v), grey)
	}
	step := max(1, c.Frames/8)
	for f := 0; f < c.Frames; f += step {
		line(img, px(f), y0, px(f), y0+plotH-1, gridC, 1)
		text(img, face, px(f)-3, y0+plotH+lineHeight-2, fmt.Sprint(f), grey)
	}
	text(img, face, x0+plotW-textWidth(face, "frame"), y0+plotH+2*lineHeight-2, "frame", grey)
	ly := y0 + plotH + 2*lineHeight
	for _, l := range c.Limits {
		for x := x0; x < x0+plotW; x += 8 {
			line(img, x, py(l.Y), min(x+4, x0+plotW-1), py(l.Y), grey, 1)
		}
		ly += lineHeight
		line(img, margin, ly-4, margin+20, ly-4, grey, 1)
		text(img, face, margin+28, ly, fmt.Sprintf("%s (%.4g)", l.Label, l.Y), grey)
	}
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		prev := -1
		for j, p := range s.Points {
			if math.IsNaN(p.Y) {
				prev = -1
				continue
			}
			if prev >= 0 {
				q := s.Points[prev]
				line(img, px(q.X), py(q.Y), px(p.X), py(p.Y), col, 2)
			}
			draw.Draw(img, image.Rect(px(p.X)-2, py(p.Y)-2, px(p.X)+3, py(p.Y)+3), image.NewUniform(col), image.Point{}, draw.Src)
			prev = j
		}
		ly += lineHeight
		draw.Draw(img, image.Rect(margin, ly-6, margin+20, ly-3), image.NewUniform(col), image.Point{}, draw.Src)
		text(img, face, margin+28, ly, s.Label, ink)
	}
	return img, nil
}

// bottom is the value at the bottom of c's plot: a tenth below the lowest value or limit, on
// a step of 0.01, and never a range narrower than 0.02 (identical outputs draw at the top, not
// in a zoom on nothing). A point outside the frames is an error.
func (c Curves) bottom() (float64, error) {
	if c.Frames < 1 {
		return 0, fmt.Errorf("draw curves: %d frames, want ≥ 1", c.Frames)
	}
	lo := 1.0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.X < 0 || p.X >= c.Frames {
				return 0, fmt.Errorf("draw curves: %s has frame %d of %d", s.Label, p.X, c.Frames)
			}
			if !math.IsNaN(p.Y) {
				lo = math.Min(lo, p.Y)
			}
		}
	}
	for _, l := range c.Limits {
		lo = math.Min(lo, l.Y)
	}
	return math.Max(-1, math.Min(0.98, math.Floor((lo-0.1*(1-lo))*100)/100)), nil
}

// WriteCurves renders c and saves it as a PNG at path.
func WriteCurves(path string, c Curves) error {
	return writeRendered(path, func() (*image.RGBA, error) { return RenderCurves(c) })
}

// line draws a straight line of width w (1 or 2 pixels) from (x1, y1) to (x2, y2).
func line(img *image.RGBA, x1, y1, x2, y2 int, c color.RGBA, w int) {
	n := max(abs(x2-x1), abs(y2-y1))
	for i := 0; i <= n; i++ {
		x, y := x1, y1
		if n > 0 {
			x = x1 + (x2-x1)*i/n
			y = y1 + (y2-y1)*i/n
		}
		for dx := range w {
			for dy := range w {
				if image.Pt(x+dx, y+dy).In(img.Rect) {
					img.SetRGBA(x+dx, y+dy, c)
				}
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
