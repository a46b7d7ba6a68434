package pictures

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
)

// glyph draws r alone and returns its pixels.
func glyph(t *testing.T, face font.Face, r rune) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	text(img, face, 8, 22, string(r), color.Black)
	return img.Pix
}

// TestTheFaceDrawsTheSymbolsOfLimitsAsGlyphs: ≥, ≤, × and − are drawn as glyphs of their
// own, not as the box the font draws for a rune it lacks (its notdef glyph, drawn here for
// a private-use rune no font of text has); with basicfont, which the pictures used before,
// they all come out as that box.
func TestTheFaceDrawsTheSymbolsOfLimitsAsGlyphs(t *testing.T) {
	face, err := Face()
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	const missing = '\uE000'
	notdef := glyph(t, face, missing)
	blank := glyph(t, face, ' ')
	seen := map[string]rune{}
	for _, r := range []rune{'≥', '≤', '×', '−'} {
		g := glyph(t, face, r)
		if bytes.Equal(g, notdef) {
			t.Errorf("%c is drawn as the font's notdef box", r)
		}
		if bytes.Equal(g, blank) {
			t.Errorf("%c is drawn as nothing", r)
		}
		if other, ok := seen[string(g)]; ok {
			t.Errorf("%c and %c are drawn alike", r, other)
		}
		seen[string(g)] = r
	}
	// The old face: every one of them is its box, so the test above can fail.
	old := basicfont.Face7x13
	if !bytes.Equal(glyph(t, old, '≥'), glyph(t, old, missing)) || !bytes.Equal(glyph(t, old, '≤'), glyph(t, old, missing)) {
		t.Error("basicfont draws ≥ or ≤ unlike a rune it lacks: the comparison proves nothing")
	}
}

// TestShrinkFitsWidthAndBytes: a wide failure picture comes out at most maxWidth across and
// under maxBytes (scaled down further when needed), as a PNG; what is not a PNG, or claims
// more pixels than a failure picture has, is refused before it is decoded.
func TestShrinkFitsWidthAndBytes(t *testing.T) {
	noise := frame(480, 270, func(x, y int) byte { return byte((x*7919 + y*104729) % 251) })
	f := Failure{Title: "t2i request 2/2: frame 7 of 16", Lines: []Line{{Text: "consistency.ssim fail: min SSIM 0.72 (limit ≥ 0.92)", Bad: true}},
		GT: noise, Out: noise, SSIMMap: make([]float64, 474*264), MapW: 474, MapH: 264}
	img, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ maxWidth, maxBytes int }{{900, 4 << 20}, {900, 150 << 10}} {
		out, err := Shrink(b.Bytes(), tt.maxWidth, tt.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(out))
		if err != nil || cfg.Width > tt.maxWidth || len(out) > tt.maxBytes {
			t.Errorf("max %d px, %d bytes: got %dx%d, %d bytes, %v", tt.maxWidth, tt.maxBytes, cfg.Width, cfg.Height, len(out), err)
		}
		if tt.maxBytes < 1<<20 && cfg.Width >= tt.maxWidth {
			t.Errorf("under %d bytes without scaling further: %d px", tt.maxBytes, cfg.Width)
		}
	}
	if _, err := Shrink([]byte("GIF89a"), 900, 1<<20); err == nil {
		t.Error("took a GIF")
	}
	// A PNG header claiming 100000×100000 pixels: refused from its header.
	huge := append([]byte{}, b.Bytes()[:33]...)
	huge[16], huge[17], huge[18], huge[19] = 0, 1, 0x86, 0xa0
	huge[20], huge[21], huge[22], huge[23] = 0, 1, 0x86, 0xa0
	binary.BigEndian.PutUint32(huge[29:33], crc32.ChecksumIEEE(huge[12:29]))
	if _, err := Shrink(huge, 900, 1<<20); err == nil || !strings.Contains(err.Error(), "100000x100000 pixels") {
		t.Errorf("a PNG of 100000×100000 pixels: err = %v", err)
	}
}
