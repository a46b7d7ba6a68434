package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// problem is one line of the problems list: one cause on one case, however many requests
// and sources it hit. Checks of one group that carry values (perf, memory, similarity) are
// one problem, told by the one furthest past its limit; checks without a value are one
// problem per cause ("server crashed, exit 139").
type problem struct {
	lane, caseID string
	of           int
	reqs         []int // 0 for the case level
	top          *results.Check
	others       []*results.Check
	notRun       string          // set for requests that did not run: why
	result       *results.Result // the lane's merged result, for Report.Trend
	// For a server that crashed or did not start: what it made impossible (checks without
	// a value on that request and after, each with its request) and the requests it kept
	// from being sent. They are told in its line, not as problems of their own.
	impossible []missing
	unsent     []int
}

// missing is a check that could not be made, and the request it belongs to (0: the case).
type missing struct {
	req int
	ck  *results.Check
}

// problemList writes what a reviewer must see first: for each thing that failed, which
// request, which check, its value against its limit with the ratio, and why in a few words.
func problemList(b *strings.Builder, r *Report, lv level) {
	ps := problems(r.Lanes)
	if len(ps) == 0 {
		return
	}
	multi := len(r.Lanes) > 1
	b.WriteString("\n### Problems\n\n")
	for i, p := range ps {
		if lv.maxRows > 0 && i == lv.maxRows {
			fmt.Fprintf(b, "- _%s not shown._\n", words.Plural(len(ps)-i, "more problem"))
			break
		}
		line := p.line(multi, r.ArtifactsURL)
		if r.Trend != nil && p.top != nil {
			if t := r.Trend(p.result, p.caseID, *p.top); t != "" {
				line += " · " + t
			}
		}
		b.WriteString("- " + line + "\n")
	}
}

// problems gathers the problems of the lanes in order: lane, case, then as first met.
func problems(lanes []results.Result) []*problem {
	var out []*problem
	for li := range lanes {
		l := &lanes[li]
		for ci := range l.Cases {
			c := &l.Cases[ci]
			if !bad(c.Status) && c.Status != results.Flaky {
				continue
			}
			out = append(out, caseProblems(l, c)...)
		}
	}
	slices.SortStableFunc(out, func(a, b *problem) int { return cmp.Compare(a.severity(), b.severity()) })
	return out
}

// caseProblems are the problems of one case, in the order first met. When the case's server
// crashed or did not start, what that made impossible folds into the crash's line: the checks
// without a value on the crashed request and after (a memory peak never sampled, a perf
// record never written), and the requests after it that were never sent. When a request hung
// (hungAt), the requests the stopped server kept from being sent fold into its line the same
// way. A check with a value is a measurement and keeps its own line; a cancelled request too
// (a cancel is a cause of its own).
func caseProblems(l *results.Result, c *results.CaseResult) []*problem {
	g := caseGather{l: l, c: c, crashed: crashedAt(c), index: map[string]*problem{}}
	g.halted = g.crashed
	if g.halted < 0 {
		g.halted = hungAt(c)
	}
	for i := range c.Checks {
		g.add(0, &c.Checks[i])
	}
	var unsent []int
	for ri := range c.Requests {
		rr := &c.Requests[ri]
		for i := range rr.Checks {
			g.add(rr.Index, &rr.Checks[i])
		}
		if rr.Status == results.Skip && g.halted >= 0 && rr.Index > g.halted {
			unsent = append(unsent, rr.Index)
			continue
		}
		g.notRun(rr)
	}
	if g.halter != nil {
		g.halter.impossible, g.halter.unsent = g.impossible, unsent
	}
	for _, e := range c.Errors {
		g.out = append(g.out, &problem{lane: l.Lane, caseID: c.ID, notRun: "could not be checked: " + e})
	}
	if len(c.Requests) == 0 && len(c.Checks) == 0 && len(c.Errors) == 0 {
		g.out = append(g.out, &problem{lane: l.Lane, caseID: c.ID, notRun: "no requests ran"})
	}
	return g.out
}

// caseGather is caseProblems under way on case c of lane l.
type caseGather struct {
	l       *results.Result
	c       *results.CaseResult
	crashed int // crashedAt
	halted  int // where the case stopped: crashed, else hungAt
	out     []*problem
	index   map[string]*problem // the problems by cause
	halter  *problem            // the line of what stopped the case: the crash, else the hang
	// impossible are the checks the crash made impossible, for the crash's line.
	impossible []missing
}

