package report

import (
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestKnownCounting: one entry `audio.*` on a case and a drift that hits only request 3 of 3.
// The entry is known, hit 1/3, told once; the header counts 1 known failure; nothing says
// "remove it", since it did not pass everywhere.
func TestKnownCounting(t *testing.T) {
	c := caseOf("wan_t2v_audio", true, good, goodWarm, reqSpec{e2e: 65500, denoise: 51900, vram: 34560, ssim: 0.9809, psnr: 38.19, audioFail: true})
	r := results.Result{Schema: results.Schema, Lane: "base", GPU: "h100", Partition: results.Partition{Total: 1}, Cases: []results.CaseResult{c}}
	entries := []checks.KnownEntry{{Case: "wan_t2v_audio", Check: "audio.*", Reason: "AAC encoder change", Until: "2025-06-01", Source: "known.yaml:1"}}
	today := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for ci := range r.Cases { // as the judge marks each request during a run
		cr := &r.Cases[ci]
		for ri := range cr.Requests {
			cr.Requests[ri].Checks = checks.MarkKnown(entries, cr.ID, cr.Requests[ri].Index, cr.Requests[ri].Checks, today)
		}
	}
	judge.Finalize(&r)
	rep := &Report{Key: "base", Lanes: []results.Result{r}}
	md := Comment(rep)
	wellFormed(t, md)
	for _, want := range []string{
		"## 🟡 diffusion-check: passed, with 1 known failure",
		"· 1 known failure\n",
		"| 🟡 | `wan_t2v_audio` | `audio.rms_db_diff` | 1/3 | AAC encoder change | known until 2025-06-01: reported, not red |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("comment does not say %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "AAC encoder change"); n != 1 {
		t.Errorf("the entry is told %d times, want once", n)
	}
	if strings.Contains(md, "remove it") {
		t.Error("an entry that failed in request 3 is called fixed")
	}
	if strings.Contains(md, "### Problems") {
		t.Error("a known failure is listed among the problems")
	}
}
