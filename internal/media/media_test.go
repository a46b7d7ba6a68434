package media_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// gradient fills a w×h rgb24 frame with a pattern that moves with i.
func gradient(w, h int) func(i int, rgb []byte) {
	return func(i int, rgb []byte) {
		for y := range h {
			for x := range w {
				p := 3 * (y*w + x)
				rgb[p] = byte(x*255/w + 4*i)
				rgb[p+1] = byte(y * 255 / h)
				rgb[p+2] = byte((x + y + 8*i) / 2)
			}
		}
	}
}

var tones = &media.ToneSpec{Tones: []media.Tone{{FreqHz: 440, Amplitude: 0.3}, {FreqHz: 660, Amplitude: 0.2, TremoloHz: 2, Pan: 0.5}}}

func encode(t *testing.T, name string, w, h, frames, fps int, audio *media.ToneSpec) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := media.OnPath().EncodeVideo(t.Context(), dst, w, h, frames, fps, gradient(w, h), audio); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestEncodeVideoProbe(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	for _, tc := range []struct {
		name           string
		w, h, n, fps   int
		audio          *media.ToneSpec
		wantDurationS  float64
		wantAudioCodec string
	}{
		{name: "video", w: 64, h: 48, n: 16, fps: 8, wantDurationS: 2},
		{name: "video+audio", w: 64, h: 48, n: 12, fps: 24, audio: tones, wantDurationS: 0.5, wantAudioCodec: "aac"},
		{name: "one frame", w: 32, h: 32, n: 1, fps: 8, wantDurationS: 0.125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := encode(t, "out.mp4", tc.w, tc.h, tc.n, tc.fps, tc.audio)
			info, err := media.OnPath().Probe(t.Context(), dst)
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != "h264" || info.Width != tc.w || info.Height != tc.h || info.Frames != tc.n || info.FPS != float64(tc.fps) {
				t.Errorf("got %+v, want h264 %dx%d, %d frames at %d fps", info, tc.w, tc.h, tc.n, tc.fps)
			}
			if d := info.DurationS - tc.wantDurationS; d < -0.01 || d > 0.01 {
				t.Errorf("duration %.3fs, want %.3fs", info.DurationS, tc.wantDurationS)
			}
			if info.Still() || !strings.Contains(info.Format, "mp4") {
				t.Errorf("format %q, want an mp4 video", info.Format)
			}
			if len(info.Warnings) > 0 {
				t.Errorf("warnings: %q", info.Warnings)
			}
			switch {
			case tc.audio == nil && info.Audio != nil:
				t.Errorf("audio %+v, want none", info.Audio)
			case tc.audio != nil && info.Audio == nil:
				t.Error("no audio stream")
			case tc.audio != nil:
				a := info.Audio
				if a.Codec != tc.wantAudioCodec || a.SampleRate != 48000 || a.Channels != 2 {
					t.Errorf("audio %+v, want aac 48000 Hz stereo", a)
				}
				// AAC works in 1024-sample frames: the track may be up to one frame longer.
				if d := a.DurationS - tc.wantDurationS; d < -0.001 || d > 0.03 {
					t.Errorf("audio duration %.3fs, want %.3fs", a.DurationS, tc.wantDurationS)
				}
			}
		})
	}
}

func TestEncodeVideoDeterministic(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	a := encode(t, "a.mp4", 96, 64, 10, 8, tones)
	b := encode(t, "b.mp4", 96, 64, 10, 8, tones)
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Fatalf("two encodes of the same frames differ (%d vs %d bytes)", len(ab), len(bb))
	}
}

func TestEncodeVideoErrors(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	dir := t.TempDir()
	noop := func(int, []byte) {}
	for _, tc := range []struct {
		name, dst    string
		w, h, n, fps int
		want         string
	}{
		{"odd size", filepath.Join(dir, "a.mp4"), 63, 48, 4, 8, "must be even"},
		{"no frames", filepath.Join(dir, "b.mp4"), 64, 48, 0, 8, "need at least one"},
		{"no fps", filepath.Join(dir, "c.mp4"), 64, 48, 4, 0, "fps 0"},
		{"bad dir", filepath.Join(dir, "missing", "d.mp4"), 64, 48, 4, 8, "ffmpeg:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := media.OnPath().EncodeVideo(t.Context(), tc.dst, tc.w, tc.h, tc.n, tc.fps, noop, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if _, serr := os.Stat(tc.dst); serr == nil {
				t.Errorf("%s left behind", tc.dst)
			}
		})
	}
}

