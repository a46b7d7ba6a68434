package pictures

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func frame(w, h int, f func(x, y int) byte) Frame {
	p := Frame{RGB: make([]byte, 3*w*h), W: w, H: h}
	for y := range h {
		for x := range w {
			v := f(x, y)
			p.RGB[3*(y*w+x)], p.RGB[3*(y*w+x)+1], p.RGB[3*(y*w+x)+2] = v, v/2, 255-v
		}
	}
	return p
}

func TestWriteFailure(t *testing.T) {
	const w, h = 64, 40
	m := make([]float64, (w-6)*(h-6))
	for i := range m {
		m[i] = float64(i%(w-6)) / float64(w-7) // 0 on the left to 1 on the right
	}
	f := Failure{
		Title:   "t2v request 2/2: frame 7 of 16",
		Lines:   []Line{{Text: "consistency.ssim fail: min SSIM 0.41 at frame 7 of 16", Bad: true}, {Text: "consistency.psnr pass"}},
		GT:      frame(w, h, func(x, y int) byte { return byte(4 * x) }),
		Out:     frame(w, h, func(x, y int) byte { return byte(6 * y) }),
		SSIMMap: m, MapW: w - 6, MapH: h - 6,
	}
	path := filepath.Join(t.TempDir(), "sub", "consistency-frame-7.png")
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	img, err := png.Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() < 3*w+2*gap+2*margin || b.Dy() < h+3*lineHeight {
		t.Errorf("picture %v too small for three %dx%d panels and three text lines", b, w, h)
	}
	// The header has red text (the failed line) and the SSIM panel is black where the map is 1
	// and bright where it is 0.
	red := 0
	for y := 0; y < margin+3*lineHeight; y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 150 && g>>8 < 80 && bl>>8 < 80 {
				red++
			}
		}
	}
	if red == 0 {
		t.Error("no red text for the failed line")
	}
	py := b.Dy() - margin - h/2
	px := margin + 2*(w+gap)
	lr, lg, _, _ := img.At(px+5, py).RGBA()
	rr, _, _, _ := img.At(px+w-5, py).RGBA()
	if lr>>8 < 200 || lg>>8 < 100 || rr>>8 > 40 {
		t.Errorf("heat map: left (SSIM 0) = %d,%d, right (SSIM 1) red = %d; want bright then black", lr>>8, lg>>8, rr>>8)
	}
}

// TestRenderLabelsThePanels: a cross-request picture names its panels request 1 and
// request k; without labels they are the ground truth and the output. The header grows
// with the label's width, so a longer label makes a wider picture.
func TestRenderLabelsThePanels(t *testing.T) {
	const w, h = 16, 12
	f := Failure{Title: "x", GT: frame(w, h, func(x, y int) byte { return 0 }), Out: frame(w, h, func(x, y int) byte { return 9 }),
		SSIMMap: make([]float64, (w-6)*(h-6)), MapW: w - 6, MapH: h - 6}
	plain, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	f.OutLabel = "request 2 of the same server start, a long label"
	labelled, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	if labelled.Bounds().Dx() <= plain.Bounds().Dx() {
		t.Errorf("a longer panel label kept the width %d (plain %d)", labelled.Bounds().Dx(), plain.Bounds().Dx())
	}
}

func TestRenderRejectsBadInput(t *testing.T) {
	ok := frame(8, 8, func(x, y int) byte { return 0 })
	for name, f := range map[string]Failure{
		"size mismatch": {GT: ok, Out: frame(9, 8, func(x, y int) byte { return 0 }), SSIMMap: make([]float64, 4), MapW: 2, MapH: 2},
		"short frame":   {GT: Frame{RGB: make([]byte, 5), W: 8, H: 8}, Out: ok},
		"short map":     {GT: ok, Out: ok, SSIMMap: make([]float64, 3), MapW: 2, MapH: 2},
	} {
		if _, err := Render(f); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWriteIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.html")
	err := WriteIndex(path, "Consistency failures: <suite>", []Entry{{
		Case: "t2v", Index: 2, Of: 2,
		Lines:    []string{"consistency.ssim fail: min SSIM 0.41 at frame 7 of 16 & more"},
		Pictures: []string{"t2v/request-2/consistency-frame-7.png"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{
		`<img src="t2v/request-2/consistency-frame-7.png"`,
		"t2v — request 2/2",
		"0.41 at frame 7 of 16 &amp; more",
		"Consistency failures: &lt;suite&gt;",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("index.html lacks %q:\n%s", want, b)
		}
	}
}
