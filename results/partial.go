package results

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/diffusion-check/diffusion-check/checks"
)

// ReadOut reads the results that one run wrote into its --out folder dir. results.json is
// read as it is unless it is marked incomplete (written at the start of the run, or when it
// was cancelled, and never replaced by the final write) or missing: then the requests that
// requests.jsonl holds are put into it (complete), or make it up when there is no
// results.json at all, and the result stays marked incomplete, with an error, so that it is
// never a pass and its failures show. The warnings say what was rebuilt and what was skipped.
func ReadOut(ctx context.Context, dir string) (*checks.Result, []error, error) {
	resPath, reqPath := filepath.Join(dir, ResultsFile), filepath.Join(dir, RequestsFile)
	res, err := readResultsFile(ctx, resPath)
	missing := errors.Is(err, fs.ErrNotExist)
	switch {
	case missing:
	case err != nil:
		return nil, nil, err
	case res.Incomplete == "":
		return res, nil, nil
	}
	reqs, warnings, rerr := ReadRequests(ctx, reqPath)
	switch {
	case errors.Is(rerr, fs.ErrNotExist) && missing:
		return nil, nil, fmt.Errorf("%s: neither %s nor %s: %w", dir, ResultsFile, RequestsFile, fs.ErrNotExist)
	case errors.Is(rerr, fs.ErrNotExist):
		warnings = append(warnings, fmt.Errorf("%s is incomplete (%s) and there is no %s to complete it from", resPath, res.Incomplete, reqPath))
		return res, warnings, nil
	case rerr != nil:
		return nil, nil, rerr
	}
	if missing {
		res = &checks.Result{Schema: checks.Schema, Partition: checks.Partition{Index: 0, Total: 1}, Cases: []checks.CaseResult{}}
		res.Incomplete = fmt.Sprintf("rebuilt from %s: %s is missing", reqPath, resPath)
		res.Errors = append(res.Errors, fmt.Sprintf(
			"%s is missing: this result is rebuilt from the %d request lines of %s (its suite, lane and partition are not known)",
			resPath, len(reqs), reqPath))
	}
	warnings = append(warnings, complete(res, reqs)...)
	warnings = append(warnings, fmt.Errorf("%s: %s is incomplete (%s): rebuilt with the %d request lines of %s",
		dir, ResultsFile, res.Incomplete, len(reqs), RequestsFile))
	if err := requestIndexes(res); err != nil {
		return nil, nil, fmt.Errorf("%s completed from %s: %w", resPath, reqPath, err)
	}
	return res, warnings, nil
}

// complete puts into res, a results.json marked incomplete, the requests that requests.jsonl
// holds (reqs, in file order; the last line of a request is its verdict): each replaces the
// request of its case and index that res has, and a case res lacks is added with its requests,
// the indexes without a line marked as having no result. It recomputes the statuses. Lines
// that do not fit (an index outside the case's count) are skipped, and returned as warnings.
func complete(res *checks.Result, reqs []checks.RequestResult) []error {
	var warnings []error
	type key struct {
		index   int
		confirm bool
	}
	byCase := map[string]map[key]checks.RequestResult{}
	var order []string
	for _, rr := range reqs {
		m := byCase[rr.Case]
		if m == nil {
			m = map[key]checks.RequestResult{}
			byCase[rr.Case] = m
			order = append(order, rr.Case)
		}
		rr.Revised = false
		m[key{rr.Index, rr.Confirm}] = rr
	}
	at := map[string]int{}
	for i, c := range res.Cases {
		at[c.ID] = i
	}
	for _, id := range slices.Clone(order) {
		if _, ok := at[id]; ok {
			continue
		}
		of := 0
		for k, rr := range byCase[id] {
			if !k.confirm {
				of = max(of, rr.Of)
			}
		}
		// A hostile file could claim a billion requests for one line: that many placeholders
		// are not made.
		if of > maxRebuiltRequests {
			warnings = append(warnings, fmt.Errorf("case %s: request lines say it has %d requests, more than the %d a rebuilt case may have: skipped",
				id, of, maxRebuiltRequests))
			delete(byCase, id)
			order = slices.DeleteFunc(order, func(o string) bool { return o == id })
			continue
		}
		c := checks.CaseResult{ID: id}
		for i := 1; i <= of; i++ {
			c.Requests = append(c.Requests, noResult(id, i, of))
		}
		at[id] = len(res.Cases)
		res.Cases = append(res.Cases, c)
	}
	for _, id := range order {
		c := &res.Cases[at[id]]
		var confirms []checks.RequestResult
		keys := slices.SortedFunc(maps.Keys(byCase[id]), func(a, b key) int { return cmp.Compare(a.index, b.index) })
		for _, k := range keys {
			rr := byCase[id][k]
			switch {
			case k.confirm:
				confirms = append(confirms, rr)
			case rr.Index < 1 || rr.Index > len(c.Requests) || rr.Of != len(c.Requests):
				warnings = append(warnings, fmt.Errorf("case %s: request line %d/%d does not fit the case's %d requests: skipped", id, rr.Index, rr.Of, len(c.Requests)))
			default:
				c.Requests[rr.Index-1] = rr
			}
		}
		// Confirmation requests in the order sent, as far as they go without a gap.
		slices.SortFunc(confirms, func(a, b checks.RequestResult) int { return cmp.Compare(a.Index, b.Index) })
		c.Confirm = nil
		for i, rr := range confirms {
			if rr.Index != i+1 || rr.Of != confirms[0].Of {
				warnings = append(warnings, fmt.Errorf("case %s: confirmation request lines after %d/%d are not in order: skipped", id, i, confirms[0].Of))
				break
			}
			c.Confirm = append(c.Confirm, rr)
		}
		// Its case-level verdicts (perf.load, load and warm-up memory) are not in any line.
		c.Status = ""
	}
	checks.Finalize(res)
	return warnings
}

// maxRebuiltRequests bounds the requests of a case that only requests.jsonl knows.
const maxRebuiltRequests = 100_000

// noResult is a request of a rebuilt result that no line of requests.jsonl holds: the run
// ended before it finished. An error, never a pass.
func noResult(caseID string, i, of int) checks.RequestResult {
	return checks.RequestResult{
		Case: caseID, Index: i, Of: of, Status: checks.Cancelled,
		Checks: []checks.Check{{Name: checks.ServerAlive, Status: checks.Cancelled, Detail: "no result: the run ended before this request finished"}},
	}
}