// add counts check ck of request req (0: the case) into its problem, unless it passed, is
// known, or is a consequence of the crash.
func (g *caseGather) add(req int, ck *results.Check) {
	if !failed(ck.Status) || ck.Status == results.Known {
		return
	}
	k := checks.KindOf(ck.Name)
	if ck.Value == nil && k.Group != checks.GroupServer && g.crashed >= 0 && (g.crashed == 0 || req >= g.crashed) {
		g.impossible = append(g.impossible, missing{req, ck})
		return
	}
	key := string(k.Group)
	if ck.Value == nil {
		key += "\x00" + cause(ck)
	}
	p := g.index[key]
	if p == nil {
		p = &problem{lane: g.l.Lane, caseID: g.c.ID, of: len(g.c.Requests), top: ck, result: g.l}
		g.index[key] = p
		g.out = append(g.out, p)
	} else if tells(ck, p.top) {
		p.others = append(p.others, p.top)
		p.top = ck
	} else {
		p.others = append(p.others, ck)
	}
	if g.halter == nil && (serverDown(ck) || (g.crashed < 0 && req == g.halted && ck.Value == nil)) {
		g.halter = p
	}
	if !slices.Contains(p.reqs, req) {
		p.reqs = append(p.reqs, req)
	}
}

// notRun counts a request that was skipped, or cancelled before any of its checks failed,
// into the line of why it did not run.
func (g *caseGather) notRun(rr *results.RequestResult) {
	if rr.Status != results.Skip && (rr.Status != results.Cancelled || slices.ContainsFunc(rr.Checks, func(ck results.Check) bool { return failed(ck.Status) })) {
		return
	}
	why := string(rr.Status) + because(rr.Checks)
	p := g.index["\x00not run\x00"+why]
	if p == nil {
		p = &problem{lane: g.l.Lane, caseID: g.c.ID, of: len(g.c.Requests), notRun: why}
		g.index["\x00not run\x00"+why] = p
		g.out = append(g.out, p)
	}
	p.reqs = append(p.reqs, rr.Index)
}

// serverDown is a server check that failed without a value: a crash or a failed start (a
// cancel is not one: the run stopped, not the server).
func serverDown(ck *results.Check) bool {
	return (ck.Status == results.Fail || ck.Status == results.Error) && ck.Value == nil && checks.KindOf(ck.Name).Group == checks.GroupServer
}

// crashedAt is where the case's server went down: 0 when it did not start (a failed server
// check of the case), the index of the first request with a failed server check without a
// value, or -1 when it did neither.
func crashedAt(c *results.CaseResult) int {
	down := func(cs []results.Check) bool {
		return slices.ContainsFunc(cs, func(ck results.Check) bool { return serverDown(&ck) })
	}
	if down(c.Checks) {
		return 0
	}
	for _, rr := range c.Requests {
		if down(rr.Checks) {
			return rr.Index
		}
	}
	return -1
}

// hungAt is the request that stopped a case whose server did not go down: the runner stops
// sending once a request halts it (runner/run.go, the halted reason; a hung request's
// output.present fails without a value, runner/request.go measure) and records each request
// after it as not sent (runner/run.go notSent: skipped, with a skipped server.alive as its only
// check). It is the last request sent before the first of those with a failed check without a
// value (with concurrency, others may have finished after it), or -1 when no request was kept
// from being sent, or a skipped or cancelled request comes first.
func hungAt(c *results.CaseResult) int {
	first := slices.IndexFunc(c.Requests, notSentRequest)
	if first < 0 {
		return -1
	}
	for i := first - 1; i >= 0; i-- {
		rr := &c.Requests[i]
		if rr.Status == results.Skip || rr.Status == results.Cancelled {
			return -1 // a skip (an AMD video timeout) or a cancel stopped it: not a failure's line
		}
		if slices.ContainsFunc(rr.Checks, func(ck results.Check) bool {
			return (ck.Status == results.Fail || ck.Status == results.Error) && ck.Value == nil
		}) {
			return rr.Index
		}
	}
	return -1
}

// notSentRequest is a request the runner never sent (runner/run.go notSent).
func notSentRequest(rr results.RequestResult) bool {
	return rr.Status == results.Skip && len(rr.Checks) == 1 &&
		rr.Checks[0].Name == results.ServerAlive && rr.Checks[0].Status == results.Skip
}

func (p *problem) severity() int {
	if p.top == nil {
		return severity(results.Skip)
	}
	return severity(p.top.Status)
}

