package runner

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// repeatRun is a validator with what the repeat hook needs: the consistency config (no ground
// truth) and a recorder for the pictures.
func repeatRun(t *testing.T) *validator {
	t.Helper()
	cons, err := loadConsistency(Options{Suite: &suite.Suite{}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := results.NewWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close() })
	return &validator{rec: rec, cons: cons, logf: func(string, ...any) {}}
}

// pngRequest is request index of a case whose output is a w×h PNG of the given shade.
func pngRequest(t *testing.T, index, of, w, h int, shade uint8) *results.RequestResult {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), shade, uint8(y * 5), 255})
		}
	}
	b, err := media.EncodePNG(img)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "output.png")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return &results.RequestResult{Index: index, Of: of, Output: &results.Output{Kind: "image", Path: p, Format: "png"},
		Checks: []results.Check{{Name: results.OutputPresent, Status: results.Pass}, {Name: results.OutputValid, Status: results.Pass}}}
}

func names(cs []results.Check) map[string]results.Status {
	out := map[string]results.Status{}
	for _, c := range cs {
		out[c.Name] = c.Status
	}
	return out
}

// TestRepeatWaitsForRequest1: with the requests in flight at once, request 2 finishing first
// waits for request 1 and is then compared with it; request 1 gets no repeat check.
func TestRepeatWaitsForRequest1(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	r := repeatRun(t)
	c := &suite.Case{ID: "t2i", Modality: suite.Image, Repeat: 2, RepeatLimits: checks.DefaultRepeatLimits()}
	srv := &server{}
	one, two := pngRequest(t, 1, 2, 32, 24, 100), pngRequest(t, 2, 2, 32, 24, 100)
	result := make(chan []results.Check, 1)
	var wg sync.WaitGroup
	started := make(chan struct{})
	wg.Go(func() {
		close(started)
		result <- r.repeat(t.Context(), c, srv, two)
	})
	<-started
	runtime.Gosched()
	select {
	case cs := <-result:
		t.Fatalf("request 2 returned %v before request 1 finished", cs)
	default: // waiting for request 1, or not yet there: either way not compared yet
	}
	if cs := r.repeat(t.Context(), c, srv, one); cs != nil {
		t.Errorf("request 1 got repeat checks %v", cs)
	}
	wg.Wait()
	got := <-result
	want := map[string]results.Status{checks.RepeatSSIM: results.Pass, checks.RepeatPSNR: results.Pass, checks.RepeatMeanAbsDiff: results.Pass}
	if diff := cmp.Diff(want, names(got)); diff != "" {
		t.Errorf("request 2 (-want +got):\n%s", diff)
	}
}

// TestRepeatNotComparedSaysWhy: a request 2 of another shape fails; one whose request 1 had
// no valid output, or with the check turned off, gets one skip saying why; a case of one
// request gets nothing.
func TestRepeatNotComparedSaysWhy(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	off := false
	for _, tc := range []struct {
		name   string
		c      suite.Case
		first  func(t *testing.T) *results.RequestResult
		second func(t *testing.T) *results.RequestResult
		want   map[string]results.Status
		detail string
	}{
		{"another size", suite.Case{Repeat: 2},
			func(t *testing.T) *results.RequestResult { return pngRequest(t, 1, 2, 32, 24, 9) },
			func(t *testing.T) *results.RequestResult { return pngRequest(t, 2, 2, 24, 24, 9) },
			map[string]results.Status{checks.RepeatSSIM: results.Fail, checks.RepeatPSNR: results.Fail, checks.RepeatMeanAbsDiff: results.Fail}, ""},
		{"request 1 without valid output", suite.Case{Repeat: 2},
			func(t *testing.T) *results.RequestResult {
				rr := pngRequest(t, 1, 2, 32, 24, 9)
				rr.Checks[1].Status = results.Fail
				return rr
			},
			func(t *testing.T) *results.RequestResult { return pngRequest(t, 2, 2, 32, 24, 9) },
			map[string]results.Status{checks.RepeatGroup: results.Skip},
			"not compared with request 1: request 1 has no valid output (see its output.present and output.valid)"},
		{"turned off", suite.Case{Repeat: 2, Checks: suite.Toggles{Repeat: &off}},
			func(t *testing.T) *results.RequestResult { return pngRequest(t, 1, 2, 32, 24, 9) },
			func(t *testing.T) *results.RequestResult { return pngRequest(t, 2, 2, 32, 24, 200) },
			map[string]results.Status{checks.RepeatGroup: results.Skip}, "disabled by the case's checks.repeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := repeatRun(t)
			c := tc.c
			c.ID, c.Modality, c.RepeatLimits = "t2i", suite.Image, checks.DefaultRepeatLimits()
			srv := &server{}
			r.repeat(t.Context(), &c, srv, tc.first(t))
			got := r.repeat(t.Context(), &c, srv, tc.second(t))
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.detail != "" && (len(got) != 1 || got[0].Detail != tc.detail) {
				t.Errorf("detail %+v, want %q", got, tc.detail)
			}
		})
	}
	r := repeatRun(t)
	single := &suite.Case{ID: "one", Modality: suite.Image, Repeat: 1, RepeatLimits: checks.DefaultRepeatLimits()}
	if got := r.repeat(t.Context(), single, &server{}, pngRequest(t, 1, 1, 32, 24, 9)); got != nil {
		t.Errorf("a case of one request got %v", got)
	}
}
