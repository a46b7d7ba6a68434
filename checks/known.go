package checks

import (
	"fmt"
	"path"
	"time"
)

// The states of KnownFailure.State.
const (
	KnownStateKnown   = "known"
	KnownStateFixed   = "fixed"
	KnownStateExpired = "expired"
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

// ApplyKnown applies known-failure entries to every check of res (case-level and per
// request); the first matching entry wins:
//   - a failed check becomes Known, with Check.Known filled (State "known");
//   - a failed check whose entry is past Until stays failed, with State "expired";
//   - a check that passes keeps passing, with State "fixed": the entry can be removed;
//   - skipped and errored checks are left alone (an error means "could not check", which a
//     known failure must not hide).
//
// It does not recompute statuses (checks.Finalize does). It returns the entries that matched
// no check at all, which a caller reports as warnings: the case may not have run here.
func ApplyKnown(res *Result, entries []KnownEntry, today time.Time) (unused []KnownEntry) {
	used := make([]bool, len(entries))
	apply := func(id string, req int, c *Check) {
		for i, e := range entries {
			if !e.matches(id, req, c.Name) {
				continue
			}
			used[i] = true
			kf := &KnownFailure{Reason: e.Reason, Link: e.Link, Until: e.Until}
			switch c.Status {
			case Fail:
				if e.expired(today) {
					kf.State = KnownStateExpired
					c.Detail = fmt.Sprintf("known failure expired on %s (%s): %s", e.Until, e.Source, c.Detail)
				} else {
					kf.State = KnownStateKnown
					c.Status = Known
				}
			case Pass:
				kf.State = KnownStateFixed
			default:
				return
			}
			c.Known = kf
			return
		}
	}
	for ci := range res.Cases {
		cr := &res.Cases[ci]
		for k := range cr.Checks {
			apply(cr.ID, 0, &cr.Checks[k])
		}
		for ri := range cr.Requests {
			rr := &cr.Requests[ri]
			for k := range rr.Checks {
				apply(cr.ID, rr.Index, &rr.Checks[k])
			}
		}
	}
	for i, e := range entries {
		if !used[i] {
			unused = append(unused, e)
		}
	}
	return unused
}
