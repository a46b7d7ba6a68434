package compare

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// rawFrameBytes returns the size of one frame of path as a FrameReader receives it: what a
// Cache keeps per frame (yuv420p where this build and CPU convert it in Go, else rgb24).
func rawFrameBytes(t *testing.T, path string) int64 {
	t.Helper()
	r, err := media.OnPath().OpenFramesWith(t.Context(), path, media.DecodeOptions{Whole: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return int64(r.Format().Size())
}

// truncated writes the first two thirds of the file src as name: a video that stops decoding
// part of the way.
func truncated(t *testing.T, src, name string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCacheVideos compares several outputs with one ground truth through a cache that keeps
// it (the first comparison decodes it, the next ones reuse it) and through one too small to
// keep it (every comparison decodes it): both give exactly the results of Videos, and shape
// mismatches fail as without a cache.
func TestCacheVideos(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	w, h, n := 64, 48, 10
	gt := video(t, "gt.mp4", w, h, n, nil)
	outs := []string{
		video(t, "drift.mp4", w, h, n, map[int]bool{3: true}),
		gt,
		video(t, "drift2.mp4", w, h, n, map[int]bool{8: true}),
	}
	var want []Result
	for _, out := range outs {
		res, err := Videos(t.Context(), gt, out)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}
	whole := int64(n) * rawFrameBytes(t, gt)
	for _, tc := range []struct {
		name      string
		cap, kept int64
	}{
		{"kept", DefaultCacheBytes, whole},
		{"exactly fits", whole, whole},
		{"over the cap", whole - 1, 0},
		{"no cache", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(tc.cap, Helpers{})
			for round := range 2 {
				for i, out := range outs {
					got, err := c.Files(t.Context(), gt, out)
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(want[i], got); d != "" {
						t.Errorf("round %d, %s (-uncached +cached):\n%s", round, filepath.Base(out), d)
					}
					if b := c.Bytes(); b != tc.kept {
						t.Errorf("round %d, %s: cache holds %d bytes, want %d", round, filepath.Base(out), b, tc.kept)
					}
				}
			}
			var mm *MismatchError
			_, err := c.Videos(t.Context(), gt, video(t, "short.mp4", w, h, 7, nil))
			if !errors.As(err, &mm) || !strings.Contains(err.Error(), "frame count: ground truth 10, output 7") {
				t.Errorf("fewer frames: %v", err)
			}
			_, err = c.Videos(t.Context(), gt, video(t, "long.mp4", w, h, 13, nil))
			if !errors.As(err, &mm) || !strings.Contains(err.Error(), "frame count: ground truth 10, output 13") {
				t.Errorf("more frames: %v", err)
			}
			_, err = c.Videos(t.Context(), gt, video(t, "wide.mp4", 80, h, n, nil))
			if !errors.As(err, &mm) || !strings.Contains(err.Error(), "size: ground truth 64x48, output 80x48") {
				t.Errorf("other size: %v", err)
			}
			// Frames for pictures come from the cache when it holds the video, the same bytes.
			for _, i := range []int{0, 6, n - 1} {
				a, aw, ah, err := FrameAt(t.Context(), gt, i)
				if err != nil {
					t.Fatal(err)
				}
				b, bw, bh, err := c.FrameAt(t.Context(), gt, i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) || aw != bw || ah != bh {
					t.Errorf("frame %d from the cache differs from the decoded one", i)
				}
			}
			if _, _, _, err := c.FrameAt(t.Context(), gt, n); err == nil || !strings.Contains(err.Error(), "has 10 frames") {
				t.Errorf("FrameAt past the end: %v", err)
			}
		})
	}
}

// TestCacheFirstComparisonFails: a first comparison that stops before the ground truth's end
// (an output of another size) keeps nothing; one whose output fails to decode after the
// ground truth did (a cut output: the ground truth is read to its end to count it) keeps it.
func TestCacheFirstComparisonFails(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	gt := video(t, "gt.mp4", 64, 48, 24, nil)
	cut := truncated(t, gt, "cut.mp4")
	c := NewCache(DefaultCacheBytes, Helpers{})
	var mm *MismatchError
	if _, err := c.Videos(t.Context(), gt, video(t, "wide.mp4", 80, 48, 24, nil)); !errors.As(err, &mm) {
		t.Errorf("other size: %v, want a mismatch", err)
	}
	if b := c.Bytes(); b != 0 {
		t.Errorf("after a size mismatch the cache holds %d bytes, want 0", b)
	}
	if _, err := c.Videos(t.Context(), gt, cut); err == nil || errors.As(err, &mm) || !strings.Contains(err.Error(), "cut.mp4") {
		t.Errorf("cut output: %v, want a decode error naming it", err)
	}
	want := 24 * rawFrameBytes(t, gt)
	if b := c.Bytes(); b != want {
		t.Errorf("the cache holds %d bytes, want %d", b, want)
	}
	if res, err := c.Videos(t.Context(), gt, gt); err != nil || res.MinSSIM != 1 || res.Frames != 24 {
		t.Errorf("from the cache: %v, %+v", err, res)
	}
}

// TestCacheBrokenGroundTruth: a ground truth that does not decode fails every comparison,
// naming it; nothing is kept.
func TestCacheBrokenGroundTruth(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	good := video(t, "good.mp4", 64, 48, 24, nil)
	gt := truncated(t, good, "cut-gt.mp4")
	c := NewCache(DefaultCacheBytes, Helpers{})
	for range 2 {
		if _, err := c.Videos(t.Context(), gt, good); err == nil || !strings.Contains(err.Error(), "cut-gt.mp4") {
			t.Errorf("broken ground truth: %v, want an error naming it", err)
		}
	}
	if b := c.Bytes(); b != 0 {
		t.Errorf("the cache holds %d bytes, want 0", b)
	}
}

// TestCacheConcurrent compares outputs with one ground truth from several goroutines at once,
// as a case's concurrent requests do: one decodes it, the others wait and reuse it.
func TestCacheConcurrent(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	w, h, n := 64, 48, 8
	gt := video(t, "gt.mp4", w, h, n, nil)
	out := video(t, "out.mp4", w, h, n, map[int]bool{2: true})
	want, err := Videos(t.Context(), gt, out)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(DefaultCacheBytes, Helpers{})
	var wg sync.WaitGroup
	results := make([]Result, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = c.Videos(t.Context(), gt, out) })
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if d := cmp.Diff(want, results[i]); d != "" {
			t.Errorf("comparison %d (-uncached +cached):\n%s", i, d)
		}
	}
	if b, want := c.Bytes(), int64(n)*rawFrameBytes(t, gt); b != want {
		t.Errorf("the cache holds %d bytes, want %d", b, want)
	}
}

