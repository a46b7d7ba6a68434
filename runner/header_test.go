package runner

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/suite"
)

// TestHeaderShapeFailsAHugeImageUndecoded: a PNG whose header says
// 16000×16000 for a 64×64 request is failed on its header alone; the file here has no pixel
// data at all, so any decode would fail differently. A PNG of the right size passes on to the
// decode.
func TestHeaderShapeFailsAHugeImageUndecoded(t *testing.T) {
	s, err := suite.Parse(filepath.Join(t.TempDir(), "suite.yaml"),
		[]byte("servers:\n  ref: {builtin: {}}\ncases:\n  - {id: a, server: ref, modality: image, request: {size: 64x64}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cases[0]
	var full bytes.Buffer
	if err := png.Encode(&full, image.NewNRGBA(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	// The signature and IHDR chunk of a 16000×16000 RGBA PNG, and no pixel data.
	ihdr := []byte{'I', 'H', 'D', 'R', 0, 0, 0x3e, 0x80, 0, 0, 0x3e, 0x80, 8, 6, 0, 0, 0}
	huge := binary.BigEndian.AppendUint32(append(append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13), ihdr...), crc32.ChecksumIEEE(ihdr))
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"huge": {huge, "16000x16000"},
		"fits": {full.Bytes(), ""},
	} {
		path := filepath.Join(dir, name+".png")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		problems, w, h := headerShapeProblems(c, path)
		got := strings.Join(problems, "; ")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s (%dx%d): problems %q, want %q", name, w, h, got, tc.want)
		}
	}
}
