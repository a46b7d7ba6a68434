package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// repeatCase is a case of two requests with the given ground-truth and repeat SSIMs of
// request 2 (gt1 is request 1's; a negative value: not compared).
func repeatCase(id string, gt1, gt2, rep float64) results.CaseResult {
	ssim := func(name string, v, limit float64) results.Check {
		st := results.Pass
		if v < limit {
			st = results.Fail
		}
		return results.Check{Name: name, Status: st, Value: checks.Float(v), Limit: checks.Float(limit)}
	}
	req := func(i int, gt float64) results.RequestResult {
		rr := results.RequestResult{Index: i, Of: 2, Checks: []results.Check{{Name: results.OutputValid, Status: results.Pass}}}
		if gt >= 0 {
			rr.Checks = append(rr.Checks, ssim(checks.ConsistencySSIM, gt, 0.95))
		} else {
			rr.Checks = append(rr.Checks, checks.Skipped(checks.ConsistencyGroup, "no ground truth: the suite names no ground_truth folder"))
		}
		return rr
	}
	c := results.CaseResult{ID: id, Requests: []results.RequestResult{req(1, gt1), req(2, gt2)}}
	c.Requests[1].Checks = append(c.Requests[1].Checks, ssim(checks.RepeatSSIM, rep, 0.99))
	for i := range c.Requests {
		c.Requests[i].Status = judge.RequestStatus(c.Requests[i].Checks)
	}
	c.Status = judge.CaseStatus(c)
	return c
}

// TestAcrossRequestsNamesTheShape: the report tells a leak from a ground-truth mismatch, and
// says plainly which cases had no ground-truth check, in the Markdown and in the text table.
func TestAcrossRequestsNamesTheShape(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c         results.CaseResult
		has, hasn []string
		table     string // a line of the text table; "" for none across requests
	}{
		{"leak without ground truth", repeatCase("t2i_fox", -1, -1, 0.41),
			[]string{"state leak across requests", "request 2 drifts from request 1", "No ground-truth check at all in 1 case: `t2i_fox`"},
			[]string{"ground-truth mismatch"}, "case t2i_fox across requests: state leak across requests: request 2 drifts"},
		{"every request off the ground truth by the same amount", repeatCase("t2v", 0.81, 0.81, 1),
			[]string{"ground-truth mismatch, not a leak", "every request differs from the ground truth by the same amount"},
			[]string{"state leak", "No ground-truth check"}, "case t2v across requests: ground-truth mismatch, not a leak: every request differs"},
		{"leak against a matching ground truth", repeatCase("t2v", 0.99, 0.5, 0.5),
			[]string{"state leak across requests", "not a ground-truth problem"},
			[]string{"mismatch", "No ground-truth check"}, "case t2v across requests: state leak across requests"},
		{"healthy with ground truth: nothing to say", repeatCase("ok", 0.99, 0.99, 1), nil,
			[]string{"Outputs across requests"}, ""},
		{"a run writing the ground truth is not without one", writingGT(repeatCase("gt", -1, -1, 1)), nil,
			[]string{"Outputs across requests"}, ""},
	} {
		l := results.Result{Suite: "s", Lane: "base", Cases: []results.CaseResult{tc.c}}
		judge.Finalize(&l)
		md := renderMarkdown(&Report{Lanes: []results.Result{l}}, 0)
		var table bytes.Buffer
		if err := Table(&table, &l); err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.has {
			if !strings.Contains(md, s) {
				t.Errorf("%s: Markdown lacks %q:\n%s", tc.name, s, md)
			}
		}
		for _, s := range tc.hasn {
			if strings.Contains(md, s) {
				t.Errorf("%s: Markdown has %q:\n%s", tc.name, s, md)
			}
		}
		switch got := table.String(); {
		case tc.table != "" && !strings.Contains(got, tc.table):
			t.Errorf("%s: the text table lacks %q:\n%s", tc.name, tc.table, got)
		case tc.table == "" && strings.Contains(got, "across requests"):
			t.Errorf("%s: the text table says something across requests:\n%s", tc.name, got)
		}
	}
}

// writingGT marks request 1 of a case as written to the ground truth (run --mode gt).
func writingGT(c results.CaseResult) results.CaseResult {
	c.Requests[0].Checks = append(c.Requests[0].Checks, checks.Passed(checks.GroundTruthWrite, "new gt/x_1gpu.png"))
	return c
}

// TestCLIPNotEnforcedOnce: where CLIP was skipped for want of a scorer (SGLang always
// enforces it), the report says so in one line per report, naming the cases of every lane,
// however many requests skipped it.
func TestCLIPNotEnforcedOnce(t *testing.T) {
	noCLIP := func(id string) results.CaseResult {
		c := repeatCase(id, 0.99, 0.99, 1)
		for i := range c.Requests {
			ck := checks.Skipped(checks.ConsistencyCLIP, "no CLIP scorer configured")
			ck.Cause = checks.CLIPNotEnforced
			c.Requests[i].Checks = append(c.Requests[i].Checks, ck)
		}
		return c
	}
	a := results.Result{Suite: "s", Lane: "base", Cases: []results.CaseResult{noCLIP("fox"), repeatCase("ok", 0.99, 0.99, 1)}}
	b := results.Result{Suite: "s", Lane: "extra", Cases: []results.CaseResult{noCLIP("wan")}}
	judge.Finalize(&a)
	judge.Finalize(&b)
	md := renderMarkdown(&Report{Lanes: []results.Result{a, b}}, 0)
	want := "CLIP was not enforced in 2 cases (no CLIP scorer configured): SGLang enforces it on every consistency check, with openai/clip-vit-large-patch14"
	if n := strings.Count(md, "CLIP was not enforced"); n != 1 || !strings.Contains(md, want) || !strings.Contains(md, "`fox` (base), `wan` (extra)") {
		t.Errorf("the CLIP notice appears %d times, want once with both cases:\n%s", n, md)
	}
	var table bytes.Buffer
	if err := Table(&table, &a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "CLIP was not enforced in 1 case (no CLIP scorer configured)") {
		t.Errorf("the text table lacks the CLIP notice:\n%s", table.String())
	}
}
