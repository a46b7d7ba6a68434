package media

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// exhaustiveYUV writes 64 frames of 1024×256 yuv420p in which every (y, u, v) triple occurs:
// the 512×128 chroma samples are all 65536 (u, v) pairs and frame f gives the 2×2 luma block
// of each the values 4f … 4f+3.
func exhaustiveYUV() []byte {
	const w, h = 1024, 256
	var out []byte
	for f := range 64 {
		frame := make([]byte, w*h*3/2)
		yp, up, vp := frame[:w*h], frame[w*h:w*h*5/4], frame[w*h*5/4:]
		for i := range w / 2 * h / 2 {
			cx, cy := i%(w/2), i/(w/2)
			up[i], vp[i] = byte(i), byte(i>>8)
			for k := range 4 {
				yp[(2*cy+k/2)*w+2*cx+k%2] = byte(4*f + k)
			}
		}
		out = append(out, frame...)
	}
	return out
}

// TestYUVToRGBMatchesFFmpeg converts every (y, u, v) triple with ffmpeg's default yuv420p →
// rgb24 conversion (the one OpenFrames used to ask for) and with ours, for each colour matrix
// the Go path accepts.
func TestYUVToRGBMatchesFFmpeg(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	const w, h = 1024, 256
	src := exhaustiveYUV()
	in := filepath.Join(t.TempDir(), "all.yuv")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, space := range []string{"", "bt470bg", "smpte170m", "bt709"} {
		c, ok := yuvEligible("yuv420p", space, "tv", w, h)
		if !ok {
			t.Fatalf("%q not eligible", space)
		}
		args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "1024x256", "-i", in}
		if space != "" {
			args = append(args, "-vf", "setparams=colorspace="+space+":range=tv")
		}
		args = append(args, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1")
		want, err := exec.Command("ffmpeg", args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		fs, fd := w*h*3/2, 3*w*h
		if len(want) != 64*fd {
			t.Fatalf("%s: ffmpeg gave %d bytes", space, len(want))
		}
		got := make([]byte, fd)
		for f := range 64 {
			for name, conv := range converters() {
				clear(got)
				conv(got, src[f*fs:][:fs], w, h, &c)
				if exp := want[f*fd:][:fd]; !bytes.Equal(got, exp) {
					for i := range got {
						if got[i] != exp[i] {
							p := i / 3
							t.Fatalf("%s %s frame %d pixel (%d,%d) channel %d: got %d, ffmpeg %d", space, name, f, p%w, p/w, i%3, got[i], exp[i])
						}
					}
				}
			}
		}
	}
}

// converters are the converters of every kernel level this build and CPU run, by level name
// (./scripts/test runs the package once per level: see the comments there).
func converters() map[string]func([]byte, []byte, int, int, *yuvCoeffs) {
	m := map[string]func([]byte, []byte, int, int, *yuvCoeffs){}
	for _, l := range kernel.Supported() {
		conv, _ := yuvConverter(l)
		m[l.String()] = func(dst, src []byte, w, h int, c *yuvCoeffs) { yuv420ToRGB(dst, src, w, h, c, conv) }
	}
	return m
}

// TestYUVVectorMatchesPortable checks every vector converter this CPU runs against the portable
// one on random frames of widths that end inside a 32- or 64-pixel step, also after a
// destination buffer full of garbage (every byte must be written).
func TestYUVVectorMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c, _ := yuvEligible("yuv420p", "bt709", "", 16, 2)
	for name, conv := range converters() {
		for _, w := range []int{16, 32, 48, 64, 80, 96, 112, 128, 208, 1280, 1296} {
			h := 6
			src := make([]byte, w*h*3/2)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			a, b := make([]byte, 3*w*h), make([]byte, 3*w*h)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			yuv420ToRGB(a, src, w, h, &c, yuvRowPortable)
			conv(b, src, w, h, &c)
			if !bytes.Equal(a, b) {
				t.Errorf("width %d: %s and portable differ", w, name)
			}
		}
	}
}

// TestRowsMatchRGB: RawFormat.Rows gives, row by row into a ring of a few rows, exactly what
// RGB gives for the whole frame, for yuv420p frames of both matrices (the converter of the
// selected kernel: ./scripts/test runs the package at every level) and for rgb24 frames; each
// row stays as returned while the ring's other slots are filled; and it returns nil past the
// frame, for a raw frame of another size, and without room for a row.
func TestRowsMatchRGB(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const w, h, slots = 96, 20, 8
	for _, space := range []string{"", "bt709", "rgb24"} {
		c, _ := yuvEligible("yuv420p", space, "", w, h)
		f := RawFormat{w: w, h: h, yuv: space != "rgb24", coef: c}
		raw := make([]byte, f.Size())
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		whole := f.RGB(make([]byte, 3*w*h), raw)
		ring := make([]byte, slots*3*w)
		rows := f.Rows(raw, ring)
		var held [slots][]byte
		for r := range h {
			held[r%slots] = rows(r)
			for k := max(0, r-slots+1); k <= r; k++ { // every row still held is intact
				if !bytes.Equal(held[k%slots], whole[3*w*k:3*w*(k+1)]) {
					t.Fatalf("%q: row %d differs from RGB's once row %d was asked for", space, k, r)
				}
			}
		}
		for _, r := range []int{-1, h} {
			if got := rows(r); got != nil {
				t.Errorf("%q: row %d of %d gives %d bytes, want nil", space, r, h, len(got))
			}
		}
		if got := f.Rows(raw[1:], ring)(0); got != nil {
			t.Errorf("%q: a raw frame a byte short gives a row", space)
		}
		if f.yuv {
			if got := f.Rows(raw, ring[:3*w-1])(0); got != nil {
				t.Errorf("%q: a ring without room for a row gives a row", space)
			}
		}
	}
}

