package compare

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// moved renames path out of the way, so that a comparison that still tried to decode it would
// fail: what follows can only have read what the cache kept.
func moved(t *testing.T, path string) {
	t.Helper()
	if err := os.Rename(path, path+".gone"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Rename(path+".gone", path) })
}

// TestCacheOutputDecodesOnce: Cache.Output says what Probe says of an output (its frames
// counted by the decode), and the comparisons that follow (Videos, KeyFrames, FrameAt and, with
// OutputAudio, Audio) give exactly the results of decoding it again, while reading only the kept
// frames: they work with the file moved away. Forget gives the memory back. When the frames do
// not fit, nothing is kept and the comparisons decode the output as before.
func TestCacheOutputDecodesOnce(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	av := func(name, freq, noise string) string {
		return ffmpegFile(t, name, "-f", "lavfi", "-i", "testsrc=size=64x48:rate=8:duration=2",
			"-f", "lavfi", "-i", "sine=frequency="+freq+":duration=2:sample_rate=48000",
			"-vf", "noise=alls="+noise+":allf=t:all_seed=3", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac")
	}
	gt := av("gt.mp4", "440", "0")
	short := video(t, "short.mp4", 64, 48, 7, nil)
	keys := map[int]string{}
	for key, i := range map[int]int{FrameFirst: 0, FrameMid: 8, FrameLast: 15} {
		rgb, w, h, err := FrameAt(t.Context(), gt, i)
		if err != nil {
			t.Fatal(err)
		}
		keys[key] = pngFile(t, "key.png", rgb, w, h)
	}
	for _, tc := range []struct {
		name string
		cap  int64
		kept bool
	}{
		{"kept", DefaultCacheBytes, true},
		{"does not fit", 1000, false},
		{"no cache", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := av("out.mp4", "660", "6")
			wantInfo, err := media.OnPath().Probe(t.Context(), out)
			if err != nil {
				t.Fatal(err)
			}
			wantVideo, err := Videos(t.Context(), gt, out)
			if err != nil {
				t.Fatal(err)
			}
			wantKeys, err := uncached.KeyFrames(t.Context(), keys, out)
			if err != nil {
				t.Fatal(err)
			}
			wantAudio, err := Audio(t.Context(), gt, out)
			if err != nil {
				t.Fatal(err)
			}
			wantFrame, _, _, err := FrameAt(t.Context(), out, 11)
			if err != nil {
				t.Fatal(err)
			}

			c := NewCache(tc.cap, Helpers{})
			info, err := c.Output(t.Context(), out)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantInfo, info, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("Output's info differs from Probe's (-probe +output):\n%s", d)
			}
			if _, err := c.OutputAudio(t.Context(), out, info.Audio.Channels); err != nil {
				t.Fatal(err)
			}
			if tc.kept != (c.Bytes() > 0) {
				t.Fatalf("the cache holds %d bytes, want kept=%v", c.Bytes(), tc.kept)
			}
			if tc.kept {
				moved(t, out)
			}
			gotVideo, err := c.Videos(t.Context(), gt, out)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantVideo, gotVideo); d != "" {
				t.Errorf("Videos (-decoded +kept):\n%s", d)
			}
			gotKeys, err := c.KeyFrames(t.Context(), keys, out)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantKeys, gotKeys); d != "" {
				t.Errorf("KeyFrames (-decoded +kept):\n%s", d)
			}
			gotAudio, err := c.Audio(t.Context(), gt, out)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantAudio, gotAudio); d != "" {
				t.Errorf("Audio (-decoded +kept):\n%s", d)
			}
			gotFrame, _, _, err := c.FrameAt(t.Context(), out, 11)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantFrame, gotFrame); d != "" {
				t.Errorf("FrameAt: kept frame differs from the decoded one")
			}
			gtBytes := c.Bytes()
			c.Forget(out)
			if tc.kept && c.Bytes() >= gtBytes {
				t.Errorf("Forget: the cache holds %d bytes, as many as before (%d)", c.Bytes(), gtBytes)
			}
			c.Forget(gt)
			for _, k := range keys {
				c.Forget(k)
			}
			if c.Bytes() != 0 {
				t.Errorf("after forgetting every file, the cache holds %d bytes", c.Bytes())
			}

			// A shorter output is counted by its decode and fails as it would decoded again.
			info, err = c.Output(t.Context(), short)
			if err != nil || info.Frames != 7 {
				t.Fatalf("Output of a 7-frame video: %+v, %v", info, err)
			}
			var mm *MismatchError
			if _, err := c.Videos(t.Context(), gt, short); !errors.As(err, &mm) || !strings.Contains(err.Error(), "frame count: ground truth 16, output 7") {
				t.Errorf("shorter output: %v", err)
			}
		})
	}
	// A cut output is an error naming it, as Probe's is.
	cut := truncated(t, gt, "cut.mp4")
	if _, err := media.OnPath().Probe(t.Context(), cut); err == nil {
		t.Fatal("Probe accepts the cut file")
	}
	if _, err := NewCache(DefaultCacheBytes, Helpers{}).Output(t.Context(), cut); err == nil || !strings.Contains(err.Error(), filepath.Base(cut)) {
		t.Errorf("cut output: %v, want an error naming it", err)
	}
}
