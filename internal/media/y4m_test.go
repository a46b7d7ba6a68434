package media

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestY4MReader reads the framing of yuv4mpeg streams as ffmpeg writes them and as it must
// not: every frame's planes are where next leaves the reader, a clean end is io.EOF, an end
// inside a line io.ErrUnexpectedEOF, and a header or FRAME line that is not what was asked
// for an error that says what was found.
func TestY4MReader(t *testing.T) {
	const w, h = 4, 2
	planes := func(v byte) string { return string(bytes.Repeat([]byte{v}, w*h*3/2)) }
	header := "YUV4MPEG2 W4 H2 F24:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n"
	for _, tc := range []struct {
		name, stream string
		frames       int
		want         string // in the error after the frames; "" for io.EOF
		cut          bool   // the error is io.ErrUnexpectedEOF
	}{
		{"two frames", header + "FRAME\n" + planes(1) + "FRAME\n" + planes(2), 2, "", false},
		{"nothing decoded", "", 0, "", false},
		{"frame parameters, unknown fields, mpeg2 siting", "YUV4MPEG2 W4 H2 F25:1 It A0:0 C420mpeg2 XCOLORRANGE=LIMITED\n" +
			"FRAME Ixyz\n" + planes(3), 1, "", false},
		{"no C field (4:2:0 by default)", "YUV4MPEG2 W4 H2 F24:1 Ip A1:1\nFRAME\n" + planes(4), 1, "", false},
		{"rotated on decode", "YUV4MPEG2 W2 H4 F24:1 Ip A1:1 C420jpeg\nFRAME\n" + planes(5), 0, "ffmpeg sends 2x4 frames where the probe said 4x2", false},
		{"another chroma", "YUV4MPEG2 W4 H2 F24:1 Ip A1:1 C444\n", 0, "444, not the 4:2:0", false},
		{"not yuv4mpeg", "\x00\x00\x00\x00\n", 0, "not a yuv4mpeg stream", false},
		{"bad width", "YUV4MPEG2 Wfour H2\n", 0, "yuv4mpeg header", false},
		{"no size", "YUV4MPEG2 F24:1\n", 0, "gives no size", false},
		{"garbage for a frame", header + "FRAME\n" + planes(1) + "GARBAGE\n", 1, `"GARBAGE" where a frame starts`, false},
		{"header cut", "YUV4MPEG2 W4 H2", 0, "", true},
		{"frame line cut", header + "FRAME\n" + planes(1) + "FRA", 1, "", true},
		{"endless line", header + strings.Repeat("F", 5000), 0, "line of over 4096 bytes", false},
	} {
		y := newY4MReader(strings.NewReader(tc.stream))
		buf := make([]byte, w*h*3/2)
		var err error
		n := 0
		for ; ; n++ {
			if err = y.next(w, h); err != nil {
				break
			}
			if _, err = io.ReadFull(y.br, buf); err != nil {
				t.Fatalf("%s: frame %d planes: %v", tc.name, n, err)
			}
			if buf[0] == 0 || !bytes.Equal(buf, bytes.Repeat(buf[:1], len(buf))) {
				t.Errorf("%s: frame %d planes misread: %v", tc.name, n, buf)
			}
		}
		switch {
		case n != tc.frames:
			t.Errorf("%s: %d frames, want %d (%v)", tc.name, n, tc.frames, err)
		case tc.cut && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("%s: %v, want io.ErrUnexpectedEOF", tc.name, err)
		case !tc.cut && tc.want == "" && !errors.Is(err, io.EOF):
			t.Errorf("%s: %v, want io.EOF", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
