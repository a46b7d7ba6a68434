package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
)

// problem is one line of the problems list: one cause on one case, however many requests
// and sources it hit. Checks of one group that carry values (perf, memory, similarity) are
// one problem, told by the one furthest past its limit; checks without a value are one
// problem per cause ("server crashed, exit 139").
type problem struct {
	lane, caseID string
	of           int
	reqs         []int // 0 for the case level
	top          *checks.Check
	others       []*checks.Check
	notRun       string         // set for requests that did not run: why
	result       *checks.Result // the lane's merged result, for Report.Trend
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
			fmt.Fprintf(b, "- _%s not shown._\n", plural(len(ps)-i, "more problem"))
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
func problems(lanes []checks.Result) []*problem {
	var out []*problem
	for li := range lanes {
		l := &lanes[li]
		for ci := range l.Cases {
			c := &l.Cases[ci]
			if !bad(c.Status) && c.Status != checks.Flaky {
				continue
			}
			index := map[string]*problem{}
			add := func(req int, ck *checks.Check) {
				if !failed(ck.Status) || ck.Status == checks.Known {
					return
				}
				k := checks.KindOf(ck.Name)
				key := string(k.Group)
				if ck.Value == nil {
					key += "\x00" + cause(ck)
				}
				p := index[key]
				if p == nil {
					p = &problem{lane: l.Lane, caseID: c.ID, of: len(c.Requests), top: ck, result: l}
					index[key] = p
					out = append(out, p)
				} else if worse(ck, p.top) {
					p.others = append(p.others, p.top)
					p.top = ck
				} else {
					p.others = append(p.others, ck)
				}
				if !slices.Contains(p.reqs, req) {
					p.reqs = append(p.reqs, req)
				}
			}
			for i := range c.Checks {
				add(0, &c.Checks[i])
			}
			for ri := range c.Requests {
				rr := &c.Requests[ri]
				for i := range rr.Checks {
					add(rr.Index, &rr.Checks[i])
				}
				if rr.Status == checks.Skip || (rr.Status == checks.Cancelled && !slices.ContainsFunc(rr.Checks, func(ck checks.Check) bool { return failed(ck.Status) })) {
					why := string(rr.Status) + because(rr.Checks)
					p := index["\x00not run\x00"+why]
					if p == nil {
						p = &problem{lane: l.Lane, caseID: c.ID, of: len(c.Requests), notRun: why}
						index["\x00not run\x00"+why] = p
						out = append(out, p)
					}
					p.reqs = append(p.reqs, rr.Index)
				}
			}
			for _, e := range c.Errors {
				out = append(out, &problem{lane: l.Lane, caseID: c.ID, notRun: "could not be checked: " + e})
			}
			if len(c.Requests) == 0 && len(c.Checks) == 0 && len(c.Errors) == 0 {
				out = append(out, &problem{lane: l.Lane, caseID: c.ID, notRun: "no requests ran"})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *problem) int { return cmp.Compare(a.severity(), b.severity()) })
	return out
}

func (p *problem) severity() int {
	if p.top == nil {
		return severity(checks.Skip)
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
		ic = icon(checks.Skip)
	}
	b.WriteString(ic + " " + code(p.caseID))
	if multi {
		b.WriteString(" (" + escape(p.lane) + ")")
	}
	if where := requests(p.reqs, p.of); where != "" {
		b.WriteString(" " + where)
	}
	if p.top == nil {
		b.WriteString(" — " + escape(clip(firstLine(p.notRun), 160)))
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
		b.WriteString(" — " + escape(clip(firstLine(c), 110)))
	}
	if cf := ck.Confirm; cf != nil {
		b.WriteString(" · _" + escape(cf.Text()) + "_")
	}
	if k := ck.Known; k != nil && k.State == checks.KnownStateExpired {
		b.WriteString(" (its known-failures entry expired on " + escape(k.Until) + ")")
	}
	if also := p.also(); also != "" {
		b.WriteString("; also " + also)
	}
	if g := checks.KindOf(ck.Name).Group; artifacts != "" && (g == checks.GroupConsistency || g == checks.GroupRepeat) {
		b.WriteString(" · [pictures](" + artifacts + ")")
	}
	return b.String()
}

// maxAlso is how many other checks of a problem its line names before "and N more".
const maxAlso = 3

// also names the other failing checks of a problem once each, with the ratio of the worst.
func (p *problem) also() string {
	var order []string
	worst := map[string]*checks.Check{}
	for _, ck := range p.others {
		t := title(ck)
		if t == title(p.top) {
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
func cause(ck *checks.Check) string {
	if ck.Cause != "" {
		return ck.Cause
	}
	if ck.Value != nil && ck.Baseline != nil && *ck.Baseline != 0 {
		return fmt.Sprintf("%+.0f %% vs baseline %s", (*ck.Value / *ck.Baseline - 1)*100, fmtValue(*ck.Baseline, kindOf(ck)))
	}
	if ck.Value != nil {
		return ""
	}
	return firstLine(ck.Detail)
}