// TestCacheImages keeps still images (a ground-truth image, SGLang's key frames) decoded.
func TestCacheImages(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	w, h, n := 64, 48, 9
	a := make([]byte, 3*w*h)
	scene(w, h, nil)(0, a)
	b := make([]byte, len(a))
	scene(w, h, map[int]bool{0: true})(0, b)
	gt, other := pngFile(t, "gt.png", a, w, h), pngFile(t, "other.png", b, w, h)
	want, err := Images(t.Context(), gt, other)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(DefaultCacheBytes, Helpers{})
	for range 2 {
		got, err := c.Files(t.Context(), gt, other)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-uncached +cached):\n%s", d)
		}
	}
	if got := c.Bytes(); got != int64(3*w*h) {
		t.Errorf("the cache holds %d bytes, want %d", got, 3*w*h)
	}
	tiny := NewCache(int64(3*w*h)-1, Helpers{})
	got, err := tiny.Images(t.Context(), gt, other)
	if err != nil || cmp.Diff(want, got) != "" || tiny.Bytes() != 0 {
		t.Errorf("over the cap: %v, %d bytes kept, diff %s", err, tiny.Bytes(), cmp.Diff(want, got))
	}

	vid := video(t, "v.mp4", w, h, n, nil)
	keys := map[int]string{}
	for key, idx := range map[int]int{FrameFirst: 0, FrameMid: n / 2, FrameLast: n - 1} {
		rgb, _, _, err := FrameAt(t.Context(), vid, idx)
		if err != nil {
			t.Fatal(err)
		}
		keys[key] = pngFile(t, "key.png", rgb, w, h)
	}
	out := video(t, "out.mp4", w, h, n, map[int]bool{n / 2: true})
	wantKeys, err := uncached.KeyFrames(t.Context(), keys, out)
	if err != nil {
		t.Fatal(err)
	}
	kc := NewCache(DefaultCacheBytes, Helpers{})
	for range 2 {
		got, err := kc.KeyFrames(t.Context(), keys, out)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wantKeys, got); d != "" {
			t.Errorf("key frames (-uncached +cached):\n%s", d)
		}
	}
	if got := kc.Bytes(); got != int64(3*3*w*h) {
		t.Errorf("the key-frame cache holds %d bytes, want %d", got, 3*3*w*h)
	}
}

