package history

import (
	"bytes"
	"github.com/diffusion-check/diffusion-check/internal/golden"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
)

// goldenRuns: six default-branch runs that halve at the fourth, a pull request's run over
// the limit, and a second case with memory.
func goldenRuns() []*Run {
	runs := seriesRuns(90, 92, 91, 45, 46, 45)
	for i, r := range runs {
		r.Cases = append(r.Cases, Case{ID: "b", Metrics: []Metric{{Name: "memory.runtime_peak/server_reserved", Unit: "MiB", Value: 3396, Median: 3396, N: 2,
			Baseline: checks.Float(3396), Limit: checks.Float(3524)}}})
		r.Runner = "r" + string(rune('0'+i))
	}
	pr := seriesRuns(130)[0]
	pr.Kind, pr.PR, pr.RunID, pr.Date = KindPR, 12, "pr-1", t0.Add(150*time.Minute)
	return append(runs, pr)
}

func TestPageGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Page(&b, goldenRuns(), PageOptions{Title: "history", Generated: t0.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "page.html", b.Bytes())
}

func TestProposalMarkdownGolden(t *testing.T) {
	s := Series{Suite: "s", GPU: "h200"}
	rule := Rule{Runs: 3, Sigmas: 3, MinGain: 0.2}
	out, err := Propose(goldenRuns(), s, rule, fileHas(100))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "proposal.md", []byte(ProposalMarkdown(s, "perf_baselines/h200.json", rule, out, "https://example.github.io/h/")))
}
