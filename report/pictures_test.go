package report

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/golden"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestCommentShowsFailurePicturesInline: a consistency failure with a picture URL shows it
// small and inline under the problems, linked to its full size; a request that failed
// another check, or a URL that could break out of the attribute, shows nothing.
func TestCommentShowsFailurePicturesInline(t *testing.T) {
	r := failingReport()
	const url = "https://github.com/o/r/raw/diffusion-check-assets/runs/78-1/base/qwen_image_t2i/request-2.png"
	r.Pictures = map[PictureKey]string{
		{Lane: "base", Case: "qwen_image_t2i", Request: 2}: url,
		{Lane: "base", Case: "wan_t2v_audio", Request: 2}:  "https://github.com/o/r/raw/x/perf.png",
		{Lane: "base", Case: "qwen_image_t2i", Request: 1}: `https://x/"><script>`,
	}
	c := Comment(r)
	if n := strings.Count(c, "<img "); n != 1 {
		t.Errorf("%d pictures, want 1 (the consistency failure):\n%s", n, c)
	}
	want := `<a href="` + url + `"><img src="` + url + `" width="270" alt="qwen_image_t2i request 2/2: ground truth &#124; output &#124; SSIM map"`
	if !strings.Contains(c, want) {
		t.Errorf("comment lacks the picture %s:\n%s", want, c)
	}
	if strings.Contains(c, "<script>") || strings.Contains(c, "perf.png") {
		t.Errorf("comment shows a picture it must not:\n%s", c)
	}
	golden.Check(t, "comment-fail-pictures.md", []byte(c))
	if strings.Contains(Comment(failingReport()), "<img ") {
		t.Error("a report without Pictures shows a picture")
	}
}

// TestCommentShowsRepeatPicturesInline: a consistency.repeat failure with a picture URL shows
// its cross-request picture (request 1 | request k | SSIM map) beside the ground-truth one,
// and the legend says both kinds; a request whose repeat checks passed shows none.
func TestCommentShowsRepeatPicturesInline(t *testing.T) {
	r := failingReport()
	rr := &r.Lanes[0].Cases[0].Requests[1] // qwen_image_t2i request 2/2: fails SSIM against GT
	if rr.Case != "qwen_image_t2i" || rr.Index != 2 {
		t.Fatalf("fixture changed: %s request %d", rr.Case, rr.Index)
	}
	rr.Checks = append(rr.Checks, results.Check{Name: checks.RepeatSSIM, Status: results.Fail, Detail: "SSIM 0.61 against request 1"})
	const gtURL, repURL = "https://github.com/o/r/raw/a/gt.png", "https://github.com/o/r/raw/a/repeat.png"
	r.Pictures = map[PictureKey]string{
		{Lane: "base", Case: "qwen_image_t2i", Request: 2}:               gtURL,
		{Lane: "base", Case: "qwen_image_t2i", Request: 2, Repeat: true}: repURL,
		{Lane: "base", Case: "qwen_image_t2i", Request: 1, Repeat: true}: "https://github.com/o/r/raw/a/passed.png",
	}
	c := Comment(r)
	if n := strings.Count(c, "<img "); n != 2 {
		t.Errorf("%d pictures, want 2 (ground truth and repeat of request 2):\n%s", n, c)
	}
	for _, want := range []string{
		`<img src="` + repURL + `" width="270" alt="qwen_image_t2i request 2/2: request 1 &#124; request 2 &#124; SSIM map"`,
		"**Worst frames** (ground truth | output | SSIM map, or request 1 | request k | SSIM map across requests; click for full size)",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("comment lacks %s:\n%s", want, c)
		}
	}
	if strings.Contains(c, "passed.png") {
		t.Errorf("a request whose repeat checks passed shows a picture:\n%s", c)
	}
}
