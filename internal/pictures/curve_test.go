package pictures

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderCurvesDrawsEverySeriesWhereItsValuesAre checks that a curve sits where its
// values are: a series at 1 on the top row of the plot, one that dips at frame 2 lower
// there, each in its palette colour.
func TestRenderCurvesDrawsEverySeriesWhereItsValuesAre(t *testing.T) {
	c := Curves{
		Title:  "t2v request 2/3: SSIM per frame",
		Frames: 5,
		Series: []Series{
			{Label: "request 2 vs request 1", Points: []Point{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}},
			{Label: "request 2 vs ground truth", Points: []Point{{0, 0.9}, {1, 0.9}, {2, 0.5}, {3, 0.9}, {4, math.NaN()}}},
		},
		Limits: []Limit{{Label: "repeat limit", Y: 0.99}},
	}
	img, err := RenderCurves(c)
	if err != nil {
		t.Fatal(err)
	}
	header := margin + lineHeight + gap
	x0 := margin + axisLeft
	// lowest value 0.5: the axis starts at 0.45.
	lo := 0.45
	py := func(v float64) int { return header + int(math.Round((1-v)/(1-lo)*float64(plotH-1))) }
	at := func(frame int, v float64) color.RGBA { return img.RGBAAt(x0+frame*(plotW-1)/4, py(v)) }
	if got := at(1, 1); got != palette[0] {
		t.Errorf("series 1 at frame 1, SSIM 1: colour %v, want %v", got, palette[0])
	}
	if got := at(2, 0.5); got != palette[1] {
		t.Errorf("series 2 at frame 2, SSIM 0.5: colour %v, want %v", got, palette[1])
	}
	if got := at(3, 0.5); got == palette[1] {
		t.Error("series 2 drawn at 0.5 on frame 3, where its value is 0.9")
	}
}

// TestRenderCurvesRejectsBadInput: a point outside the frames, or no frames, is an error,
// not a picture that lies.
func TestRenderCurvesRejectsBadInput(t *testing.T) {
	for name, c := range map[string]Curves{
		"no frames":        {Frames: 0},
		"frame past total": {Frames: 2, Series: []Series{{Label: "s", Points: []Point{{2, 1}}}}},
		"negative frame":   {Frames: 2, Series: []Series{{Label: "s", Points: []Point{{-1, 1}}}}},
	} {
		if _, err := RenderCurves(c); err == nil || !strings.Contains(err.Error(), "draw curves") {
			t.Errorf("%s: err = %v, want a draw curves error", name, err)
		}
	}
}

// TestWriteCurvesOneFrame: an image (one frame) draws its points in the middle, and the file
// is written.
func TestWriteCurvesOneFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "curve.png")
	if err := WriteCurves(path, Curves{Frames: 1, Series: []Series{{Label: "s", Points: []Point{{0, 0.7}}}}}); err != nil {
		t.Fatal(err)
	}
	img, err := RenderCurves(Curves{Frames: 1, Series: []Series{{Label: "s", Points: []Point{{0, 0.7}}}}})
	if err != nil {
		t.Fatal(err)
	}
	header := margin + lineHeight + gap
	lo := 0.67
	y := header + int(math.Round((1-0.7)/(1-lo)*float64(plotH-1)))
	if got := img.RGBAAt(margin+axisLeft+plotW/2, y); got != palette[0] {
		t.Errorf("the one point: colour %v at %v, want %v", got, image.Pt(margin+axisLeft+plotW/2, y), palette[0])
	}
}