// cpuNanos returns the CPU time, user and system, of this process and of its children that
// ended (the ffmpeg and ffprobe runs): on a loaded machine it says more than the wall time.
func cpuNanos() (self, children int64) {
	var s, c syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &s) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c) != nil {
		return 0, 0
	}
	return s.Utime.Nano() + s.Stime.Nano(), c.Utime.Nano() + c.Stime.Nano()
}

// benchVideos makes bench/compare.sh's videos (deterministic: fixed sources, seeds and x264
// settings): a 97-frame 1280×720 H.264 ground truth of ffmpeg's testsrc2 and n outputs, each
// the same with a slight brightness/contrast change and light temporal noise of its own seed.
func benchVideos(b *testing.B, n int) (gt string, outs []string) {
	b.Helper()
	mediatest.NeedFFmpeg(b)
	dir := b.TempDir()
	q := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}
	enc := []string{"-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p"}
	run := func(args ...string) {
		if out, err := exec.CommandContext(b.Context(), "ffmpeg", append(q, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
		}
	}
	gt = filepath.Join(dir, "gt.mp4")
	run(slices.Concat([]string{"-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=24", "-frames:v", "97"}, enc, []string{gt})...)
	for k := range n {
		out := filepath.Join(dir, fmt.Sprintf("out%d.mp4", k+1))
		run(
			slices.Concat([]string{"-i", gt, "-vf", fmt.Sprintf("eq=brightness=0.0%d:contrast=1.0%d,noise=alls=3:allf=t:all_seed=%d", k+2, k+3, k+1)},
				enc, []string{out})...)
		outs = append(outs, out)
	}
	return gt, outs
}

// BenchmarkTwoRequests times the video comparisons of a case of two requests, each output
// compared with the same 97-frame 1280×720 H.264 ground truth (bench/compare.sh's videos):
// decode-each decodes the ground truth for each request (as the runner did before Cache),
// gt-once through a Cache, as the runner does now. cpu-ns/op counts ffmpeg's and ffprobe's
// CPU too; ffmpeg-cpu-ns/op is theirs alone.
func BenchmarkTwoRequests(b *testing.B) {
	gt, outs := benchVideos(b, 2)
	for _, mode := range []struct {
		name  string
		cache func() *Cache
	}{
		{"decode-each", func() *Cache { return nil }},
		{"gt-once", func() *Cache { return NewCache(DefaultCacheBytes, Helpers{}) }},
	} {
		b.Run(mode.name, func(b *testing.B) {
			s0, c0 := cpuNanos()
			for b.Loop() {
				c := mode.cache()
				for _, out := range outs {
					if _, err := c.Videos(b.Context(), gt, out); err != nil {
						b.Fatal(err)
					}
				}
			}
			s1, c1 := cpuNanos()
			b.ReportMetric(float64(s1-s0+c1-c0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(c1-c0)/float64(b.N), "ffmpeg-cpu-ns/op")
		})
	}
}
