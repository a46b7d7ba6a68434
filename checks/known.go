package checks

import (
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/diffusion-check/diffusion-check/results"
)

// KnownEntry is one entry of a known-failures file.
type KnownEntry struct {
	Case  string // case id, or a glob pattern (path.Match) over case ids
	Check string // check name glob pattern, e.g. "perf.stage.*"
	// Request is the 1-based request index the entry is limited to; 0 means every request
	// and the case-level checks.
	Request int
	Reason  string
	Link    string
	Until   string // YYYY-MM-DD, inclusive; empty means no end
	// Source is "file:line" of the entry, for messages.
	Source string
}

// matches reports whether the entry covers check name of case id, request index req (0 for a
// case-level check). Patterns were validated when the file was read; a bad one matches nothing.
func (e KnownEntry) matches(id string, req int, name string) bool {
	if e.Request != 0 && e.Request != req {
		return false
	}
	okCase, err1 := path.Match(e.Case, id)
	okCheck, err2 := path.Match(e.Check, name)
	return err1 == nil && err2 == nil && okCase && okCheck
}

// expired reports whether today (a date; its UTC calendar day counts) is after Until.
func (e KnownEntry) expired(today time.Time) bool {
	return e.Until != "" && today.UTC().Format(time.DateOnly) > e.Until
}

// MarkKnown returns cs, the checks of case id's request req (0 for the case-level checks),
// with the known-failure entries applied; the first matching entry wins:
//   - a failed check becomes Known, with Check.Known filled (State "known");
//   - a failed check whose entry is past Until stays failed, with State "expired";
//   - a check that passes keeps passing, with State "fixed": the entry can be removed;
//   - skipped and errored checks are left alone (an error means "could not check", which a
//     known failure must not hide), and so is a check already marked.
//
// cs itself is not changed. Statuses of requests and cases are not recomputed.
func MarkKnown(entries []KnownEntry, id string, req int, cs []results.Check, today time.Time) []results.Check {
	if len(entries) == 0 {
		return cs
	}
	out := slices.Clone(cs)
	for k := range out {
		c := &out[k]
		i := slices.IndexFunc(entries, func(e KnownEntry) bool { return e.matches(id, req, c.Name) })
		if i < 0 || c.Known != nil {
			continue
		}
		e := entries[i]
		kf := &results.KnownFailure{Reason: e.Reason, Link: e.Link, Until: e.Until, Entry: e.Source}
		switch c.Status {
		case results.Fail:
			if e.expired(today) {
				kf.State = results.KnownStateExpired
				c.Detail = fmt.Sprintf("known failure expired on %s (%s): %s", e.Until, e.Source, c.Detail)
			} else {
				kf.State = results.KnownStateKnown
				c.Status = results.Known
			}
		case results.Pass:
			kf.State = results.KnownStateFixed
		default:
			continue
		}
		c.Known = kf
	}
	return out
}

// UnusedKnown returns the entries that are the first match (the one that wins) of no check
// of res at all, case-level or of a request, whatever its status: a caller reports them as
// warnings, since the case may not have run here.
func UnusedKnown(res results.Result, entries []KnownEntry) []KnownEntry {
	used := make([]bool, len(entries))
	mark := func(id string, req int, c results.Check) {
		if i := slices.IndexFunc(entries, func(e KnownEntry) bool { return e.matches(id, req, c.Name) }); i >= 0 {
			used[i] = true
		}
	}
	for _, cr := range res.Cases {
		for _, c := range cr.Checks {
			mark(cr.ID, 0, c)
		}
		for _, rr := range cr.Requests {
			for _, c := range rr.Checks {
				mark(cr.ID, rr.Index, c)
			}
		}
	}
	var unused []KnownEntry
	for i, e := range entries {
		if !used[i] {
			unused = append(unused, e)
		}
	}
	return unused
}
