package history

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

func TestPageDrawsOneChartPerCaseAndMetricWithPRsAsPoints(t *testing.T) {
	runs := seriesRuns(70, 71, 72)
	runs[1].Cases[0].Metrics = append(runs[1].Cases[0].Metrics, Metric{Name: "memory.runtime_peak/server_reserved", Unit: "MiB", Value: 3396, Median: 3396, N: 3})
	pr := seriesRuns(200)[0]
	pr.Kind, pr.PR, pr.Date = KindPR, 9, t0.Add(90*time.Minute)
	runs = append(runs, pr)
	var b bytes.Buffer
	if err := Page(&b, runs, PageOptions{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	s := Series{Suite: "s", GPU: "h200"}
	for _, id := range []string{anchorOf(s, "a", "perf.e2e"), anchorOf(s, "a", "memory.runtime_peak/server_reserved")} {
		if !strings.Contains(page, `<figure id="`+id+`">`) {
			t.Errorf("no chart %s", id)
		}
	}
	if n := strings.Count(page, "<figure "); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	// The E2E chart: a line of 3 points, a baseline and a limit line, and the PR's point,
	// red because 200 ms is over its 125 ms limit.
	e2e := page[strings.Index(page, anchorOf(s, "a", "perf.e2e")):]
	e2e = e2e[:strings.Index(e2e, "</figure>")]
	if n := len(regexp.MustCompile(`<polyline points="[^"]*"`).FindAllString(e2e, -1)); n != 3 {
		t.Errorf("%d polylines (line, baseline, limit), want 3", n)
	}
	if !strings.Contains(e2e, "PR #9") || !strings.Contains(e2e, `r="4" fill="#cf222e" stroke="#fff"`) {
		t.Errorf("the PR's run is not a red point:\n%s", e2e)
	}
	if strings.Count(e2e, "default branch ·") != 3 {
		t.Errorf("want 3 default-branch points:\n%s", e2e)
	}
}

// TestPageEscapesEveryStoreString: store files from pull requests are untrusted; no string
// from one reaches the page as markup.
func TestPageEscapesEveryStoreString(t *testing.T) {
	evil := `"><script>alert(1)</script><svg onload=x>`
	r := seriesRuns(70)[0]
	r.Suite, r.Commit, r.RunID, r.Runner, r.Cases[0].ID = evil, evil, evil, evil, evil
	r.Cases[0].Metrics[0].Name, r.Cases[0].Metrics[0].Unit = evil, evil
	var b bytes.Buffer
	if err := Page(&b, []*Run{r}, PageOptions{Title: evil}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<svg onload", `"><script`} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q unescaped", bad)
		}
	}
}

func TestPageNeedsNoScriptAndNoNetwork(t *testing.T) {
	var b bytes.Buffer
	if err := Page(&b, seriesRuns(70, 80), PageOptions{Title: "t", Generated: t0}); err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(b.String(), `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"<script", "http://", "https://", "src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

func TestSparklineSpansLowestToHighest(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{nil, ""},
		{[]float64{5, 5}, "▁▁"},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8}, "▁▂▃▄▅▆▇█"},
		{[]float64{10, 0, 10}, "█▁█"},
	} {
		if got := sparkline(tc.in); got != tc.want {
			t.Errorf("Sparkline(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTrendIsTheBaseBranchsLastNRuns(t *testing.T) {
	runs := seriesRuns(50, 60, 70, 80)
	pr := seriesRuns(500)[0]
	pr.Kind, pr.PR, pr.Date = KindPR, 3, t0.Add(10*time.Hour)
	runs = append(runs, pr)
	med, lo, hi, spark, ok := trendOf(runs, Series{Suite: "s", GPU: "h200"}, "a", "perf.e2e", 3)
	if !ok || med != 70 || lo != 60 || hi != 80 || spark != "▁▅█" {
		t.Errorf("Trend = %v %v %v %q %v, want 70 60 80 ▁▅█ (the PR run left out)", med, lo, hi, spark, ok)
	}
	if _, _, _, _, ok := trendOf(runs, Series{Suite: "s", GPU: "h200"}, "b", "perf.e2e", 3); ok {
		t.Error("a case without history has a trend")
	}
}

func TestProposalMarkdownLinksChartsAndEscapesStoreText(t *testing.T) {
	runs := seriesRuns(70, 70, 71)
	runs[0].RunID = "| @team <b>"
	runs[0].Cases[0].ID, runs[1].Cases[0].ID, runs[2].Cases[0].ID = "a", "a", "a"
	runs[2].Commit = "c|`x"
	s := Series{Suite: "s", GPU: "h200"}
	out, err := Propose(runs, s, Rule{Runs: 3, Sigmas: 3, MinGain: 0.2}, fileHas(100))
	if err != nil {
		t.Fatal(err)
	}
	out.Noisy = []Noisy{{Case: "b|<i>", Metric: "perf.e2e", Unit: "ms", Spread: results.Spread{N: 3, Min: 1, Median: 2, Max: 3}, Low: 1, High: 3, Tolerance: 0.25}}
	md := ProposalMarkdown(s, "perf.json", Rule{Runs: 3, Sigmas: 3, MinGain: 0.2}, out, "https://x.github.io/h/")
	for _, want := range []string{
		"| `a` | [E2E (server)](https://x.github.io/h/#" + anchorOf(s, "a", "perf.e2e") + ") | 100 ms | 71 ms | -29.0% |",
		`\| @` + "\u200b" + `team &lt;b&gt;`,
		"### Baselines that noise makes useless",
		"| `c\\|'x` |",
		`b\|&lt;i&gt; perf.e2e: the last 3 default-branch runs spread 100.0% of their median (1 ms to 3 ms), wider than its tolerance 25.0%`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestTrendNoteSaysTheBaseBranchsRunsAndLinksTheChart(t *testing.T) {
	s := Series{Suite: "s", GPU: "h200"}
	runs := seriesRuns(50, 60, 70, 80)
	want := "base branch, last 3 runs: median 70 ms (60–80 ms) ▁▅█ · [chart](https://x.github.io/h/#" + anchorOf(s, "a", "perf.e2e") + ")"
	if got := trendNote(runs, s, "a", "perf.e2e", 3, "https://x.github.io/h/"); got != want {
		t.Errorf("TrendNote = %q\nwant       %q", got, want)
	}
	if got := trendNote(runs, s, "a", "perf.e2e", 10, ""); got != "base branch, last 4 runs: median 65 ms (50–80 ms) ▁▃▆█" {
		t.Errorf("TrendNote without a page = %q", got)
	}
	if got := trendNote(runs, s, "zzz", "perf.e2e", 3, "u"); got != "" {
		t.Errorf("TrendNote without history = %q", got)
	}
}

func TestCommentTrendAnswersForPerfAndMemoryChecksOfTheLanesSeries(t *testing.T) {
	runs := seriesRuns(50, 60, 70, 80)
	trend := CommentTrend(runs, "", 10)
	lane := &results.Result{Suite: "s", GPU: "h200"}
	if got := trend(lane, "a", results.Check{Name: checks.PerfE2E}); !strings.HasPrefix(got, "base branch, last 4 runs: median 65 ms") {
		t.Errorf("perf.e2e: %q", got)
	}
	if got := trend(lane, "a", results.Check{Name: checks.ConsistencySSIM}); got != "" {
		t.Errorf("SSIM has a trend: %q", got)
	}
	if got := trend(&results.Result{Suite: "s", GPU: "b200"}, "a", results.Check{Name: checks.PerfE2E}); got != "" {
		t.Errorf("another GPU's lane has this series' trend: %q", got)
	}
}
