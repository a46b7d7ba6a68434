package checks

import (
	"fmt"
	"slices"

	"github.com/diffusion-check/diffusion-check/results"
)

// confirmable reports whether a failed check is one that confirmation requests re-measure: a
// request's perf or memory check that failed by crossing its limit with a measured value.
// A value that is missing or not a measurement, a crash, an error or a consistency failure
// is not noise, and a known failure is already explained.
func confirmable(c results.Check) bool {
	if c.Status != results.Fail || c.Value == nil || c.Limit == nil {
		return false
	}
	g := KindOf(c.Name).Group
	return g == GroupPerf || g == GroupMemory
}

// confirmKey names a check across requests: the same check of the same source.
func confirmKey(c results.Check) string { return c.Name + "\x00" + c.Source }

// ConfirmTargets returns the checks of requests that confirmation requests would re-measure
// (confirmable), each once, keyed as LabelConfirmed matches them. A check a known-failures
// entry covers is Known by then (MarkKnown runs in the request's judgement), so it is not a
// target; one whose entry expired still fails, and is.
func ConfirmTargets(requests []results.RequestResult) map[string]bool {
	out := map[string]bool{}
	for _, rr := range requests {
		for _, c := range rr.Checks {
			if confirmable(c) {
				out[confirmKey(c)] = true
			}
		}
	}
	return out
}

// Reproduced reports whether every target has failed again in some confirmation request,
// so that more of them cannot change a label.
func Reproduced(targets map[string]bool, confirm []results.RequestResult) bool {
	for k := range targets {
		if tallyConfirm(k, confirm).Failed == 0 {
			return false
		}
	}
	return true
}

// tallyConfirm counts, over the confirmation requests, how the check keyed k came out.
func tallyConfirm(k string, confirm []results.RequestResult) results.Confirmation {
	var c results.Confirmation
	for _, rr := range confirm {
		st := results.Status("")
		for _, ck := range rr.Checks {
			if confirmKey(ck) == k {
				st = ck.Status
				break
			}
		}
		switch st {
		case results.Fail:
			c.Failed++
		case results.Pass:
			c.Passed++
		default: // not made, skipped, errored, cancelled: no verdict either way
			c.Unmeasured++
		}
	}
	c.Of = len(confirm)
	return c
}

// LabelConfirmed returns the requests with every target check (ConfirmTargets) labelled
// with what the confirmation requests said (Check.Confirm), with maxConfirm the case's confirm
// and note why confirmation stopped short, if it did. With flaky (on_unconfirmed: flaky), a
// check that was not reproduced becomes Flaky; every other label leaves the status as it
// was, so a failure is never hidden. Request statuses are not recomputed, and the requests
// given are not changed. It returns too how many checks it labelled and how many became
// flaky.
func LabelConfirmed(
	requests []results.RequestResult,
	targets map[string]bool,
	confirm []results.RequestResult,
	maxConfirm int,
	note string,
	flaky bool,
) (out []results.RequestResult, labelled, flakies int) {
	out = slices.Clone(requests)
	for i := range out {
		out[i].Checks = slices.Clone(out[i].Checks)
		for j := range out[i].Checks {
			c := &out[i].Checks[j]
			k := confirmKey(*c)
			if c.Status != results.Fail || !targets[k] {
				continue
			}
			cf := tallyConfirm(k, confirm)
			cf.Max, cf.Note = maxConfirm, note
			switch {
			case cf.Failed > 0:
				cf.State = results.ConfirmReproduced
			case cf.Unmeasured == 0 && cf.Passed > 0:
				cf.State = results.ConfirmNotReproduced
			default:
				cf.State = results.ConfirmInconclusive
				if cf.Note == "" && cf.Of == 0 {
					cf.Note = "no confirmation request was sent"
				}
			}
			c.Confirm = &cf
			labelled++
			if flaky && cf.State == results.ConfirmNotReproduced {
				c.Status = results.Flaky
				flakies++
			}
		}
	}
	return out, labelled, flakies
}

// FlakyNote is the remark a passing status carries for flaky requests, e.g. "1 flaky:
// perf.e2e not reproduced in 0/2": how many requests have a flaky check, and the first flaky
// check met with its count, then how many other checks were flaky. "" when none is.
func FlakyNote(runs ...results.Result) string {
	var first *results.Check
	requests := 0
	others := map[string]bool{}
	for _, r := range runs {
		for _, c := range r.Cases {
			for _, rr := range c.Requests {
				hit := false
				for i, ck := range rr.Checks {
					if ck.Status != results.Flaky || ck.Confirm == nil {
						continue
					}
					hit = true
					if first == nil {
						first = &rr.Checks[i]
					} else if ck.Name != first.Name {
						others[ck.Name] = true
					}
				}
				if hit {
					requests++
				}
			}
		}
	}
	if first == nil {
		return ""
	}
	s := fmt.Sprintf("%d flaky: %s not reproduced in %d/%d", requests, first.Name, first.Confirm.Failed, first.Confirm.Of)
	if len(others) > 0 {
		s += fmt.Sprintf(" (+%d more %s)", len(others), map[bool]string{true: "check", false: "checks"}[len(others) == 1])
	}
	return s
}