// BenchmarkYUVToRGB720p converts a 1280×720 frame with every converter this CPU runs and
// reports each against the portable one timed in the same sub-benchmark (x-portable).
func BenchmarkYUVToRGB720p(b *testing.B) {
	const w, h = 1280, 720
	src := make([]byte, w*h*3/2)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, 3*w*h)
	c, _ := yuvEligible("yuv420p", "", "", w, h)
	for _, l := range kernel.Supported() {
		conv, _ := yuvConverter(l)
		b.Run(l.String(), func(b *testing.B) {
			b.SetBytes(3 * w * h)
			t0 := time.Now()
			for b.Loop() {
				yuv420ToRGB(dst, src, w, h, &c, conv)
			}
			per := time.Since(t0).Seconds() / float64(b.N)
			b.StopTimer()
			const anchorFrames = 10
			t1 := time.Now()
			for range anchorFrames {
				yuv420ToRGB(dst, src, w, h, &c, yuvRowPortable)
			}
			if anchor := time.Since(t1).Seconds() / anchorFrames; per > 0 {
				b.ReportMetric(anchor/per, "x-portable")
			}
		})
	}
}

// frameHashes decodes every frame of path with a whole reader and returns their SHA-256 sums,
// and whether the reader used the yuv420p path. spoil, when set, says that this process found
// both matrices' constants to convert differently from ffmpeg (the reader must then take rgb24).
func frameHashes(t *testing.T, path string, yuv, spoil bool) (sums []string, usedYUV bool) {
	t.Helper()
	if spoil {
		for _, space := range []string{"", "bt709"} {
			c, _ := yuvEligible("yuv420p", space, "", 16, 2)
			saved, known := yuvVerdicts.Load(c)
			yuvVerdicts.Store(c, false)
			defer func() {
				if yuvVerdicts.Delete(c); known {
					yuvVerdicts.Store(c, saved)
				}
			}()
		}
	}
	r, err := OnPath().OpenFramesWith(t.Context(), path, DecodeOptions{Whole: true, noYUV: !yuv})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	usedYUV = r.yuv != nil
	w, h := r.Size()
	buf := make([]byte, 3*w*h)
	for {
		if err := r.Next(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return sums, usedYUV
			}
			t.Fatal(err)
		}
		sums = append(sums, fmt.Sprintf("%x", sha256.Sum256(buf)))
	}
}

