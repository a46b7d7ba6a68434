package baselines

import (
	"fmt"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// Source is what the regenerated values of one scenario were taken from: the worst of
// Requests requests (those with a perf record) in Partitions results files.
type Source struct {
	Requests, Partitions int
}

func (s Source) String() string {
	return words.Plural(s.Requests, "request") + " × " + words.Plural(s.Partitions, "partition")
}

// hasPerf reports whether a request carries the server's timings (a perf record), or for a
// realtime request a whole session's E2E (a session that delivered its output: one cut short
// has the E2E of the chunks it sent); only those count towards a scenario's timings.
func hasPerf(rr results.RequestResult) bool {
	if len(rr.RealtimeChunks) > 0 {
		return checks.SessionE2E(rr.RealtimeChunks) > 0 && rr.Output != nil
	}
	return rr.ServerTotalMs > 0 || len(rr.Stages) > 0 || len(rr.StepsMs) > 0
}

// perfAsked reports whether the run asked for the request's perf record: it has a
// perf.record check that was not skipped. A case with checks.perf_record off (a server that
// writes no performance.log) or a text case asks none; its memory and load still make a
// baseline (Regenerate).
func perfAsked(rr results.RequestResult) bool {
	for _, ck := range rr.Checks {
		if ck.Name == results.PerfRecord {
			return ck.Status != results.Skip
		}
	}
	return false
}

// Sources counts, per case id, the requests whose timings Regenerate takes the worst of and
// the results files (partitions) they came from.
func Sources(runs []*results.Result) map[string]Source {
	out := map[string]Source{}
	for _, r := range runs {
		seen := map[string]bool{}
		for _, cr := range r.Cases {
			for _, rr := range cr.Requests {
				if !hasPerf(rr) {
					continue
				}
				s := out[cr.ID]
				s.Requests++
				if !seen[cr.ID] {
					seen[cr.ID] = true
					s.Partitions++
				}
				out[cr.ID] = s
			}
		}
	}
	return out
}

// Unfit lists why results must not become a baseline, one problem per case: a case that did
// not pass (a request failed or errored, the server did not start, the run was cancelled) or
// that is incomplete (a request skipped, missing, or without the perf record it asked for). A baseline is
// the worst value over N repetitions; from a failed run it records the failure as the
// norm, and from fewer requests it is not the worst of N.
func Unfit(runs []*results.Result) []string {
	var out []string
	for _, r := range runs {
		where := fmt.Sprintf("lane %q partition %d/%d", r.Lane, r.Partition.Index, r.Partition.Total)
		for _, cr := range r.Cases {
			if st := cr.Status; st != results.Pass && st != results.Known { // judged when read (cmd)
				out = append(out, fmt.Sprintf("%s case %s: %s%s", where, cr.ID, st, firstFailure(cr)))
				continue
			}
			var noPerf []int
			for _, rr := range cr.Requests {
				if !hasPerf(rr) && perfAsked(rr) {
					noPerf = append(noPerf, rr.Index)
				}
			}
			want := len(cr.Requests)
			if len(cr.Requests) > 0 {
				want = cr.Requests[0].Of
			}
			switch {
			case len(cr.Requests) < want:
				out = append(out, fmt.Sprintf("%s case %s: incomplete: %d of %d requests recorded", where, cr.ID, len(cr.Requests), want))
			case len(noPerf) > 0:
				out = append(out, fmt.Sprintf("%s case %s: incomplete: request(s) %v of %d have no perf record", where, cr.ID, noPerf, want))
			}
		}
	}
	return out
}

// firstFailure names the first request that did not pass and its first problem.
func firstFailure(cr results.CaseResult) string {
	for _, rr := range cr.Requests {
		if rr.Status == results.Pass || rr.Status == results.Known {
			continue
		}
		for _, ck := range rr.Checks {
			if ck.Status == results.Fail || ck.Status == results.Error || ck.Status == results.Skip || ck.Status == results.Cancelled || ck.Status == results.Flaky {
				return fmt.Sprintf(" (request %d/%d %s: %s %s)", rr.Index, rr.Of, rr.Status, ck.Name, ck.Status)
			}
		}
		return fmt.Sprintf(" (request %d/%d %s)", rr.Index, rr.Of, rr.Status)
	}
	for _, ck := range cr.Checks {
		if ck.Status != results.Pass {
			return fmt.Sprintf(" (%s %s)", ck.Name, ck.Status)
		}
	}
	return ""
}
