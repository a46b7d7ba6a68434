package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/golden"
)

// TestLaneCheckRunAnnotatesTheCaseLinesOfWhatFailed: each failing request or case gets a
// failure annotation on its case's line of the suite file; a case whose line is not known
// gets none; the summary is the lane's report and the title its status.
func TestLaneCheckRunAnnotatesTheCaseLinesOfWhatFailed(t *testing.T) {
	r := failingReport()
	lines := map[string]int{"qwen_image_t2i": 12, "wan_t2v_audio": 30, "hunyuan_t2v": 51}
	run := LaneCheckRun(r, r.Lanes[0], "suites/ci.yaml", lines)
	if run.Name != "diffusion-check / base" || run.Conclusion != "failure" || run.Title != LaneStatus(r.Lanes[0], r.RunURL).Description {
		t.Errorf("name %q, conclusion %q, title %q", run.Name, run.Conclusion, run.Title)
	}
	var got []string
	for _, a := range run.Annotations {
		if a.Path != "suites/ci.yaml" || a.Level != "failure" || a.Message == "" || a.Title == "" {
			t.Errorf("annotation %+v", a)
		}
		got = append(got, a.Title)
	}
	want := []string{
		"diffusion-check: case qwen_image_t2i request 2/2 fail",
		"diffusion-check: case wan_t2v_audio request 1/2 fail",
		"diffusion-check: case wan_t2v_audio request 2/2 fail",
		"diffusion-check: case hunyuan_t2v fail",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s\nall: %+v", diff, run.Annotations)
	}
	for _, a := range run.Annotations {
		if a.Line != lines[strings.Fields(a.Title)[2]] {
			t.Errorf("%s on line %d", a.Title, a.Line)
		}
	}
	golden.Check(t, "checkrun-fail.md", []byte(run.Summary))
	if none := LaneCheckRun(r, r.Lanes[0], "", lines); len(none.Annotations) != 0 {
		t.Errorf("without a suite path: %d annotations", len(none.Annotations))
	}
	pass := passingReport()
	if run := LaneCheckRun(pass, pass.Lanes[0], "ci.yaml", nil); run.Conclusion != "success" || len(run.Annotations) != 0 {
		t.Errorf("passing lane: %+v", run)
	}
}

// TestLaneCheckRunSummaryFitsGitHubsLimit: a lane of hundreds of failures still renders a
// summary under 65,535 characters.
func TestLaneCheckRunSummaryFitsGitHubsLimit(t *testing.T) {
	r := hugeReport(2000)
	run := LaneCheckRun(r, r.Lanes[0], "ci.yaml", nil)
	if n := utf8.RuneCountInString(run.Summary); n > maxCheckSummary || n == 0 {
		t.Errorf("summary of %d characters", n)
	}
}
