package report

import (
	"cmp"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// knownFailures lists each known-failures entry once per case (results.KnownOutcomes), over
// every request of every partition: still failing (with how many requests it hit), fixed
// (it passed in every request: remove the entry) or expired (counts as a failure).
func knownFailures(b *strings.Builder, lanes []results.Result) {
	outs := results.KnownOutcomes(lanes...)
	if len(outs) == 0 {
		return
	}
	rank := map[string]int{results.KnownStateExpired: 0, results.KnownStateFixed: 1, results.KnownStateKnown: 2}
	slices.SortStableFunc(outs, func(a, b results.KnownOutcome) int { return cmp.Compare(rank[a.State], rank[b.State]) })
	b.WriteString("\n### Known failures\n\n| | Case | Checks | Hit | Reason | State |\n|---|---|---|---|---|---|\n")
	for _, o := range outs {
		until := ""
		if o.Entry.Until != "" {
			until = " until " + escape(o.Entry.Until)
		}
		var ic, state string
		switch o.State {
		case results.KnownStateKnown:
			ic, state = icon(results.Known), "known"+until+": reported, not red"
		case results.KnownStateFixed:
			ic, state = icon(results.Pass), "**passes in every request: remove it from the list**"
		case results.KnownStateExpired:
			ic, state = icon(results.Fail), "**expired"+strings.Replace(until, "until", "on", 1)+": counts as a failure**"
		default:
			ic, state = icon(results.Error), escape(o.State)
		}
		reason := escape(o.Entry.Reason)
		if l := o.Entry.Link; safeLink(l) {
			reason += " ([link](" + l + "))"
		} else if l != "" {
			reason += " (link: " + escape(l) + ")"
		}
		var names []string
		for _, n := range o.Checks {
			names = append(names, code(n))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d/%d | %s | %s |\n", ic, code(o.Case), strings.Join(names, " "), len(o.Hit), o.Of, reason, state)
	}
}

// linkRE is what a link destination from a known-failures file may hold: an https URL of
// characters that cannot end the destination or the link ("(", ")", "<", ">", spaces) or
// open other Markdown.
var linkRE = regexp.MustCompile(`^https://[A-Za-z0-9._~:/?#@!$&'+,;=%-]+$`)

// safeLink reports whether an untrusted URL can be a link as written: https, a host, and
// nothing that would break out of the link.
func safeLink(s string) bool {
	u, err := url.Parse(s)
	return err == nil && linkRE.MatchString(s) && u.Host != "" && len(s) <= 500
}
