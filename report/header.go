package report

import (
	"cmp"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// icon is a status at a glance.
func icon(s results.Status) string {
	switch s {
	case results.Pass:
		return "✅"
	case results.Fail:
		return "❌"
	case results.Known:
		return "🟡"
	case results.Flaky:
		return "🟨"
	case results.Skip:
		return "⏭️"
	case results.Cancelled:
		return "🚫"
	case statusPending:
		return "⏳"
	}
	return "⛔" // error, or a status that is not ours
}

// header: the verdict, the lanes with their runs, GPU, commit, counts and what changed.
func header(b *strings.Builder, r *Report) {
	worst := worstStatus(r.Lanes)
	n := count(r.Lanes)
	head := headline(worst, n)
	if worst == results.Pass && n.requests == 0 && nothingSelected(r.Lanes) {
		head = "nothing to check: no case is selected by the changed paths"
	}
	shown := r.headerLanes()
	others := len(shown) > len(r.Lanes) // lanes of other runs, or still running
	if len(shown) > 1 {
		// The headline speaks for every lane the comment shows, and names them.
		worst, head = lanesHeadline(shown)
	}
	fmt.Fprintf(b, "## %s diffusion-check: %s\n\n", icon(worst), head)
	var lanes []string
	for _, l := range shown {
		s := "**" + escape(l.Name) + "** " + icon(l.Status)
		if l.Status == statusPending {
			s += " running"
		} else if l.RunURL != "" {
			s += " [" + escape(cmp.Or(l.RunLabel, "run")) + "](" + l.RunURL + ")"
		}
		lanes = append(lanes, s)
	}
	// One lane of this run: the links below name the run, the heading the verdict.
	if len(lanes) > 1 || (len(lanes) == 1 && r.RunURL == "") {
		b.WriteString(strings.Join(lanes, " · ") + "\n\n")
	}
	var facts []string
	if g := distinct(r.Lanes, func(l results.Result) string { return l.GPU }); g != "" {
		facts = append(facts, "GPU **"+escape(g)+"**")
	}
	// Which baseline file and runner pool the verdicts used (SGLang chooses both per runner).
	if f := distinct(r.Lanes, func(l results.Result) string { return baselineFact(l.Files) }); f != "" {
		facts = append(facts, f)
	}
	// Which pinned ground-truth store the consistency checks read.
	if g := distinct(r.Lanes, func(l results.Result) string { return storeFact(l.Files) }); g != "" {
		facts = append(facts, g)
	}
	if c := distinct(r.Lanes, func(l results.Result) string { return shortSHA(l.Commit) }); c != "" {
		facts = append(facts, "commit "+code(c))
	}
	facts = append(facts, words.Plural(n.cases, "case"), words.Plural(n.requests, "request"),
		fmt.Sprintf("%d failed", n.failed), fmt.Sprintf("%d skipped", n.skipped))
	if n.cancelled > 0 {
		facts = append(facts, fmt.Sprintf("%d cancelled", n.cancelled))
	}
	if n.flaky > 0 {
		facts = append(facts, fmt.Sprintf("%d flaky", n.flaky))
	}
	facts = append(facts, words.Plural(n.known, "known failure"))
	if others {
		facts[0] = "this run: " + facts[0]
	}
	b.WriteString(strings.Join(facts, " · ") + "\n")
	links(b, r)
	if r.Previous != nil {
		changes(b, r)
	}
}

// links: where to look further — the run, the failure pictures and the job summary.
func links(b *strings.Builder, r *Report) {
	var ls []string
	run := escape(cmp.Or(r.RunLabel, "run"))
	if r.RunURL != "" {
		if r.FullURL == r.RunURL { // the job summary is on the run's page
			run += " and its job summary"
		}
		ls = append(ls, "[🔗 "+run+"]("+r.RunURL+")")
	}
	if r.ArtifactsURL != "" {
		ls = append(ls, "[🖼️ failure pictures, outputs and logs (artifacts)]("+r.ArtifactsURL+")")
	}
	if r.FullURL != "" && r.FullURL != r.RunURL {
		ls = append(ls, "[📋 job summary]("+r.FullURL+")")
	}
	if len(ls) > 0 {
		b.WriteString("\n" + strings.Join(ls, " · ") + "\n")
	}
}

// counts are of requests, except known: the known failures still failing (an entry of the
// list on a case), however many requests each hit. flaky counts requests whose worst check
// is flaky (a failure its confirmation requests did not reproduce).
type counts struct{ cases, requests, failed, known, skipped, cancelled, passed, flaky int }

func count(lanes []results.Result) counts {
	t := results.TallyRequests(lanes...)
	n := counts{requests: t.Total(), failed: t.Failed(), skipped: t[results.Skip],
		cancelled: t[results.Cancelled], passed: t[results.Pass], flaky: t[results.Flaky]}
	for _, l := range lanes {
		n.cases += len(l.Cases)
	}
	for _, o := range results.KnownOutcomes(lanes...) {
		if o.State == results.KnownStateKnown {
			n.known++
		}
	}
	return n
}

func headline(worst results.Status, n counts) string {
	switch worst {
	case results.Pass:
		return fmt.Sprintf("all %s passed", words.Plural(n.requests, "request"))
	case results.Known:
		return fmt.Sprintf("passed, with %s", words.Plural(n.known, "known failure"))
	case results.Flaky:
		return fmt.Sprintf("passed, with %d flaky (not reproduced)", n.flaky)
	case results.Fail:
		return fmt.Sprintf("%d of %s failed", n.failed, words.Plural(n.requests, "request"))
	case results.Cancelled:
		return "cancelled"
	case results.Skip:
		return "skipped"
	}
	return "could not check everything"
}

// worstStatus orders as the verdict rules do: fail > error > cancelled > flaky > known > pass.
func worstStatus(lanes []results.Result) results.Status {
	if len(lanes) == 0 {
		return results.Error
	}
	var ss []results.Status
	for _, l := range lanes {
		ss = append(ss, l.Status)
	}
	return worstOf(ss)
}

// statusRank orders the statuses from best to worst; a lane still running (pending) is
// worse than any pass and better than any failure.
var statusRank = map[results.Status]int{
	results.Skip:      0,
	results.Pass:      1,
	results.Known:     2,
	results.Flaky:     3,
	statusPending:     4,
	results.Cancelled: 5,
	results.Error:     6,
	results.Fail:      7,
}

// worstOf is the worst of statuses (statusRank); a status that is not ours counts as fail.
func worstOf(statuses []results.Status) results.Status {
	w := results.Pass
	for _, s := range statuses {
		if _, ok := statusRank[s]; !ok {
			s = results.Fail
		}
		if statusRank[s] > statusRank[w] {
			w = s
		}
	}
	return w
}

// lanesHeadline is the headline of a comment that shows lanes of other runs too (or lanes
// still running): the worst of every shown lane, and the lanes named by verdict, worst first
// ("base failed · extra running · gpu2 passed").
func lanesHeadline(shown []LaneState) (results.Status, string) {
	groups := []struct {
		verb string
		in   func(results.Status) bool
	}{
		{"failed", func(s results.Status) bool { return s == results.Fail }},
		{"could not be checked", func(s results.Status) bool {
			return s != results.Fail && s != statusPending && s != results.Skip && bad(s)
		}},
		{"running", func(s results.Status) bool { return s == statusPending }},
		{"passed", func(s results.Status) bool { return !bad(s) && s != results.Skip }},
		{"skipped", func(s results.Status) bool { return s == results.Skip }},
	}
	var ss []results.Status
	var parts []string
	for _, g := range groups {
		var names []string
		for _, l := range shown {
			if g.in(l.Status) {
				names = append(names, escape(l.Name))
			}
		}
		if len(names) > 0 {
			parts = append(parts, strings.Join(names, ", ")+" "+g.verb)
		}
	}
	for _, l := range shown {
		ss = append(ss, l.Status)
	}
	return worstOf(ss), strings.Join(parts, " · ")
}

// changes says what failed or was fixed since the previous comment. The previous comment
// recorded its keys as stateKeys: a fixed one is named by the request of this run it stands
// for, and counted without a name when this run has no such request (a case removed since).
func changes(b *strings.Builder, r *Report) {
	prev := map[string]bool{}
	for _, k := range r.Previous.Failing {
		prev[k] = true
	}
	lanes := map[string]bool{}
	for _, l := range r.Lanes {
		lanes[l.Lane] = true
	}
	cur := map[string]bool{}
	var newly, fixed []string
	for _, k := range failingKeys(r.Lanes) {
		sk := stateKey(k)
		cur[sk] = true
		if !prev[sk] {
			newly = append(newly, k)
		}
	}
	names := map[string]string{}
	for _, k := range allKeys(r.Lanes) {
		names[stateKey(k)] = k
	}
	unnamed := 0
	for _, k := range r.Previous.Failing {
		lane, _, _ := strings.Cut(k, "/")
		if !lanes[lane] || cur[k] {
			continue
		}
		if name, ok := names[k]; ok {
			fixed = append(fixed, name)
		} else {
			unnamed++
		}
	}
	if len(newly) == 0 && len(fixed) == 0 && unnamed == 0 {
		b.WriteString("\nSince the previous run: no change in what fails.\n")
		return
	}
	var parts []string
	if len(newly) > 0 {
		parts = append(parts, fmt.Sprintf("**%d newly failing** (%s)", len(newly), keyList(newly)))
	}
	if n := len(fixed) + unnamed; n > 0 {
		s := fmt.Sprintf("**%d fixed**", n)
		if len(fixed) > 0 {
			s += " (" + keyList(fixed) + ")"
		}
		if r.Previous.Truncated {
			s += ", perhaps more"
		}
		parts = append(parts, s)
	}
	b.WriteString("\nSince the previous run: " + strings.Join(parts, ", ") + ".\n")
}

// allKeys names every request (lane/case/index) and case (lane/case) of lanes.
func allKeys(lanes []results.Result) []string {
	var out []string
	for _, l := range lanes {
		for _, c := range l.Cases {
			out = append(out, l.Lane+"/"+c.ID)
			for _, rr := range c.Requests {
				out = append(out, fmt.Sprintf("%s/%s/%d", l.Lane, c.ID, rr.Index))
			}
		}
	}
	return out
}

// keyList shows the first few lane/case/index keys as "case i/…".
func keyList(keys []string) string {
	const show = 5
	var out []string
	for i, k := range keys {
		if i == show {
			out = append(out, fmt.Sprintf("and %d more", len(keys)-show))
			break
		}
		parts := strings.Split(k, "/")
		s := code(strings.Join(parts[1:2], ""))
		if len(parts) > 2 {
			s += " request " + escape(parts[2])
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func distinct(lanes []results.Result, f func(results.Result) string) string {
	var vs []string
	for _, l := range lanes {
		if v := f(l); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return strings.Join(vs, ", ")
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// storeFact names the pinned git store a lane's ground truth came from, by its repository
// (owner/name of an https URL, else the folder's name) and short commit:
// "ground truth `sgl-project/ci-data-diffusion@15b30030ef98`".
func storeFact(f *results.Files) string {
	if f == nil || f.GroundTruth == nil {
		return ""
	}
	name := strings.TrimSuffix(strings.TrimSuffix(f.GroundTruth.Repo, "/"), ".git")
	if u, err := url.Parse(name); err == nil && u.Scheme == "https" && u.Path != "" {
		name = strings.TrimPrefix(u.Path, "/")
	} else {
		name = path.Base(filepath.ToSlash(name))
	}
	return "ground truth " + code(name+"@"+shortSHA(f.GroundTruth.Commit))
}

// baselineFact names the baseline file of a lane and, on a runner of one of its
// runner_overrides pools, that pool: "baselines `b200.json`, runner_overrides pool `b200-di`".
func baselineFact(f *results.Files) string {
	if f == nil || f.Baselines == "" {
		return ""
	}
	s := "baselines " + code(path.Base(filepath.ToSlash(f.Baselines)))
	if f.InPool {
		s += ", runner_overrides pool " + code(cmp.Or(f.Pool, `""`))
	}
	return s
}
