package report

import (
	"bytes"
	"fmt"
	"github.com/diffusion-check/diffusion-check/internal/golden"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
)

// noisyReport has two lanes after confirmation requests (docs/noise.md): in "base" a one-off
// slow request 2 that two confirmation requests did not reproduce, with on_unconfirmed:
// flaky; in "extra" a slowdown the first confirmation request reproduced. Both perf checks
// carry the baseline's spread.
func noisyReport() *Report {
	spread := &checks.Spread{N: 6, Min: 64900, Median: 65600, Max: 66100, MAD: 300}
	slow := goodWarm
	slow.e2e, slow.denoise = 67630, 52400
	label := func(c checks.CaseResult, st checks.Status, cf checks.Confirmation) checks.CaseResult {
		ck := &c.Requests[1].Checks[3] // perf.e2e
		ck.Status, ck.Confirm, ck.Spread = st, &cf, spread
		ck.Detail = "server total_duration_ms 67630 ms > limit 66000 ms (baseline 60000 ms, tolerance 10%, pad 20 ms; 12.7% over the baseline)"
		c.Confirm = []checks.RequestResult{request(c.ID, 1, cf.Max, false, good)}
		c.Confirm[0].Confirm = true
		return c
	}
	flaky := label(caseOf("qwen_image_t2i", false, good, slow), checks.Flaky,
		checks.Confirmation{State: checks.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2})
	red := label(caseOf("flux_t2i", false, good, slow), checks.Fail,
		checks.Confirmation{State: checks.ConfirmReproduced, Failed: 1, Of: 1, Max: 2, Note: "stopped after 1 of 2: every failed check failed again"})
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/81", RunLabel: "run #81",
		Lanes: []checks.Result{lane("base", flaky), lane("extra", red)}}
}

func TestGoldenNoisy(t *testing.T) {
	r := noisyReport()
	if got := []checks.Status{r.Lanes[0].Status, r.Lanes[1].Status}; !cmp.Equal(got, []checks.Status{checks.Flaky, checks.Fail}) {
		t.Fatalf("fixture: lane statuses %v, want flaky and fail", got)
	}
	c := Comment(r)
	wellFormed(t, c)
	golden.Check(t, "comment-noisy.md", []byte(c))
	var b bytes.Buffer
	if err := JUnit(&b, r.Lanes); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-noisy.xml", b.Bytes())
	for _, want := range []string{
		"🟨 `qwen_image_t2i` (base) request 2/2 · **E2E (server) 67.6 s** vs limit ≤ 66.0 s (**1.02× the limit**, +6.8 MAD) — +13 % vs baseline 60.0 s · _not reproduced in 0/2 confirmation requests_",
		"❌ `flux_t2i` (extra) request 2/2 · **E2E (server) 67.6 s** vs limit ≤ 66.0 s (**1.02× the limit**, +6.8 MAD) — +13 % vs baseline 60.0 s · _reproduced in 1/1 confirmation requests_",
		"1 flaky",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("comment lacks %q", want)
		}
	}
}

func TestLaneStatusFlaky(t *testing.T) {
	r := noisyReport()
	want := []Status{
		{Lane: "base", State: "success", Description: "passed; 1 flaky: perf.e2e not reproduced in 0/2", TargetURL: "u"},
		{Lane: "extra", State: "failure", Description: "1 of 2 requests failed: flux_t2i/2", TargetURL: "u"},
	}
	got := []Status{LaneStatus(r.Lanes[0], "u"), LaneStatus(r.Lanes[1], "u")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if s := worstStatus(r.Lanes[:1]); s != checks.Flaky {
		t.Errorf("worst of the flaky lane: %s", s)
	}
	if n := count(r.Lanes); n.flaky != 1 || n.failed != 1 {
		t.Errorf("counts %+v: want 1 flaky, 1 failed", n)
	}
}

func TestSpreadText(t *testing.T) {
	v := func(x float64, sp *checks.Spread) *checks.Check {
		return &checks.Check{Name: checks.PerfE2E, Value: checks.Float(x), Spread: sp}
	}
	tests := []struct {
		ck   *checks.Check
		want string
	}{
		{v(1230, &checks.Spread{N: 5, Min: 990, Median: 1000, Max: 1010, MAD: 10}), "+23.0 MAD"},
		{v(990, &checks.Spread{N: 5, Min: 990, Median: 1000, Max: 1010, MAD: 10}), "-1.0 MAD"},
		{v(1230, &checks.Spread{N: 1, Min: 1000, Median: 1000, Max: 1000}), "outside a zero spread of 1 request"},
		{v(1000, &checks.Spread{N: 3, Min: 1000, Median: 1000, Max: 1000}), "within a zero spread of 3 requests"},
		{v(1230, nil), ""},
		{&checks.Check{Name: checks.PerfE2E, Spread: &checks.Spread{N: 2, MAD: 1}}, ""},
	}
	for _, tt := range tests {
		if got := spreadText(tt.ck); got != tt.want {
			t.Errorf("spreadText(%v, %+v) = %q, want %q", *tt.ck.Value, tt.ck.Spread, got, tt.want)
		}
	}
}

// TestAnnotationsFlaky: a flaky request is a warning, never an error, and says what the
// confirmation requests found; a reproduced failure stays an error. Each kind has its own
// cap, as GitHub shows 10 errors and 10 warnings per step.
func TestAnnotationsFlaky(t *testing.T) {
	r := noisyReport()
	const detail = "server total_duration_ms 67630 ms > limit 66000 ms (baseline 60000 ms, tolerance 10%, pad 20 ms; 12.7% over the baseline)"
	var got []string
	for _, a := range Annotations(r.Lanes, 10) {
		got = append(got, fmt.Sprintf("%v %s: %s", a.Warning, a.Title, a.Message))
	}
	want := []string{
		"false diffusion-check: lane extra case flux_t2i request 2/2 fail: perf.e2e = 67630 ms, limit 66000 ms: " + detail + " [reproduced in 1/1 confirmation requests]",
		"true diffusion-check: lane base case qwen_image_t2i request 2/2 flaky: perf.e2e (flaky) = 67630 ms, limit 66000 ms: " + detail + " [not reproduced in 0/2 confirmation requests]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	many := noisyReport()
	base := many.Lanes[0].Cases[0]
	many.Lanes[0].Cases = nil
	for i := range 12 {
		c := base
		c.ID = fmt.Sprintf("case%02d", i)
		many.Lanes[0].Cases = append(many.Lanes[0].Cases, c)
	}
	as := Annotations(many.Lanes, 10)
	var warnings []Annotation
	for _, a := range as {
		if a.Warning {
			warnings = append(warnings, a)
		}
	}
	if len(warnings) != 10 || warnings[9].Title != "diffusion-check: 3 more flaky requests" {
		t.Errorf("%d warnings, last %+v; want 10, the last saying 3 more", len(warnings), warnings[len(warnings)-1])
	}
}
