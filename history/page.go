package history

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PageOptions are what the page says beyond the runs.
type PageOptions struct {
	Title string
	// Generated is when the page was made (shown; the zero time leaves it out).
	Generated time.Time
}

// anchorOf is the id of the chart of one case and metric of a series on the page, for links
// from a PR comment or a tightening proposal (page URL + "#" + anchorOf).
func anchorOf(s Series, caseID, metric string) string {
	return "c-" + s.Dir() + "-" + part(caseID) + "-" + part(strings.ReplaceAll(metric, "/", "."))
}

// The geometry of one chart, in SVG user units.
const (
	chartW, chartH = 540, 220
	padL, padR     = 64, 16
	padT, padB     = 12, 36
)

type point struct {
	X, Y  float64
	Title string
	Fail  bool
}

type chart struct {
	ID, Case, Title, Unit string
	W, H                  int
	Line, BaseLine, Limit string // SVG polyline points
	Points, PRPoints      []point
	YTicks                []tick
	XFirst, XLast         string
	XLastPos              float64
	Latest                string
	Defaults, PRs         int
	PlotLeft, PlotRight   float64
	PlotTop, PlotBottom   float64
}

type tick struct {
	Y     float64
	Label string
}

type seriesView struct {
	Name   string
	Cases  []caseView
	Counts string
}

type caseView struct {
	ID     string
	Charts []chart
}

// Page writes the static HTML page of every series in runs (oldest first, as Load returns
// them): for each case and metric one inline SVG chart, default-branch runs as a line in
// commit (date) order, pull requests' runs as points between the default-branch runs they
// came after, the baseline and limit of every default-branch run as dashed lines. No
// script, no network: every string comes from html/template's escaping.
func Page(w io.Writer, runs []*Run, o PageOptions) error {
	var views []seriesView
	bySeries := map[Series][]*Run{}
	var order []Series
	for _, r := range runs {
		s := r.SeriesOf()
		if _, ok := bySeries[s]; !ok {
			order = append(order, s)
		}
		bySeries[s] = append(bySeries[s], r)
	}
	slices.SortFunc(order, func(a, b Series) int { return strings.Compare(a.Dir(), b.Dir()) })
	for _, s := range order {
		views = append(views, seriesViewOf(s, bySeries[s]))
	}
	gen := ""
	if !o.Generated.IsZero() {
		gen = o.Generated.UTC().Format(time.RFC3339)
	}
	return pageTemplate.Execute(w, struct {
		Title, Generated string
		Series           []seriesView
	}{o.Title, gen, views})
}

func seriesViewOf(s Series, runs []*Run) seriesView {
	var defaults, prs []*Run
	for _, r := range runs {
		if r.Kind == KindDefault {
			defaults = append(defaults, r)
		} else {
			prs = append(prs, r)
		}
	}
	v := seriesView{Name: s.String(), Counts: fmt.Sprintf("%d default-branch runs, %d pull-request runs", len(defaults), len(prs))}
	metrics := map[string][]string{}
	var cases []string
	for _, r := range runs {
		for _, c := range r.Cases {
			if _, ok := metrics[c.ID]; !ok {
				cases = append(cases, c.ID)
			}
			for _, m := range c.Metrics {
				if !slices.Contains(metrics[c.ID], m.Name) {
					metrics[c.ID] = append(metrics[c.ID], m.Name)
				}
			}
		}
	}
	slices.Sort(cases)
	for _, id := range cases {
		cv := caseView{ID: id}
		names := metrics[id]
		slices.SortStableFunc(names, func(a, b string) int { return metricRank(a) - metricRank(b) })
		for _, m := range names {
			cv.Charts = append(cv.Charts, chartOf(s, id, m, defaults, prs))
		}
		v.Cases = append(v.Cases, cv)
	}
	return v
}

// metricRank puts E2E first, then stages and denoise aggregates, then memory.
func metricRank(m string) int {
	switch {
	case strings.HasPrefix(m, "perf.e2e"):
		return 0
	case strings.HasPrefix(m, "perf."):
		return 1
	}
	return 2
}

