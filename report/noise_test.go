package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/golden"
	"github.com/diffusion-check/diffusion-check/results"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
)

// noisyReport has two lanes after confirmation requests (docs/noise.md): in "base" a one-off
// slow request 2 that two confirmation requests did not reproduce, with on_unconfirmed:
// flaky; in "extra" a slowdown the first confirmation request reproduced. Both perf checks
// carry the baseline's spread.
func noisyReport() *Report {
	spread := &results.Spread{N: 6, Min: 64900, Median: 65600, Max: 66100, MAD: 300}
	slow := goodWarm
	slow.e2e, slow.denoise = 67630, 52400
	label := func(c results.CaseResult, st results.Status, cf results.Confirmation) results.CaseResult {
		ck := &c.Requests[1].Checks[3] // perf.e2e
		ck.Status, ck.Confirm, ck.Spread = st, &cf, spread
		ck.Detail = "server total_duration_ms 67630 ms > limit 66000 ms (baseline 60000 ms, tolerance 10%, pad 20 ms; 12.7% over the baseline)"
		c.Confirm = []results.RequestResult{request(c.ID, 1, cf.Max, false, good)}
		c.Confirm[0].Confirm = true
		return c
	}
	flaky := label(caseOf("qwen_image_t2i", false, good, slow), results.Flaky,
		results.Confirmation{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2})
	red := label(caseOf("flux_t2i", false, good, slow), results.Fail,
		results.Confirmation{State: results.ConfirmReproduced, Failed: 1, Of: 1, Max: 2, Note: "stopped after 1 of 2: every failed check failed again"})
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/81", RunLabel: "run #81",
		Lanes: []results.Result{lane("base", flaky), lane("extra", red)}}
}

func TestGoldenNoisy(t *testing.T) {
	r := noisyReport()
	if got := []results.Status{r.Lanes[0].Status, r.Lanes[1].Status}; !cmp.Equal(got, []results.Status{results.Flaky, results.Fail}) {
		t.Fatalf("fixture: lane statuses %v, want flaky and fail", got)
	}
	c := Comment(r)
	wellFormed(t, c)
	golden.Check(t, "comment-noisy.md", []byte(c))
	var b bytes.Buffer
	if err := JUnit(&b, r.Lanes, "", nil); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-noisy.xml", b.Bytes())
	for _, want := range []string{
		"🟨 `qwen_image_t2i` (base) request 2/2 · **E2E (server) 67.6 s** vs limit ≤ 66.0 s (**1.02× the limit**, +6.8 MAD) " +
			"— +13 % vs baseline 60.0 s · _not reproduced in 0/2 confirmation requests_",
		"❌ `flux_t2i` (extra) request 2/2 · **E2E (server) 67.6 s** vs limit ≤ 66.0 s (**1.02× the limit**, +6.8 MAD) " +
			"— +13 % vs baseline 60.0 s · _reproduced in 1/1 confirmation requests_",
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
	if s := worstStatus(r.Lanes[:1]); s != results.Flaky {
		t.Errorf("worst of the flaky lane: %s", s)
	}
	if n := count(r.Lanes); n.flaky != 1 || n.failed != 1 {
		t.Errorf("counts %+v: want 1 flaky, 1 failed", n)
	}
}

// TestSpreadText: the distance from the baseline's median is counted in MADs only where
// that unit means something — a MAD at or over the resolution of the measurement (1 ms, 1 MiB,
// the last decimal of other kinds), and at most maxMADs either way; a zero spread and one
// below the resolution are said in words.
func TestSpreadText(t *testing.T) {
	v := func(name string, x float64, sp *results.Spread) *results.Check {
		return &results.Check{Name: name, Value: checks.Float(x), Spread: sp}
	}
	ms := func(x, mad float64) *results.Check {
		return v(checks.PerfE2E, x, &results.Spread{N: 5, Min: 1000 - 2*mad, Median: 1000, Max: 1000 + 2*mad, MAD: mad})
	}
	tests := []struct {
		name string
		ck   *results.Check
		want string
	}{
		{"over the resolution", ms(1230, 10), "+23.0 MAD"},
		{"below the median", ms(990, 10), "-1.0 MAD"},
		{"MAD at the resolution counts", ms(1002.5, 1), "+2.5 MAD"},
		{"exactly the cap", ms(1100, 1), "+100.0 MAD"},
		{"past the cap", ms(1100.5, 1), ">100 MAD"},
		{"past the cap below", ms(899.5, 1), "<-100 MAD"},
		{"MAD just under 1 ms", ms(1230, 0.999), "baseline spread under 1 ms"},
		{"MAD of a few microseconds (H200 denoise step)", ms(193.8, 0.0076), "baseline spread under 1 ms"},
		{
			"memory: under 1 MiB",
			v(checks.MemoryRuntimePeak, 4128, &results.Spread{N: 3, Min: 3615.8, Median: 3616, Max: 3616.2, MAD: 0.2}),
			"baseline spread under 1 MiB",
		},
		{"memory: 1 MiB counts", v(checks.MemoryRuntimePeak, 3620, &results.Spread{N: 3, Min: 3615, Median: 3616, Max: 3617, MAD: 1}), "+4.0 MAD"},
		{
			"decimals of the kind: under 0.01 dB",
			v(checks.AudioRMSdBDiff, 0.9, &results.Spread{N: 3, Min: 0.4, Median: 0.4, Max: 0.41, MAD: 0.005}),
			"baseline spread under 0.01 dB",
		},
		{
			"decimals of the kind: 0.01 dB counts",
			v(checks.AudioRMSdBDiff, 0.5, &results.Spread{N: 3, Min: 0.39, Median: 0.4, Max: 0.41, MAD: 0.01}),
			"+10.0 MAD",
		},
		{"a plain number has no floor", v("custom.score", 3, &results.Spread{N: 3, Min: 1, Median: 1, Max: 1, MAD: 0.01}), ">100 MAD"},
		{"one request", v(checks.PerfE2E, 1230, &results.Spread{N: 1, Min: 1000, Median: 1000, Max: 1000}), "baseline of 1 request: no spread"},
		{"zero MAD, outside", v(checks.PerfE2E, 1230, &results.Spread{N: 3, Min: 1000, Median: 1000, Max: 1000}), "baseline had no spread (3 requests)"},
		{
			"zero MAD, within",
			v(checks.PerfE2E, 1000, &results.Spread{N: 3, Min: 1000, Median: 1000, Max: 1000}),
			"within the baseline's values, no spread (3 requests)",
		},
		{"no requests", v(checks.PerfE2E, 1230, &results.Spread{}), ""},
		{"no spread data", v(checks.PerfE2E, 1230, nil), ""},
		{"no value", &results.Check{Name: checks.PerfE2E, Spread: &results.Spread{N: 2, MAD: 1}}, ""},
	}
	for _, tt := range tests {
		if got := spreadText(tt.ck); got != tt.want {
			t.Errorf("%s: spreadText(%+v) = %q, want %q", tt.name, tt.ck.Spread, got, tt.want)
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
		"false diffusion-check: lane extra case flux_t2i request 2/2 fail: perf.e2e = 67630 ms, limit 66000 ms: " + detail +
			" [reproduced in 1/1 confirmation requests]",
		"true diffusion-check: lane base case qwen_image_t2i request 2/2 flaky: perf.e2e (flaky) = 67630 ms, limit 66000 ms: " + detail +
			" [not reproduced in 0/2 confirmation requests]",
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
