package results

import (
	"cmp"
	"fmt"
	"slices"
)

// KnownOutcome is what one known-failures entry came to on one case of a lane, over every
// request of every partition given to KnownOutcomes: each entry and case is told once,
// however many requests and checks it matched.
type KnownOutcome struct {
	Lane, Case string
	// Entry is the matched entry (its State is the outcome's).
	Entry KnownFailure
	// State is KnownStateExpired if a matched check failed past the entry's Until, else
	// KnownStateKnown if a matched check failed (the entry still describes a failure), else
	// KnownStateFixed: every matched check passed in every request, remove the entry.
	State string
	// Checks names the matched checks that failed, or, when fixed, every matched check.
	Checks []string
	// Hit lists the requests (1-based; 0 for the case-level checks) where a matched check
	// failed; Of is how many requests the entry was checked on (the case level counts as one
	// when it has matched checks and no requests matched).
	Hit []int
	Of  int
}

// KnownOutcomes sums up, per lane, case and known-failures entry, the checks that MarkKnown
// marked, in the order they were first met. A failure in any request makes the entry known
// (or expired); it is fixed only when every matched check passed in every request of every
// case of the lane it matched (a case where it passed while it fails on another is left
// out). Give it every partition of a lane (merged or not) to judge "fixed" for the lane.
func KnownOutcomes(results ...Result) []KnownOutcome {
	t := knownTally{index: map[knownKey]*tallied{}}
	for _, r := range results {
		for _, c := range r.Cases {
			t.addCase(cmp.Or(c.Lane, r.Lane), c)
		}
	}
	return t.outcomes()
}

// knownTally is KnownOutcomes under way: one outcome per lane, case and entry, in the order
// first met.
type knownTally struct {
	order []*tallied
	index map[knownKey]*tallied
}

// knownKey names an outcome; with an empty id, an entry over every case of a lane.
type knownKey struct{ lane, id, entry string }

// tallied is one outcome under way, with the requests its entry was checked on.
type tallied struct {
	KnownOutcome
	reqs map[int]bool
}

// addCase counts the marked checks of case c of lane: its case-level checks (request 0),
// then each request's.
func (t *knownTally) addCase(lane string, c CaseResult) {
	for _, ck := range c.Checks {
		t.add(lane, c.ID, 0, ck)
	}
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			t.add(lane, c.ID, rr.Index, ck)
		}
	}
}

// add counts check ck of request req (0: case level) of case id, if an entry marked it.
func (t *knownTally) add(lane, id string, req int, ck Check) {
	if ck.Known == nil {
		return
	}
	o := t.outcome(knownKey{lane, id, entryKey(*ck.Known)}, *ck.Known)
	o.reqs[req] = true
	if ck.Known.State == KnownStateFixed {
		o.passed(ck.Name)
	} else {
		o.failed(req, ck.Name, ck.Known.State)
	}
}

// outcome is the outcome named k, started as fixed (nothing failed yet) from entry kf when
// it is the first check k is met for.
func (t *knownTally) outcome(k knownKey, kf KnownFailure) *tallied {
	if o := t.index[k]; o != nil {
		return o
	}
	o := &tallied{
		KnownOutcome: KnownOutcome{Lane: k.lane, Case: k.id, Entry: kf, State: KnownStateFixed},
		reqs:         map[int]bool{},
	}
	t.index[k] = o
	t.order = append(t.order, o)
	return o
}

// passed counts a matched check that passed: named only while nothing has failed.
func (o *tallied) passed(name string) {
	if o.State == KnownStateFixed {
		o.Checks = appendOnce(o.Checks, name)
	}
}

// failed counts a matched check that failed in request req with the entry in state: the
// first failure forgets the passing names, and an expired entry outranks a known one.
func (o *tallied) failed(req int, name, state string) {
	if o.State == KnownStateFixed {
		o.Checks = nil
		o.State = state
	} else if state == KnownStateExpired {
		o.State = state
	}
	o.Checks = appendOnce(o.Checks, name)
	o.Hit = appendOnce(o.Hit, req)
}

// outcomes are the outcomes in the order first met, finished: an entry (a case glob) that
// still fails on one case of a lane is not fixed on its other cases, so those, which simply
// passed, are left out.
func (t *knownTally) outcomes() []KnownOutcome {
	failing := map[knownKey]bool{}
	for k, o := range t.index {
		if o.State != KnownStateFixed {
			failing[knownKey{k.lane, "", k.entry}] = true
		}
	}
	var res []KnownOutcome
	for _, o := range t.order {
		if o.State == KnownStateFixed && failing[knownKey{o.Lane, "", entryKey(o.Entry)}] {
			continue
		}
		res = append(res, o.finish())
	}
	return res
}

// finish is the outcome told: how many requests it was checked on (the case level is not a
// request when requests were checked too), the failed requests in order, and the entry's
// state set to the outcome's.
func (o *tallied) finish() KnownOutcome {
	out := o.KnownOutcome
	out.Of = len(o.reqs)
	if o.reqs[0] && len(o.reqs) > 1 {
		out.Of--
	}
	out.Hit = slices.Clone(o.Hit)
	slices.Sort(out.Hit)
	out.Entry.State = o.State
	return out
}

// appendOnce appends v to s unless s holds it already.
func appendOnce[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// entryKey tells known-failures entries apart: by where they are written, else (results of
// an older version) by what they say.
func entryKey(kf KnownFailure) string {
	return cmp.Or(kf.Entry, kf.Reason+"\x00"+kf.Link+"\x00"+kf.Until)
}

// String tells the outcome in one line, for a log: "wan audio.* (k.yaml:3): known, failed
// in 1 of 3 requests (audio.rms_db_diff)".
func (o KnownOutcome) String() string {
	src := ""
	if o.Entry.Entry != "" {
		src = " (" + o.Entry.Entry + ")"
	}
	switch o.State {
	case KnownStateFixed:
		return fmt.Sprintf("%s%s: %s passed in every request the entry covers (%d): fixed, remove it from the list", o.Case, src, joinNames(o.Checks), o.Of)
	case KnownStateExpired:
		return fmt.Sprintf("%s%s: the entry expired on %s; %s failed in %d of %d requests and counts", o.Case, src, o.Entry.Until,
			joinNames(o.Checks), len(o.Hit), o.Of)
	}
	return fmt.Sprintf("%s%s: known failure, %s failed in %d of %d requests", o.Case, src, joinNames(o.Checks), len(o.Hit), o.Of)
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "no check"
	case 1:
		return names[0]
	}
	s := names[0]
	for _, n := range names[1 : len(names)-1] {
		s += ", " + n
	}
	return s + " and " + names[len(names)-1]
}