func chartOf(s Series, id, name string, defaults, prs []*Run) chart {
	c := chart{ID: anchorOf(s, id, name), Case: id, Title: metricTitle(name), W: chartW, H: chartH,
		PlotLeft: padL, PlotRight: chartW - padR, PlotTop: padT, PlotBottom: chartH - padB}
	type val struct {
		x   float64
		m   Metric
		run *Run
	}
	var dv, pv []val
	for i, r := range defaults {
		if m, ok := r.Metric(id, name); ok {
			dv = append(dv, val{float64(i), m, r})
		}
	}
	for _, r := range prs {
		m, ok := r.Metric(id, name)
		if !ok {
			continue
		}
		// Between the last default-branch run before it and the next one.
		i, _ := slices.BinarySearchFunc(defaults, r.Date, func(d *Run, t time.Time) int { return d.Date.Compare(t) })
		pv = append(pv, val{float64(i) - 0.5, m, r})
	}
	top := 0.0
	for _, vs := range [][]val{dv, pv} {
		for _, v := range vs {
			top = math.Max(top, v.m.Value)
			if v.m.Limit != nil {
				top = math.Max(top, *v.m.Limit)
			}
			c.Unit = v.m.Unit
		}
	}
	if top <= 0 {
		top = 1
	}
	top = niceCeil(top * 1.05)
	n := math.Max(float64(len(defaults)-1), 1)
	xOf := func(x float64) float64 { return padL + (chartW-padL-padR)*(x+0.5)/(n+1) }
	yOf := func(y float64) float64 { return padT + (chartH-padT-padB)*(1-y/top) }
	var line, base, limit []string
	xy := func(x, y float64) string {
		return strconv.FormatFloat(xOf(x), 'f', 1, 64) + "," + strconv.FormatFloat(yOf(y), 'f', 1, 64)
	}
	for _, v := range dv {
		line = append(line, xy(v.x, v.m.Value))
		if v.m.Baseline != nil && v.m.Limit != nil {
			base = append(base, xy(v.x, *v.m.Baseline))
			limit = append(limit, xy(v.x, *v.m.Limit))
		}
		c.Points = append(c.Points, pointOf(v.x, v.m, v.run, xOf, yOf))
	}
	for _, v := range pv {
		c.PRPoints = append(c.PRPoints, pointOf(v.x, v.m, v.run, xOf, yOf))
	}
	c.Line, c.BaseLine, c.Limit = strings.Join(line, " "), strings.Join(base, " "), strings.Join(limit, " ")
	for _, f := range []float64{0, 0.5, 1} {
		c.YTicks = append(c.YTicks, tick{yOf(top * f), formatValue(top*f, c.Unit)})
	}
	c.Defaults, c.PRs = len(dv), len(pv)
	if len(dv) > 0 {
		c.XFirst = short(dv[0].run.Commit)
		c.XLast = short(dv[len(dv)-1].run.Commit)
		c.XLastPos = xOf(dv[len(dv)-1].x)
		c.Latest = formatValue(dv[len(dv)-1].m.Value, c.Unit)
	}
	return c
}

func pointOf(x float64, m Metric, r *Run, xOf, yOf func(float64) float64) point {
	what := "default branch"
	if r.Kind == KindPR {
		what = "PR #" + strconv.Itoa(r.PR)
	}
	t := fmt.Sprintf("%s · %s · %s · run %s · %s (worst of %d)", short(r.Commit), what, r.Date.UTC().Format("2006-01-02 15:04"), r.RunID,
		formatValue(m.Value, m.Unit), m.N)
	if m.Limit != nil {
		t += " · limit " + formatValue(*m.Limit, m.Unit)
	}
	return point{X: xOf(x), Y: yOf(m.Value), Title: t, Fail: m.Limit != nil && m.Value > *m.Limit}
}

func short(commit string) string {
	if len(commit) > 8 {
		return commit[:8]
	}
	return commit
}

// formatValue shows a value with its unit, to four significant digits.
func formatValue(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if math.Abs(v) >= 1e4 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, for readable axis labels.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// pageHTML is the page's html/template, kept in a file of its own: its lines of markup are
// longer than a line of Go may be.
//
//go:embed page.html.tmpl
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// sparkline draws values as a line of block characters (▁▂▃▄▅▆▇█), lowest to highest, for a
// PR comment; "" for no values.
func sparkline(values []float64) string {
	if len(values) == 0 {
		return ""
	}
	lo, hi := slices.Min(values), slices.Max(values)
	blocks := []rune("▁▂▃▄▅▆▇█")
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(blocks)-1)))
		}
		b.WriteRune(blocks[i])
	}
	return b.String()
}