// line is the problem in one line of Markdown.
func (p *problem) line(multi bool, artifacts string) string {
	var b strings.Builder
	ic := "⛔"
	if p.top != nil {
		ic = icon(p.top.Status)
	} else if p.notRun != "" && len(p.reqs) > 0 {
		ic = icon(results.Skip)
	}
	b.WriteString(ic + " " + code(p.caseID))
	if multi {
		b.WriteString(" (" + escape(p.lane) + ")")
	}
	if where := requests(p.reqs, p.of); where != "" {
		b.WriteString(" " + where)
	}
	if p.top == nil {
		b.WriteString(" — " + escape(clip(words.FirstLine(p.notRun), 160)))
		return b.String()
	}
	ck := p.top
	b.WriteString(" · **" + escape(title(ck)))
	if ck.Value != nil {
		b.WriteString(" " + value(ck))
	}
	b.WriteString("**")
	if lim := limitText(ck); lim != "" && ck.Value != nil {
		b.WriteString(" vs limit " + lim)
		if r := ratio(ck); r != "" {
			b.WriteString(" (**" + r + "**")
			if sp := spreadText(ck); sp != "" {
				b.WriteString(", " + sp)
			}
			b.WriteString(")")
		}
	}
	if c := cause(ck); c != "" {
		b.WriteString(" — " + escape(clip(words.FirstLine(c), 110)))
	}
	if cq := p.consequences(); cq != "" {
		b.WriteString(cq)
	}
	if cf := ck.Confirm; cf != nil {
		b.WriteString(" · _" + escape(cf.Text()) + "_")
	}
	if k := ck.Known; k != nil && k.State == results.KnownStateExpired {
		b.WriteString(" (its known-failures entry expired on " + escape(k.Until) + ")")
	}
	if also := p.also(); also != "" {
		b.WriteString("; also " + also)
	}
	if f := p.folded(); f != "" {
		b.WriteString("; " + f)
	}
	if g := checks.KindOf(ck.Name).Group; artifacts != "" && (g == checks.GroupConsistency || g == checks.GroupRepeat) {
		b.WriteString(" · [pictures](" + artifacts + ")")
	}
	return b.String()
}

// consequences is what a crash or a failed start made impossible, in the words of its line:
// ", and made runtime peak (server_reserved) impossible for request 2/3; request 3/3 not
// sent". Checks missing on the same requests are named together, each once, at most maxAlso
// of them before "N more".
func (p *problem) consequences() string {
	var out strings.Builder
	if len(p.impossible) > 0 {
		var titles []string
		on := map[string][]int{}
		for _, f := range p.impossible {
			t := title(f.ck)
			if _, ok := on[t]; !ok {
				titles = append(titles, t)
			}
			if !slices.Contains(on[t], f.req) {
				on[t] = append(on[t], f.req)
			}
		}
		var wheres []string
		named := map[string][]string{}
		for i, t := range titles {
			w := requests(on[t], p.of)
			if w == "case" {
				w = "the case"
			}
			if _, ok := named[w]; !ok {
				wheres = append(wheres, w)
			}
			if i < maxAlso {
				named[w] = append(named[w], escape(t))
			}
		}
		var parts []string
		for _, w := range wheres {
			if len(named[w]) > 0 {
				parts = append(parts, strings.Join(named[w], ", ")+" impossible for "+w)
			}
		}
		out.WriteString(", and made " + strings.Join(parts, ", "))
		if n := len(titles) - maxAlso; n > 0 {
			out.WriteString(" (and " + words.Plural(n, "more check") + ")")
		}
	}
	if len(p.unsent) > 0 {
		out.WriteString("; " + requests(p.unsent, p.of) + " not sent")
	}
	return out.String()
}

// maxAlso is how many other checks of a problem its line names before "and N more".
const maxAlso = 3

// tells orders the checks of one problem for the one its line is told by: by status, then
// a check that is not derived from the denoising stage's steps before one that is (the
// stage, or E2E, is the cause; its steps follow from it), then by how far past its limit.
func tells(a, b *results.Check) bool {
	if sa, sb := severity(a.Status), severity(b.Status); sa != sb {
		return sa < sb
	}
	if da, db := derived(a), derived(b); da != db {
		return !da
	}
	return beyond(a) > beyond(b)
}

func derived(ck *results.Check) bool { return checks.KindOf(ck.Name).Derived }

