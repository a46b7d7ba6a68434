package report

import (
	"testing"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/results"
)

func TestLaneStatus(t *testing.T) {
	for _, r := range []*Report{passingReport(), failingReport(), knownReport(), hugeReport(500)} {
		for _, l := range r.Lanes {
			st := LaneStatus(l, r.RunURL)
			if n := utf8.RuneCountInString(st.Description); n > maxDescription || n == 0 {
				t.Errorf("lane %s: description of %d characters: %q", l.Lane, n, st.Description)
			}
		}
	}
	st := LaneStatus(failingReport().Lanes[0], "u")
	if want := "4 of 6 requests failed: qwen_image_t2i/2, wan_t2v_audio/1, wan_t2v_audio/2, flux_crash/2, hunyuan_t2v"; st.State != "failure" ||
		st.Description != want {
		t.Errorf("got %s %q, want failure %q", st.State, st.Description, want)
	}
	sel := selectedReport()
	for i, want := range []string{
		"all 4 requests passed (2 of 4 cases selected by the changed paths)",
		"nothing to check: none of the 1 case is selected by the changed paths",
	} {
		if st := LaneStatus(sel.Lanes[i], "u"); st.State != "success" || st.Description != want {
			t.Errorf("selection, lane %s: got %s %q, want success %q", sel.Lanes[i].Lane, st.State, st.Description, want)
		}
	}
	l := results.Result{Lane: "amd", Status: results.Error, Errors: []string{"no GPU found\nmore"}}
	if st := LaneStatus(l, ""); st.State != "error" || st.Description != "could not check everything (error): no GPU found" {
		t.Errorf("got %+v", st)
	}
}