func TestEncodeVideoCancel(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ctx, cancel := context.WithCancel(t.Context())
	dst := filepath.Join(t.TempDir(), "x.mp4")
	err := media.OnPath().EncodeVideo(ctx, dst, 64, 64, 1000, 8, func(i int, rgb []byte) {
		if i == 3 {
			cancel()
		}
	}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{byte(x * 4), byte(y * 4), 128, 255})
		}
	}
	return img
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImagesProbe(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	img := testImage(40, 30)
	pngData, err := media.EncodePNG(img)
	if err != nil {
		t.Fatal(err)
	}
	jpegData, err := media.EncodeJPEG(img, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		data  []byte
		codec string
	}{
		{"x.png", pngData, "png"},
		{"x.jpg", jpegData, "mjpeg"},
	}
	if media.OnPath().HasEncoder("libwebp") {
		webp, err := media.OnPath().EncodeWebP(t.Context(), img, 0)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := media.OnPath().EncodeWebP(t.Context(), img, 0)
		if !bytes.Equal(webp, again) {
			t.Error("two webp encodes of one image differ")
		}
		tests = append(tests, struct {
			name  string
			data  []byte
			codec string
		}{"x.webp", webp, "webp"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := media.OnPath().Probe(t.Context(), writeFile(t, tc.name, tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != tc.codec || info.Width != 40 || info.Height != 30 || info.Frames != 1 || info.FPS != 0 || info.Audio != nil || !info.Still() {
				t.Errorf("got %+v, want a 40x30 %s still", info, tc.codec)
			}
		})
	}
}

func TestProbeBroken(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	mp4 := encode(t, "v.mp4", 64, 48, 16, 8, tones)
	data, _ := os.ReadFile(mp4)
	pngData, _ := media.EncodePNG(testImage(64, 64))
	audioOnly := filepath.Join(t.TempDir(), "a.m4a")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=f=440:d=0.3", "-c:a", "aac",
		audioOnly).CombinedOutput(); err != nil {
		t.Fatalf("make audio-only file: %v\n%s", err, out)
	}
	// Without +faststart the index sits at the end: cutting the file loses it.
	slow := filepath.Join(t.TempDir(), "slow.mp4")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", mp4, "-c", "copy", slow).CombinedOutput(); err != nil {
		t.Fatalf("remux: %v\n%s", err, out)
	}
	slowData, _ := os.ReadFile(slow)

	for _, tc := range []struct {
		name, path string
		want       string
		is         error
	}{
		{"empty", writeFile(t, "empty.mp4", nil), "empty file", nil},
		{"missing", filepath.Join(t.TempDir(), "nope.mp4"), "no such file", nil},
		{"garbage", writeFile(t, "junk.mp4", []byte("this is not a video")), "ffprobe:", nil},
		{"half faststart mp4", writeFile(t, "half.mp4", data[:len(data)/2]), "only", media.ErrTruncated},
		{"half plain mp4", writeFile(t, "half2.mp4", slowData[:len(slowData)/2]), "moov atom not found", nil},
		{"half png", writeFile(t, "half.png", pngData[:len(pngData)/2]), "chunk too big", media.ErrTruncated},
		{"audio only", audioOnly, "no video or image stream", media.ErrNoVideo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := media.OnPath().Probe(t.Context(), tc.path)
			if err == nil {
				t.Fatalf("got %+v, want an error", info)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "probe "+tc.path+": ") {
				t.Errorf("err = %q, want it to name the file and say %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
			if strings.Contains(err.Error(), " @ 0x") {
				t.Errorf("err = %q still carries ffmpeg's context prefix", err)
			}
		})
	}
}

func BenchmarkEncodeVideo(b *testing.B) {
	mediatest.NeedFFmpeg(b)
	for _, bc := range []struct {
		name         string
		w, h, n, fps int
		audio        *media.ToneSpec
	}{
		{"256x256x16+audio", 256, 256, 16, 8, tones},
		{"1280x720x97", 1280, 720, 97, 24, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dst := filepath.Join(b.TempDir(), "out.mp4")
			frame := gradient(bc.w, bc.h)
			for b.Loop() {
				if err := media.OnPath().EncodeVideo(b.Context(), dst, bc.w, bc.h, bc.n, bc.fps, frame, bc.audio); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEncodeLosslessVideoDecodesToTheSameBytes: the realtime client keeps streamed frames this
// way so that the key frames it compares are the server's, bit for bit (an odd size, which
// 4:2:0 could not hold, included).
func TestEncodeLosslessVideoDecodesToTheSameBytes(t *testing.T) {
	const w, h, n = 7, 5, 4
	want := make([][]byte, n)
	for i := range want {
		want[i] = make([]byte, 3*w*h)
		for j := range want[i] {
			want[i][j] = byte(j*31 + i*97)
		}
	}
	path := filepath.Join(t.TempDir(), "out.mkv")
	if err := media.OnPath().EncodeLosslessVideo(t.Context(), path, w, h, n, 8, func(i int, rgb []byte) { copy(rgb, want[i]) }); err != nil {
		t.Fatal(err)
	}
	r, err := media.OnPath().OpenFrames(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range n {
		got := make([]byte, 3*w*h)
		if err := r.Next(got); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, want[i]) {
			t.Errorf("frame %d decodes to other bytes than were encoded", i)
		}
	}
	if err := media.OnPath().EncodeLosslessVideo(t.Context(), path, 0, 5, 1, 8, func(int, []byte) {}); err == nil {
		t.Error("a 0-wide video was encoded")
	}
}
