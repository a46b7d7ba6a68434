package pictures

import (
	"bytes"
	"cmp"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// FilePrefix starts the file name of every failure picture in a request's artifact folder
// (consistency-frame-<worst frame>.png): the runner writes them, the report command finds
// them there to show in the pull request.
const FilePrefix = "consistency-frame-"

// RepeatFilePrefix starts the file name of the cross-request picture of a consistency.repeat
// failure in request k's folder (consistency-repeat-frame-<worst frame>.png: request 1 |
// request k | SSIM map), which the report command shows in the pull request as well.
const RepeatFilePrefix = "consistency-repeat-frame-"

// Frame is a packed RGB24 picture, W×H pixels row after row.
type Frame struct {
	RGB  []byte
	W, H int
}

// Line is one line of text above the panels; Bad lines are drawn in red.
type Line struct {
	Text string
	Bad  bool
}

// Failure is the content of one failure picture.
type Failure struct {
	Title string // e.g. "t2va_waves request 2/2: frame 7 of 16"
	Lines []Line // the metric values and limits
	GT    Frame
	Out   Frame
	// SSIMMap is the local SSIM of every 7×7 window fully inside the frame (metrics.SSIMMap):
	// MapW×MapH values whose (x, y) is centred on pixel (x+3, y+3).
	SSIMMap    []float64
	MapW, MapH int
	// GTLabel and OutLabel name the first two panels; empty: "ground truth" and "output"
	// (a cross-request picture says "request 1" and "request 2").
	GTLabel, OutLabel string
}

// Layout constants, in pixels.
const (
	maxPanel   = 480 // panels wider than this are scaled down
	margin     = 12
	gap        = 10
	lineHeight = 17 // a 13 px face and some air
	fontSize   = 13 // px: the size of basicfont.Face7x13 that the pictures used before
)

var (
	background = color.RGBA{245, 246, 248, 255}
	ink        = color.RGBA{25, 25, 25, 255}
	red        = color.RGBA{185, 35, 35, 255}
	grey       = color.RGBA{110, 110, 110, 255}
)

// Render draws f: a header with the title and lines, then three labelled panels: ground
// truth | output | SSIM map (dark: equal, bright: different), or with the labels f gives.
func Render(f Failure) (*image.RGBA, error) {
	if err := checkFrame("ground truth", f.GT); err != nil {
		return nil, err
	}
	if err := checkFrame("output", f.Out); err != nil {
		return nil, err
	}
	if f.GT.W != f.Out.W || f.GT.H != f.Out.H {
		return nil, fmt.Errorf("draw failure picture: ground truth %dx%d and output %dx%d differ in size", f.GT.W, f.GT.H, f.Out.W, f.Out.H)
	}
	if len(f.SSIMMap) != f.MapW*f.MapH {
		return nil, fmt.Errorf("draw failure picture: SSIM map has %d values for %dx%d", len(f.SSIMMap), f.MapW, f.MapH)
	}
	face, err := Face()
	if err != nil {
		return nil, err
	}
	defer func() { _ = face.Close() }() // an opentype face has nothing to release

	w, h := f.GT.W, f.GT.H
	pw, ph := w, h
	if pw > maxPanel {
		pw, ph = maxPanel, max(1, h*maxPanel/w)
	}
	panels := []struct {
		label string
		img   image.Image
	}{
		{cmp.Or(f.GTLabel, "ground truth"), toRGBA(f.GT)},
		{cmp.Or(f.OutLabel, "output"), toRGBA(f.Out)},
		{"SSIM map (dark = same, bright = different)", heatMap(f.SSIMMap, f.MapW, f.MapH, w, h)},
	}
	header := margin + lineHeight*(1+len(f.Lines)) + gap
	width := headerWidth(face, 2*margin+3*pw+2*gap, f.Title, f.Lines)
	for _, p := range panels {
		width = max(width, 2*margin+2*(pw+gap)+textWidth(face, p.label))
	}
	height := header + lineHeight + ph + margin
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)

	drawHeader(img, face, f.Title, f.Lines)
	for i, p := range panels {
		x := margin + i*(pw+gap)
		text(img, face, x, header+lineHeight-4, p.label, grey)
		r := image.Rect(x, header+lineHeight, x+pw, header+lineHeight+ph)
		draw.CatmullRom.Scale(img, r, p.img, p.img.Bounds(), draw.Src, nil)
	}
	return img, nil
}

