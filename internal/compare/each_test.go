package compare

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// errText is an error's message, "" for none: errors compare by what they say.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestVideosEachIsVideos: comparing several outputs in one pass (VideosEach, FilesEach) gives,
// for each output, exactly the result or the error of comparing it alone, whatever the others
// do (end early, run longer, differ in size, fail to decode, are images): with no cache, with
// the ground truth kept, and with outputs kept by Output.
func TestVideosEachIsVideos(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	w, h, n := 64, 48, 10
	gt := video(t, "gt.mp4", w, h, n, nil)
	junk := filepath.Join(t.TempDir(), "junk.mp4")
	if err := os.WriteFile(junk, []byte("not a video at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	rgb, _, _, err := FrameAt(t.Context(), gt, 0)
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{
		video(t, "drift.mp4", w, h, n, map[int]bool{3: true}),
		video(t, "short.mp4", w, h, 7, nil),
		gt,
		video(t, "wide.mp4", 80, h, n, nil),
		junk,
		video(t, "long.mp4", w, h, 13, map[int]bool{1: true}),
		pngFile(t, "still.png", rgb, w, h),
		video(t, "drift2.mp4", w, h, n, map[int]bool{8: true}),
	}
	var want []Result
	var wantErr []string
	for _, out := range outs {
		res, err := uncached.Files(t.Context(), gt, out)
		want, wantErr = append(want, res), append(wantErr, errText(err))
	}
	var mm *MismatchError
	if _, err := uncached.Files(t.Context(), gt, outs[1]); !errors.As(err, &mm) {
		t.Fatalf("the short output: %v, want a mismatch", err)
	}
	for _, tc := range []struct {
		name  string
		cache func(t *testing.T) *Cache
	}{
		{"no cache", func(*testing.T) *Cache { return nil }},
		{"ground truth kept", func(t *testing.T) *Cache {
			c := NewCache(DefaultCacheBytes, Helpers{})
			if _, err := c.Videos(t.Context(), gt, outs[0]); err != nil {
				t.Fatal(err)
			}
			return c
		}},
		{"outputs kept", func(t *testing.T) *Cache {
			c := NewCache(DefaultCacheBytes, Helpers{})
			for _, out := range []string{outs[0], outs[1], outs[5]} {
				if _, err := c.Output(t.Context(), out); err != nil {
					t.Fatal(err)
				}
			}
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := tc.cache(t).FilesEach(t.Context(), gt, outs)
			for k, out := range outs {
				if d := cmp.Diff(wantErr[k], errText(errs[k])); d != "" {
					t.Errorf("%s: error (-alone +together):\n%s", filepath.Base(out), d)
				}
				if d := cmp.Diff(want[k], got[k]); d != "" {
					t.Errorf("%s: result (-alone +together):\n%s", filepath.Base(out), d)
				}
			}
		})
	}
}
