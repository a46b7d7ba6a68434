package history

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// seriesRuns are default-branch runs of case a, one per value of perf.e2e, checked against
// baseline 100 ms with limit 125 ms (tolerance 25%).
func seriesRuns(values ...float64) []*Run {
	var runs []*Run
	for i, v := range values {
		runs = append(runs, &Run{Schema: storeSchema, Suite: "s", GPU: "h200", Commit: fmt.Sprintf("c%d", i), Kind: KindDefault, RunID: fmt.Sprint(i),
			Date: t0.Add(time.Duration(i) * time.Hour), Status: results.Pass,
			Cases: []Case{{ID: "a", Metrics: []Metric{{Name: "perf.e2e", Unit: "ms", Value: v, Median: v, N: 3,
				Baseline: checks.Float(100), Limit: checks.Float(125)}}}}})
	}
	return runs
}

func fileHas(v float64) Current {
	return func(c, m string) (float64, bool) { return v, c == "a" && m == "perf.e2e" }
}

func TestProposeTightensOnlyWhenTheWorstOfNIsWellUnder(t *testing.T) {
	s := Series{Suite: "s", GPU: "h200"}
	rule := Rule{Runs: 5, Sigmas: 3, MinGain: 0.2}
	steady := []float64{70, 71, 72, 70, 71} // MAD 1: 3σ = 4.4 ms, the 20% floor (20 ms) decides
	for _, tc := range []struct {
		name        string
		runs        []*Run
		old         float64
		rule        Rule
		wantNew     float64 // 0: no proposal
		wantLoosen  bool
		wantNoisy   bool
		wantSkipped string
	}{
		{"worst 72 is 28 under 100, more than 20", seriesRuns(steady...), 100, rule, 72, false, false, ""},
		{"worst 72 is under 88 by only 16, less than 20% of 88", seriesRuns(steady...), 88, rule, 0, false, false, "is not 17.6 ms under the baseline (88 ms)"},
		{"the spread sets the margin when 3σ is larger than the floor: MAD 5, 3σ 22.2 > 21", seriesRuns(62, 66, 70, 75, 79), 100, rule, 0, false, false,
			"is not 22.24 ms under"},
		{"older runs above do not count: only the last N", seriesRuns(append([]float64{150, 150}, steady...)...), 100, rule, 72, false, false, ""},
		{"fewer than N runs", seriesRuns(70, 70, 70, 70), 100, rule, 0, false, false, "4 default-branch runs, 5 needed"},
		{"spread wider than the tolerance is noisy, never tightened", seriesRuns(50, 80, 50, 80, 50), 100, rule, 0, false, true, ""},
		{"one slow run among ten is not noise; it is the worst of N", seriesRuns(70, 70, 71, 70, 120, 70, 71, 70, 70, 71), 200,
			Rule{Runs: 10, Sigmas: 3, MinGain: 0.2}, 120, false, false, ""},
		{"a runner that alternates between two speeds is noise", seriesRuns(70, 100, 70, 100, 70, 100, 70, 100, 70, 100), 200,
			Rule{Runs: 10, Sigmas: 3, MinGain: 0.2}, 0, false, true, ""},
		{"above the baseline is not raised", seriesRuns(110, 111, 112, 110, 111), 100, rule, 0, false, false, "needs --allow-loosen"},
		{"above the baseline is raised with AllowLoosen", seriesRuns(110, 111, 112, 110, 111), 100, Rule{Runs: 5, Sigmas: 3, MinGain: 0.2, AllowLoosen: true}, 112,
			true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Propose(tc.runs, s, tc.rule, fileHas(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantNew == 0 && len(out.Proposals) > 0:
				t.Errorf("proposed %+v", out.Proposals)
			case tc.wantNew != 0 && (len(out.Proposals) != 1 || out.Proposals[0].New != tc.wantNew || out.Proposals[0].Loosen != tc.wantLoosen):
				t.Errorf("proposals %+v, want new %g loosen %v", out.Proposals, tc.wantNew, tc.wantLoosen)
			}
			if tc.wantNew != 0 && len(out.Proposals) == 1 && len(out.Proposals[0].Runs) != tc.rule.Runs {
				t.Errorf("evidence: %d runs, want %d", len(out.Proposals[0].Runs), tc.rule.Runs)
			}
			if (len(out.Noisy) > 0) != tc.wantNoisy {
				t.Errorf("noisy = %+v, want %v", out.Noisy, tc.wantNoisy)
			}
			if tc.wantSkipped != "" && (len(out.Skipped) != 1 || !strings.Contains(out.Skipped[0], tc.wantSkipped)) {
				t.Errorf("skipped %q, want one containing %q", out.Skipped, tc.wantSkipped)
			}
		})
	}
}

// TestProposeNeverTakesPullRequestsOrOtherSeriesAsEvidence: a pull request's run (untrusted,
// and not what the default branch does) and another GPU's runs are never among the N.
func TestProposeNeverTakesPullRequestsOrOtherSeriesAsEvidence(t *testing.T) {
	runs := seriesRuns(70, 70, 70, 70, 70)
	pr := seriesRuns(10)[0]
	pr.Kind, pr.PR, pr.Date = KindPR, 7, t0.Add(100*time.Hour)
	other := seriesRuns(10)[0]
	other.GPU, other.Date = "b200", t0.Add(101*time.Hour)
	runs = append(runs, pr, other)
	out, err := Propose(runs, Series{Suite: "s", GPU: "h200"}, Rule{Runs: 5, Sigmas: 3, MinGain: 0.2}, fileHas(100))
	if err != nil {
		t.Fatal(err)
	}
	want := []Proposal{{Case: "a", Metric: "perf.e2e", Unit: "ms", Old: 100, New: 70, Margin: 20,
		Spread: results.Spread{N: 5, Min: 70, Median: 70, Max: 70}, Tolerance: 0.25}}
	if diff := cmp.Diff(want, out.Proposals, cmpopts.IgnoreFields(Proposal{}, "Runs"), cmpopts.EquateApprox(1e-9, 0)); diff != "" {
		t.Errorf("proposals (-want +got):\n%s", diff)
	}
	for _, r := range out.Proposals[0].Runs {
		if r.Kind != KindDefault || r.GPU != "h200" {
			t.Errorf("evidence holds run %s (%s, %s)", r.RunID, r.Kind, r.GPU)
		}
	}
}

func TestProposeNeedsTwoRunsToSeeASpread(t *testing.T) {
	if _, err := Propose(nil, Series{}, Rule{Runs: 1}, fileHas(1)); err == nil {
		t.Error("N = 1 accepted")
	}
}