// Write renders f and saves it as a PNG at path.
func Write(path string, f Failure) error {
	return writeRendered(path, func() (*image.RGBA, error) { return Render(f) })
}

// writeRendered saves what render draws as a PNG at path; an error names the path.
func writeRendered(path string, render func() (*image.RGBA, error)) error {
	img, err := render()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writePNG(path, img)
}

// writePNG saves img as a PNG at path, creating its folder.
func writePNG(path string, img image.Image) error {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return fmt.Errorf("%s: encode png: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func checkFrame(what string, f Frame) error {
	if f.W <= 0 || f.H <= 0 || len(f.RGB) != 3*f.W*f.H {
		return fmt.Errorf("draw failure picture: %s frame has %d bytes for %dx%d RGB", what, len(f.RGB), f.W, f.H)
	}
	return nil
}

// Face is the face the pictures' text is drawn in: Go Regular, which has the glyphs of the
// values and limits that checks write (≥, ≤, ×, −, …) where the ASCII-only basicfont drew
// boxes. Parsed on each call (a few hundred microseconds): no package state.
func Face() (font.Face, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("parse the Go Regular font: %w", err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: fontSize, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("make the Go Regular face: %w", err)
	}
	return face, nil
}

func textWidth(face font.Face, s string) int { return font.MeasureString(face, s).Ceil() }

// headerWidth is the width a picture needs for its title and lines above content of width w.
func headerWidth(face font.Face, w int, title string, lines []Line) int {
	w = max(w, 2*margin+textWidth(face, title))
	for _, l := range lines {
		w = max(w, 2*margin+textWidth(face, l.Text))
	}
	return w
}

// drawHeader draws a picture's title and, below it, its lines (a bad one in red).
func drawHeader(img *image.RGBA, face font.Face, title string, lines []Line) {
	y := margin + lineHeight - 4
	text(img, face, margin, y, title, ink)
	for _, l := range lines {
		y += lineHeight
		c := ink
		if l.Bad {
			c = red
		}
		text(img, face, margin, y, l.Text, c)
	}
}

// text draws s with its baseline at y.
func text(dst *image.RGBA, face font.Face, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func toRGBA(f Frame) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, f.W, f.H))
	for i, j := 0, 0; i < len(f.RGB); i, j = i+3, j+4 {
		img.Pix[j], img.Pix[j+1], img.Pix[j+2], img.Pix[j+3] = f.RGB[i], f.RGB[i+1], f.RGB[i+2], 255
	}
	return img
}

// heatMap paints the SSIM map into a w×h picture: the map's (x, y) at pixel (x+off, y+off),
// where off centres it, and the border the windows do not reach in mid grey.
func heatMap(m []float64, mw, mh, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{128, 128, 128, 255}), image.Point{}, draw.Src)
	ox, oy := (w-mw)/2, (h-mh)/2
	for y := range mh {
		for x := range mw {
			img.SetRGBA(x+ox, y+oy, heat(m[y*mw+x]))
		}
	}
	return img
}

// heat maps a local SSIM onto a black → red → yellow → white ramp of its dissimilarity 1 − s
// (s clamped to [0, 1]): identical windows are black, unrelated ones white-hot.
func heat(s float64) color.RGBA {
	if math.IsNaN(s) {
		return color.RGBA{0, 0, 255, 255}
	}
	t := 1 - math.Max(0, math.Min(1, s))
	ch := func(v float64) uint8 { return uint8(math.Round(255 * math.Max(0, math.Min(1, v)))) }
	return color.RGBA{ch(3 * t), ch(3*t - 1), ch(3*t - 2), 255}
}
