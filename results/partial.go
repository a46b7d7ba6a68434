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
)

// readOut reads the results that one run wrote into its --out folder dir. results.json is
// read as it is unless it is marked incomplete (written at the start of the run, or when it
// was cancelled, and never replaced by the final write) or missing: then the requests that
// requests.jsonl holds are put into it (complete), or make it up when there is no
// results.json at all, and the result stays marked incomplete, with an error, so that it is
// never a pass and its failures show. The warnings say what was rebuilt and what was skipped.
func readOut(ctx context.Context, dir string) (*Result, []error, error) {
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
	lines, warnings, rerr := readLines(ctx, reqPath)
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
		res = &Result{Schema: Schema, Partition: Partition{Index: 0, Total: 1}, Cases: []CaseResult{}}
		res.Incomplete = fmt.Sprintf("rebuilt from %s: %s is missing", reqPath, resPath)
		known := "its suite is not known"
		if !placeRebuilt(res, lines) {
			known = "its suite, lanes and partition are not known"
		}
		res.Errors = append(res.Errors, fmt.Sprintf("%s is missing: this result is rebuilt from the %d request lines of %s (%s)",
			resPath, len(lines), reqPath, known))
	}
	warnings = append(warnings, complete(res, lines)...)
	warnings = append(warnings, fmt.Errorf("%s: %s is incomplete (%s): rebuilt with the %d request lines of %s",
		dir, ResultsFile, res.Incomplete, len(lines), RequestsFile))
	if err := requestIndexes(res); err != nil {
		return nil, nil, fmt.Errorf("%s completed from %s: %w", resPath, reqPath, err)
	}
	return res, warnings, nil
}

// placeRebuilt gives res, rebuilt from lines alone, the partition and plan its lines record,
// when every line records the same ones; it reports whether they did. Without them (lines of
// an older diffusion-check, or lines that disagree) nothing is guessed: the result claims no
// partition of any plan, so the plan's merge names that partition as never reported, and
// its lane is never a pass.
func placeRebuilt(res *Result, lines []requestLine) bool {
	if len(lines) == 0 || lines[0].Partition == nil || lines[0].PlanHash == "" {
		return false
	}
	first := lines[0]
	for _, l := range lines[1:] {
		if l.Partition == nil || *l.Partition != *first.Partition || l.PlanHash != first.PlanHash {
			return false
		}
	}
	res.Partition, res.PlanHash = *first.Partition, first.PlanHash
	return true
}

// complete puts into res, a results.json marked incomplete, the requests that requests.jsonl
// holds (lines, in file order; the last line of a request is its verdict): each replaces the
// request of its case and index that res has, and a case res lacks is added with its requests
// and the lane its lines record, the indexes without a line marked as having no result. It
// leaves the statuses to the judge (judge.Settle, which cmd runs on what it reads). Lines that do not fit (an index outside the case's count) are
// skipped, and returned as warnings; so is a case whose lines record two lanes, and a case
// whose lines record none is said (it lands in the run's lane, else DefaultLane).
func complete(res *Result, lines []requestLine) []error {
	byCase, lanes, order, warnings := linesByCase(lines)
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
		c := CaseResult{ID: id, Lane: lanes[id]}
		if c.Lane == "" && res.Lane == "" {
			warnings = append(warnings, fmt.Errorf(
				"case %s: its request lines record no lane (written by an older diffusion-check): it is reported in lane %s",
				id, DefaultLane))
		}
		for i := 1; i <= of; i++ {
			c.Requests = append(c.Requests, noResult(id, i, of))
		}
		at[id] = len(res.Cases)
		res.Cases = append(res.Cases, c)
	}
	for _, id := range order {
		c := &res.Cases[at[id]]
		var confirms []RequestResult
		keys := slices.SortedFunc(maps.Keys(byCase[id]), func(a, b key) int { return cmp.Compare(a.index, b.index) })
		for _, k := range keys {
			rr := byCase[id][k]
			switch {
			case k.confirm:
				confirms = append(confirms, rr)
			case rr.Index < 1 || rr.Index > len(c.Requests) || rr.Of != len(c.Requests):
				warnings = append(warnings, fmt.Errorf("case %s: request line %d/%d does not fit the case's %d requests: skipped", id, rr.Index, rr.Of,
					len(c.Requests)))
			default:
				c.Requests[rr.Index-1] = rr
			}
		}
		// Confirmation requests in the order sent, as far as they go without a gap.
		slices.SortFunc(confirms, func(a, b RequestResult) int { return cmp.Compare(a.Index, b.Index) })
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
	return warnings
}