// also names the other failing checks of a problem once each, with the ratio of the worst;
// the derived ones are counted by folded instead.
func (p *problem) also() string {
	var order []string
	worst := map[string]*results.Check{}
	for _, ck := range p.others {
		t := title(ck)
		if t == title(p.top) || derived(ck) {
			continue
		}
		if w, ok := worst[t]; !ok {
			order = append(order, t)
			worst[t] = ck
		} else if worse(ck, w) {
			worst[t] = ck
		}
	}
	var names []string
	for i, t := range order {
		if i == maxAlso {
			names = append(names, fmt.Sprintf("%d more", len(order)-maxAlso))
			break
		}
		if r := ratio(worst[t]); r != "" {
			t += " " + r
		}
		names = append(names, escape(t))
	}
	return strings.Join(names, ", ")
}

// folded counts the failing checks derived from the denoising stage's per-step times that
// the line does not name, under the stage when it failed too: "under Denoising stage: 7 step
// metrics, up to 2.29× the limit". Nine slow step figures are one slow stage, told once.
func (p *problem) folded() string {
	f := foldDerived(p.top, p.others)
	stage := ""
	if f.stage != nil {
		stage = escape(title(f.stage))
	}
	return f.text(stage)
}

// stepFold is what the failing checks derived from the denoising stage's steps come to, beside
// the check (top) that tells them: they are counted, not named.
type stepFold struct {
	top    *results.Check
	titles []string       // the derived checks, each title once, but top's
	worst  *results.Check // the one furthest past its limit
	stage  *results.Check // the denoising stage's own check among them, if it failed too
}

// foldDerived folds the derived checks of top and others (one cause's failing checks).
func foldDerived(top *results.Check, others []*results.Check) stepFold {
	f := stepFold{top: top}
	for _, ck := range append([]*results.Check{top}, others...) {
		if f.stage == nil && checks.DenoisingStageCheck(ck.Name) {
			f.stage = ck
		}
		t := title(ck)
		if !derived(ck) || t == title(top) {
			continue
		}
		if !slices.Contains(f.titles, t) {
			f.titles = append(f.titles, t)
		}
		if f.worst == nil || worse(ck, f.worst) {
			f.worst = ck
		}
	}
	return f
}

// text tells the fold in a few words, the stage named stage: "under Denoising stage: 7 step
// metrics, up to 2.29× the limit"; "" when nothing was folded.
func (f stepFold) text(stage string) string {
	if len(f.titles) == 0 {
		return ""
	}
	var s string
	switch {
	case derived(f.top):
		s = words.Plural(len(f.titles), "more denoise-step metric")
	case f.stage != nil:
		s = "under " + stage + ": " + words.Plural(len(f.titles), "step metric")
	default:
		s = words.Plural(len(f.titles), "denoise-step metric")
	}
	if r := ratio(f.worst); r != "" {
		s += ", up to " + r
	}
	return s
}

// requests names where a problem is: "case", "request 2/3", "requests 2–4 of 4",
// "requests 1, 3 of 3".
func requests(reqs []int, of int) string {
	rs := slices.Clone(reqs)
	slices.Sort(rs)
	var parts []string
	if len(rs) > 0 && rs[0] == 0 {
		parts = append(parts, "case")
		rs = rs[1:]
	}
	switch {
	case len(rs) == 1:
		parts = append(parts, fmt.Sprintf("request %d/%d", rs[0], of))
	case len(rs) > 1:
		parts = append(parts, "requests "+ranges(rs)+" of "+strconv.Itoa(of))
	}
	return strings.Join(parts, ", ")
}

// ranges writes sorted indices as "1–3, 5".
func ranges(v []int) string {
	var parts []string
	for i := 0; i < len(v); {
		j := i
		for j+1 < len(v) && v[j+1] == v[j]+1 {
			j++
		}
		switch j {
		case i:
			parts = append(parts, strconv.Itoa(v[i]))
		case i + 1:
			parts = append(parts, strconv.Itoa(v[i]), strconv.Itoa(v[j]))
		default:
			parts = append(parts, strconv.Itoa(v[i])+"–"+strconv.Itoa(v[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// cause is why a check did not pass in a few words: its Cause, else how far its value is
// from its baseline, else (without a value) the first line of its detail. "" when value and
// limit say it all.
func cause(ck *results.Check) string {
	if ck.Cause != "" {
		return ck.Cause
	}
	if ck.Value != nil && ck.Baseline != nil && *ck.Baseline != 0 {
		return fmt.Sprintf("%+.0f %% vs baseline %s", (*ck.Value / *ck.Baseline - 1)*100, fmtValue(*ck.Baseline, kindOf(ck)))
	}
	if ck.Value != nil {
		return ""
	}
	return words.FirstLine(ck.Detail)
}