// TestYUVPathBitIdentical decodes videos through the rgb24 path (ffmpeg converts) and the
// yuv420p path (Go converts) and requires every frame to be identical, also when the first-frame
// check has to fall back.
func TestYUVPathBitIdentical(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	dir := t.TempDir()
	q := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"}
	videos := map[string][]string{
		// Like bench/compare.sh's output: moving detail, noise; untagged (BT.601).
		"noise.mp4": {
			"testsrc2=size=320x240:rate=24,noise=alls=8:allf=t",
			"-frames:v",
			"30",
			"-c:v",
			"libx264",
			"-preset",
			"veryfast",
			"-crf",
			"18",
			"-pix_fmt",
			"yuv420p",
		},
		// Tagged BT.709, saturated colours.
		// Not yuv420p: a whole reader's early yuv420p decoder must give way to rgb24.
		"yuv444p.mp4": {"testsrc2=size=96x64:rate=10", "-frames:v", "6", "-c:v", "libx264", "-crf", "10", "-pix_fmt", "yuv444p"},
		"bt709.mp4": {
			"smptehdbars=size=208x120:rate=10,noise=alls=20:allf=t",
			"-frames:v",
			"12",
			"-c:v",
			"libx264",
			"-crf",
			"10",
			"-pix_fmt",
			"yuv420p",
			"-colorspace",
			"bt709",
			"-color_primaries",
			"bt709",
			"-color_trc",
			"bt709",
		},
	}
	for name, args := range videos {
		path := filepath.Join(dir, name)
		if out, err := exec.Command("ffmpeg", append(append(q, args[0]), append(args[1:], path)...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
		want, _ := frameHashes(t, path, false, false)
		got, used := frameHashes(t, path, true, false)
		if want420 := name != "yuv444p.mp4"; yuvVector() && used != want420 {
			t.Errorf("%s: the yuv420p path taken: %v, want %v", name, used, want420)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: frames differ between the yuv420p and rgb24 paths", name)
		}
		spoilt, used := frameHashes(t, path, true, true)
		if used {
			t.Errorf("%s: spoilt constants were not caught by the first-frame check", name)
		}
		if !slices.Equal(spoilt, want) {
			t.Errorf("%s: after falling back, frames differ from the rgb24 path", name)
		}
		if len(want) == 0 {
			t.Errorf("%s: no frames", name)
		}
		if !yuvVector() || name == "yuv444p.mp4" {
			continue
		}
		// The proof at the end of the stream catches constants that convert differently
		// from ffmpeg: the stream ends with ErrYUVDiffers, and the verdict is remembered.
		r, err := OnPath().OpenFramesWith(t.Context(), path, DecodeOptions{Whole: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.yuv == nil || r.d.proof == nil {
			t.Fatalf("%s: a whole reader did not take the yuv420p path with its proof", name)
		}
		r.coef.vr++
		bad := r.coef
		buf := make([]byte, 3*r.w*r.h)
		for err == nil {
			err = r.Next(buf)
		}
		r.Close()
		if !errors.Is(err, ErrYUVDiffers) {
			t.Errorf("%s: spoilt constants: the stream ended with %v, want ErrYUVDiffers", name, err)
		}
		if proven, known := verdict(bad); proven || !known {
			t.Errorf("%s: spoilt constants: verdict proven %v, known %v; want false, true", name, proven, known)
		}
		yuvVerdicts.Delete(bad)
	}
}

// TestOnlyProvenConstantsSkipTheProof: a reader that may stop early (not Whole) takes the
// yuv420p path only for constants this process has proven, and then without a proof; a whole
// reader proves them at the end of its stream.
func TestOnlyProvenConstantsSkipTheProof(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	if !yuvVector() {
		t.Skip("no vector yuv420p converter in this build or CPU")
	}
	path := testVideo(t, "v.mp4", 64, 48, 5)
	c, _ := yuvEligible("yuv420p", "", "", 64, 48)
	saved, known := yuvVerdicts.Load(c)
	yuvVerdicts.Delete(c)
	defer func() {
		if yuvVerdicts.Delete(c); known {
			yuvVerdicts.Store(c, saved)
		}
	}()
	open := func(whole bool) *FrameReader {
		t.Helper()
		r, err := OnPath().OpenFramesWith(t.Context(), path, DecodeOptions{Whole: whole})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return r
	}
	if r := open(false); r.yuv != nil {
		t.Error("a partial reader took the yuv420p path before the constants were proven")
	}
	r := open(true)
	if r.yuv == nil || r.d.proof == nil {
		t.Fatal("a whole reader did not take the yuv420p path with its proof")
	}
	buf := make([]byte, 3*64*48)
	for {
		err := r.Next(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if proven, known := verdict(c); !proven || !known {
		t.Fatalf("after a whole read: verdict proven %v, known %v; want true, true", proven, known)
	}
	if r := open(false); r.yuv == nil || r.d.proof != nil {
		t.Error("a partial reader did not take the yuv420p path, without a proof, once the constants were proven")
	}
}

// TestProofHoldsOneFrame: a proof frame larger than the probed size (here an ffmpeg wrapper
// scales it up 4×, as a file whose frames are not the size it announces could) is read only to
// one byte past a frame, fails, and ends the stream with ErrYUVDiffers.
func TestProofHoldsOneFrame(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	if !yuvVector() {
		t.Skip("no vector yuv420p converter in this build or CPU")
	}
	const w, h, n = 64, 48, 5
	path := testVideo(t, "v.mp4", w, h, n)
	c, _ := yuvEligible("yuv420p", "", "", w, h)
	saved, known := yuvVerdicts.Load(c)
	defer func() {
		if yuvVerdicts.Delete(c); known {
			yuvVerdicts.Store(c, saved)
		}
	}()
	bin := mediatest.ProofWrapper(t, "", "-s", "256x192")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r, err := OnPath().OpenFramesWith(t.Context(), path, DecodeOptions{Whole: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.yuv == nil || r.d.proof == nil {
		t.Fatal("a whole reader did not take the yuv420p path with its proof")
	}
	buf := make([]byte, 3*w*h)
	for i := range n {
		if err := r.Next(buf); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	<-r.d.proof.done // ffmpeg wrote the proof after the last frame, and exited
	if got, most := len(r.d.proof.rgb), 3*w*h+1; got > most {
		t.Errorf("the proof holds %d bytes, want at most %d", got, most)
	}
	if err := r.Next(buf); !errors.Is(err, ErrYUVDiffers) {
		t.Errorf("after the last frame: %v, want ErrYUVDiffers", err)
	}
}