// key is a request of a case in requests.jsonl: its index, among the case's own requests or
// its confirmation requests.
type key struct {
	index   int
	confirm bool
}

// linesByCase gathers lines by case, the last line of each request kept (its verdict), with
// the lane the lines of each case record and the cases in the order first met. A line whose
// lane is not the one an earlier line of its case recorded is skipped, with a warning.
func linesByCase(lines []requestLine) (byCase map[string]map[key]RequestResult, lanes map[string]string, order []string, warnings []error) {
	byCase, lanes = map[string]map[key]RequestResult{}, map[string]string{}
	for _, l := range lines {
		rr := l.RequestResult
		if prev, ok := lanes[rr.Case]; ok && prev != l.Lane {
			warnings = append(warnings, fmt.Errorf("case %s: request lines record lanes %q and %q: the line of request %d/%d is skipped",
				rr.Case, prev, l.Lane, rr.Index, rr.Of))
			continue
		}
		lanes[rr.Case] = l.Lane
		m := byCase[rr.Case]
		if m == nil {
			m = map[key]RequestResult{}
			byCase[rr.Case] = m
			order = append(order, rr.Case)
		}
		rr.Revised = false
		m[key{rr.Index, rr.Confirm}] = rr
	}
	return byCase, lanes, order, warnings
}

// maxRebuiltRequests bounds the requests of a case that only requests.jsonl knows.
const maxRebuiltRequests = 100_000

// noResult is a request of a rebuilt result that no line of requests.jsonl holds: the run
// ended before it finished. An error, never a pass.
func noResult(caseID string, i, of int) RequestResult {
	return RequestResult{
		Case: caseID, Index: i, Of: of, Status: Cancelled,
		Checks: []Check{{Name: ServerAlive, Status: Cancelled, Detail: "no result: the run ended before this request finished"}},
	}
}

// fillRebuiltHeads gives each result of inputs rebuilt from requests.jsonl alone (no
// results.json: its head unknown) the head of its plan: the partition and plan hash its lines
// record (placeRebuilt) find another input of the same plan, whose suite, lane, GPU, mode,
// commit, case lists and selection it takes, so that the merge counts its cases in that
// partition. Nothing is guessed: a result whose lines record no placement, or whose plan no
// other input holds, claims no partition (the merge then names the partition as never
// reported, or as not fitting its plan); it only takes the suite of the other inputs when
// they agree on one, so that its cases can be shown beside theirs.
func fillRebuiltHeads(inputs []Input) {
	suites := map[string]bool{}
	for _, x := range inputs {
		if x.Result.Suite != "" {
			suites[x.Result.Suite] = true
		}
	}
	for _, x := range inputs {
		r := x.Result
		if r.Incomplete == "" || r.Suite != "" || r.Planned != nil {
			continue
		}
		if from := planOf(r, inputs); from != nil {
			r.Suite, r.Lane, r.GPU, r.Mode, r.Commit = from.Suite, from.Lane, from.GPU, from.Mode, from.Commit
			r.Planned, r.Selection, r.Deselected = from.Planned, from.Selection, from.Deselected
			continue
		}
		if len(suites) == 1 {
			for name := range suites {
				r.Suite = name
			}
		}
	}
}

// planOf is another input of the plan r's lines record, one that holds the plan's case lists.
func planOf(r *Result, inputs []Input) *Result {
	if r.PlanHash == "" {
		return nil
	}
	for _, x := range inputs {
		if from := x.Result; from != r && from.PlanHash == r.PlanHash && from.Planned != nil {
			return from
		}
	}
	return nil
}
