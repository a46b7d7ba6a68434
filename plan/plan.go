package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/selection"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Schema versions the plan JSON.
const Schema = "diffusion-check/plan/v1"

// DefaultEstimate is the planning estimate of a case nothing else says anything about
// (SGLang's figure, docs/sglang-compat.md §7).
const DefaultEstimate = 300.0

// estimates is what a baselines file knows about a case, for planning.
type estimates interface {
	// FullTestTime is the measured wall time of the whole case, one server start included.
	FullTestTime(caseID string) (seconds float64, ok bool)
	// ExpectedE2E is the expected end-to-end time of one request.
	ExpectedE2E(caseID string) (ms float64, ok bool)
}

// Item is one case to place: its estimated time excluding the server start, and the start
// it needs.
type Item struct {
	Case   string  `json:"case"`
	Server string  `json:"server"`
	Reuse  bool    `json:"reuse,omitempty"`
	RunS   float64 `json:"run_s"`
	StartS float64 `json:"start_s"`
	// Source says where the estimate came from: case, baseline, expected_e2e or default.
	Source string `json:"source"`
	// GPUs is the case's num_gpus: RunS and StartS of GPU time each, for what a plan costs.
	GPUs int `json:"gpus"`
}

// MaxPartitions is GitHub's limit on the jobs of one matrix: a plan never has more.
const MaxPartitions = 256

// Plan splits a lane's cases into partitions; every job of a matrix computes the same plan.
type Plan struct {
	Schema string `json:"schema"`
	Suite  string `json:"suite"`
	Lane   string `json:"lane"`
	Hash   string `json:"hash"`
	// CasesHash identifies the lane's case list the plan was made from: every case it
	// planned and every case its selection left out (caseListHash). A run refuses a plan
	// whose list is not the suite's (CheckSuite): a case added after planning would not run.
	CasesHash string `json:"cases_hash"`
	Total     int    `json:"total"`
	// Requested is the number of partitions asked for when the plan has fewer (Total): no more
	// than there are cases to fill them, and no more than MaxPartitions.
	Requested  int         `json:"requested,omitempty"`
	IdealS     float64     `json:"ideal_s"`
	LongestS   float64     `json:"longest_s"`
	Partitions []Partition `json:"partitions"`
	Items      []Item      `json:"estimates"`
	// Defaulted lists the cases planned with DefaultEstimate: give them an estimate.
	Defaulted []string `json:"defaulted,omitempty"`
	// Selection, SelectedBy and Deselected are set when test-impact selection chose the
	// cases (SetSelection): from which changes, why each planned case was kept, and every
	// case left out with the reason.
	Selection  *results.Selection   `json:"selection,omitempty"`
	SelectedBy []selection.Pick     `json:"selected_by,omitempty"`
	Deselected []results.Deselected `json:"deselected,omitempty"`
}

// Partition is the cases of one job, in the order they run.
type Partition struct {
	Index        int      `json:"index"`
	Cases        []string `json:"cases"`
	EstimatedS   float64  `json:"estimated_s"`
	ServerStarts int      `json:"server_starts"`
}

// Matrix is the GitHub Actions matrix of a plan: {"include":[{"partition":"0/3"},...]}.
func (p *Plan) Matrix() map[string]any {
	var inc []map[string]string
	for _, part := range p.Partitions {
		inc = append(inc, map[string]string{"partition": fmt.Sprintf("%d/%d", part.Index, p.Total)})
	}
	return map[string]any{"include": inc}
}

// CaseLists is the case ids of every partition, in partition order.
func (p *Plan) CaseLists() [][]string {
	var out [][]string
	for _, pp := range p.Partitions {
		out = append(out, pp.Cases)
	}
	return out
}

// Widen is the plan as a matrix of n jobs sees it. A plan asked for n partitions that made
// fewer (Total < Requested == n: fewer cases than jobs) gets empty partitions up to n, so that
// every job of a static matrix (--partition I/n without a plan file) finds its partition, and
// a job beyond the cases writes an empty, passing result as a planned empty partition does.
// Every job widens the same plan the same way, so they all carry the same hash. Any other
// plan is returned as it is.
func (p *Plan) Widen(n int) *Plan {
	if p.Total >= n || p.Requested != n {
		return p
	}
	w := *p
	w.Partitions = slices.Clone(p.Partitions)
	for i := p.Total; i < n; i++ {
		w.Partitions = append(w.Partitions, Partition{Index: i, Cases: []string{}})
	}
	w.Total, w.Requested = n, 0
	w.IdealS = round1(p.IdealS * float64(p.Total) / float64(n))
	w.seal()
	return &w
}

// Cases returns the case ids of partition i.
func (p *Plan) Cases(i int) []string { return p.Partitions[i].Cases }

// itemsOf estimates every case of a lane: the case's own estimate, else the baseline's full test
// time, else expected E2E × repeat plus a start, else DefaultEstimate. Estimates that include a
// server start (the case's, the baseline's) have it taken out, since the plan adds starts itself.
func itemsOf(s *suite.Suite, lane string, est estimates) []Item {
	var out []Item
	for _, c := range s.CasesFor(lane) {
		srv := s.Servers[c.Server]
		it := Item{Case: c.ID, Server: c.Server, Reuse: srv.Reuse, StartS: srv.StartEstimate.Seconds(), GPUs: c.NumGPUs}
		full, source := 0.0, "default"
		var ok bool
		switch {
		case c.Estimate > 0:
			full, source = c.Estimate.Seconds(), "case"
		case est != nil:
			if full, ok = est.FullTestTime(c.ID); ok && full > 0 {
				source = "baseline"
			} else if ms, ok := est.ExpectedE2E(c.ID); ok && ms > 0 {
				full, source = ms*float64(c.Repeat)/1000+it.StartS, "expected_e2e"
			}
		}
		if source == "default" {
			full = DefaultEstimate
		}
		it.RunS, it.Source = math.Max(full-it.StartS, 0), source
		out = append(out, it)
	}
	return out
}

// PartitionsFor is the number of jobs that keeps each near targetS seconds, within [1, maxJobs].
func PartitionsFor(items []Item, targetS float64, maxJobs int) int {
	n := int(math.Ceil(load(items) / targetS))
	return min(max(n, 1), max(maxJobs, 1))
}

// Make splits items into at most n partitions, none of them empty: never more than there
// are items, nor than MaxPartitions, and when the split leaves a partition empty it splits
// again into as many as it filled, so that a plan of its Total is a plan of the same Total.
// Requested says how many were asked for when that is more. A reuse server's cases share one
// start per partition, so they stay together unless splitting them shortens the longest
// partition. It starts from longest-processing-time-first over server groups and improves by
// moving and swapping single cases while the longest partition gets shorter. Ties break on
// case ids: same input, same plan.
func Make(suiteName, lane string, items []Item, n int) *Plan {
	asked := max(n, 1)
	n = min(asked, max(len(items), 1), MaxPartitions)
	for {
		p := split(suiteName, lane, items, n)
		filled := 0
		for _, pp := range p.Partitions {
			if len(pp.Cases) > 0 {
				filled++
			}
		}
		// Each round has fewer partitions, so this ends; a one-partition plan holds every item.
		if filled == n || n == 1 {
			if asked != n {
				p.Requested = asked
			}
			return p
		}
		n = max(filled, 1)
	}
}

// split is one attempt of Make at exactly n partitions.
func split(suiteName, lane string, items []Item, n int) *Plan {
	parts := make([]*part, n)
	for i := range parts {
		parts[i] = newPart()
	}
	for _, chunk := range chunks(items, n) {
		best, bestLoad := 0, 0.0
		for i, pt := range parts {
			if l := pt.load + pt.chunkCost(chunk); i == 0 || l < bestLoad {
				best, bestLoad = i, l
			}
		}
		for _, it := range chunk {
			parts[best].add(it)
		}
	}
	improve(parts)
	p := &Plan{Schema: Schema, Suite: suiteName, Lane: lane, Total: n, Items: items}
	order := map[string]int{}
	for i, it := range items {
		order[it.Case] = i
		if it.Source == "default" {
			p.Defaulted = append(p.Defaulted, it.Case)
		}
	}
	var total float64
	for i, pt := range parts {
		part := pt.items
		slices.SortFunc(part, func(a, b Item) int { return order[a.Case] - order[b.Case] })
		pp := Partition{Index: i, EstimatedS: round1(load(part)), ServerStarts: starts(part)}
		for _, it := range part {
			pp.Cases = append(pp.Cases, it.Case)
		}
		if pp.Cases == nil {
			pp.Cases = []string{}
		}
		p.Partitions = append(p.Partitions, pp)
		total += load(part)
		p.LongestS = math.Max(p.LongestS, pp.EstimatedS)
	}
	p.IdealS = round1(total / float64(n))
	p.seal()
	return p
}

// part is one partition being planned: its items, its load, and how many cases of each reuse
// server it holds, so that what a case costs there (cost) is known in constant time and a
// plan of 20,000 cases takes as many steps as their count, not its square.
type part struct {
	items []Item
	load  float64
	reuse map[string]int
}

func newPart() *part { return &part{reuse: map[string]int{}} }

// cost is what it costs to add it here: its run, plus a server start unless it is a reuse
// case whose server a case here (other than one of skip, a reuse case being taken out)
// already started.
func (p *part) cost(it Item, skip *Item) float64 {
	if it.Reuse {
		n := p.reuse[it.Server]
		if skip != nil && skip.Reuse && skip.Server == it.Server {
			n--
		}
		if n > 0 {
			return it.RunS
		}
	}
	return it.RunS + it.StartS
}

// chunkCost is what adding all of chunk costs here.
func (p *part) chunkCost(chunk []Item) float64 {
	var c float64
	var started map[string]bool
	for _, it := range chunk {
		if it.Reuse && p.reuse[it.Server] == 0 {
			if started[it.Server] {
				c += it.RunS
				continue
			}
			if started == nil {
				started = map[string]bool{}
			}
			started[it.Server] = true
		}
		c += p.cost(it, nil)
	}
	return c
}

func (p *part) add(it Item) {
	p.load += p.cost(it, nil)
	p.items = append(p.items, it)
	if it.Reuse {
		p.reuse[it.Server]++
	}
}

// remove takes out items[i].
func (p *part) remove(i int) Item {
	it := p.items[i]
	p.load -= p.cost(it, &it)
	p.items = slices.Delete(p.items, i, i+1)
	if it.Reuse {
		p.reuse[it.Server]--
	}
	return it
}

// byCost is the order of p's items by what they cost alone (run and start), for the search
// of a swap partner.
func (p *part) byCost() []int {
	idx := make([]int, len(p.items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(p.items[a].RunS+p.items[a].StartS, p.items[b].RunS+p.items[b].StartS), cmp.Compare(p.items[a].Case, p.items[b].Case))
	})
	return idx
}

// chunks groups the items for the first placement, largest first: a reuse server's cases form
// one chunk, split into as many chunks as it has multiples of the ideal partition load.
func chunks(items []Item, n int) [][]Item {
	var out [][]Item
	groups := map[string]int{}
	for _, it := range items {
		if !it.Reuse {
			out = append(out, []Item{it})
			continue
		}
		if i, ok := groups[it.Server]; ok {
			out[i] = append(out[i], it)
			continue
		}
		groups[it.Server] = len(out)
		out = append(out, []Item{it})
	}
	ideal := load(items) / float64(n)
	var split [][]Item
	for _, c := range out {
		k := int(math.Ceil(load(c) / ideal))
		if len(c) == 1 || k <= 1 {
			split = append(split, c)
			continue
		}
		k = min(k, len(c), n)
		sub := make([]*part, k)
		for i := range sub {
			sub[i] = newPart()
		}
		sorted := slices.Clone(c)
		slices.SortStableFunc(sorted, func(a, b Item) int { return cmpDesc(a.RunS, b.RunS, a.Case, b.Case) })
		for _, it := range sorted {
			best := 0
			for i := range sub {
				if sub[i].load < sub[best].load {
					best = i
				}
			}
			sub[best].add(it)
		}
		for _, pt := range sub {
			split = append(split, pt.items)
		}
	}
	loads := make(map[*Item]float64, len(split))
	for _, c := range split {
		loads[&c[0]] = load(c)
	}
	slices.SortStableFunc(split, func(a, b []Item) int { return cmpDesc(loads[&a[0]], loads[&b[0]], a[0].Case, b[0].Case) })
	return split
}

func cmpDesc(a, b float64, ida, idb string) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	case ida < idb:
		return -1
	case ida > idb:
		return 1
	}
	return 0
}

// swapWindow is how many cases on each side of the ideal partner improve tries for a swap:
// the partner that balances two partitions best costs about half their difference, and
// among cases sorted by cost it sits next to where that half falls.
const swapWindow = 3

// improve moves or swaps single cases out of the longest partition while that shortens it.
// A move is tried to every partition; a swap with the few cases of each partition whose cost
// is nearest the one that would balance the two (swapWindow), found by binary search among
// them sorted by cost, so that a round costs the longest partition's cases times the
// partitions, not times every case.
func improve(parts []*part) {
	const eps = 1e-9
	order := make([][]int, len(parts))
	for i, pt := range parts {
		order[i] = pt.byCost()
	}
	for round := 0; round < 10000; round++ {
		longest := 0
		for i, pt := range parts {
			if pt.load > parts[longest].load+eps {
				longest = i
			}
		}
		p := parts[longest]
		bestMax, bestQ, bestA, bestB := p.load, -1, -1, -1
		for a := range p.items {
			ia := p.items[a]
			without := p.load - p.cost(ia, &ia)
			for q, qs := range parts {
				if q == longest {
					continue
				}
				inQ := qs.cost(ia, nil)
				// Move a to q.
				if m := max(without, qs.load+inQ); m < bestMax-eps {
					bestMax, bestQ, bestA, bestB = m, q, a, -1
				}
				// Swap a with b of q: b near half of what q would then exceed a's side by.
				target := (qs.load + inQ - without) / 2
				ord := order[q]
				at, _ := slices.BinarySearchFunc(ord, target, func(i int, t float64) int {
					return cmp.Compare(qs.items[i].RunS+qs.items[i].StartS, t)
				})
				for k := max(at-swapWindow, 0); k < min(at+swapWindow, len(ord)); k++ {
					b := ord[k]
					ib := qs.items[b]
					p2 := without + p.cost(ib, &ia)
					q2 := qs.load - qs.cost(ib, &ib) + qs.cost(ia, &ib)
					if m := max(p2, q2); m < bestMax-eps {
						bestMax, bestQ, bestA, bestB = m, q, a, b
					}
				}
			}
		}
		if bestQ < 0 {
			return
		}
		q := parts[bestQ]
		a := p.remove(bestA)
		if bestB >= 0 {
			p.add(q.remove(bestB))
		}
		q.add(a)
		order[longest], order[bestQ] = p.byCost(), q.byCost()
	}
}

// load is the estimated wall time of running items in one job: every case's run, one start per
// case of a server without reuse, one start per reuse server present.
func load(items []Item) float64 {
	p := newPart()
	for _, it := range items {
		p.add(it)
	}
	return p.load
}

func starts(items []Item) int {
	n := 0
	seen := map[string]bool{}
	for _, it := range items {
		if !it.Reuse || !seen[it.Server] {
			n++
		}
		if it.Reuse {
			seen[it.Server] = true
		}
	}
	return n
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// seal sets the plan's hashes once its partitions and selection are final.
func (p *Plan) seal() {
	p.CasesHash = caseListHash(p.caseList())
	p.Hash = planHash(p)
}

// caseList is every case the plan knows of: those it planned and those its selection left
// out.
func (p *Plan) caseList() []string {
	var ids []string
	for _, pp := range p.Partitions {
		ids = append(ids, pp.Cases...)
	}
	for _, d := range p.Deselected {
		ids = append(ids, d.Case)
	}
	return ids
}

// caseListHash identifies a list of case ids, whatever their order.
func caseListHash(ids []string) string {
	ids = slices.Sorted(slices.Values(ids))
	b, _ := json.Marshal(ids)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// planHash identifies the split itself (suite, lane, the case list, which case runs where),
// not the estimates, and, when a selection made the plan, which cases it left out and why.
func planHash(p *Plan) string {
	h := sha256.New()
	b, _ := json.Marshal(struct {
		Suite, Lane string
		Cases       string
		Parts       [][]string
	}{p.Suite, p.Lane, p.CasesHash, p.CaseLists()})
	h.Write(b)
	if p.Selection != nil {
		// Not the source: the same changes read from another file make the same plan.
		b, _ = json.Marshal(struct {
			All        string
			Deselected []results.Deselected
		}{p.Selection.All, p.Deselected})
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// sglangSplit is SGLang's own split (docs/sglang-compat.md §7), for comparison: every case starts its own server, cases
// sorted by estimate, each given to the least-loaded partition. It returns the partition loads.
func sglangSplit(items []Item, n int) []float64 {
	costs := make([]float64, len(items))
	ids := make([]string, len(items))
	idx := make([]int, len(items))
	for i, it := range items {
		costs[i], ids[i], idx[i] = it.RunS+it.StartS, it.Case, i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpDesc(costs[a], costs[b], ids[a], ids[b]) })
	loads := make([]float64, max(n, 1))
	for _, i := range idx {
		best := 0
		for p := range loads {
			if loads[p] < loads[best] {
				best = p
			}
		}
		loads[best] += costs[i]
	}
	return loads
}

// String is a one-line summary for logs.
func (p *Plan) String() string {
	lane := p.Lane
	if lane == "" {
		lane = "all lanes:"
	}
	parts := " partitions"
	if p.Total == 1 {
		parts = " partition"
	}
	return lane + " " + strconv.Itoa(p.Total) + parts + ", longest " + strconv.FormatFloat(p.LongestS, 'f', 1, 64) +
		" s, ideal " + strconv.FormatFloat(p.IdealS, 'f', 1, 64) + " s"
}

// fileEstimates reads planning estimates from a perf baseline file.
type fileEstimates struct{ f *baselines.File }

func (e fileEstimates) FullTestTime(id string) (float64, bool) {
	if s := e.f.Scenarios[id]; s != nil && s.EstimatedFullTestTimeS != nil {
		return *s.EstimatedFullTestTimeS, true
	}
	return 0, false
}

func (e fileEstimates) ExpectedE2E(id string) (float64, bool) {
	if s := e.f.Scenarios[id]; s != nil && s.E2EMs != nil {
		return *s.E2EMs, true
	}
	return 0, false
}

// ForSuite plans a lane of a suite into n partitions with the estimates of the suite's
// baseline file for the GPU class, when there is one. `plan` and `run --partition` both call
// it, so every job of a matrix computes the same split from the same files.
func ForSuite(s *suite.Suite, lane, gpu string, n int) (*Plan, error) {
	items, err := SuiteItems(s, lane, gpu)
	if err != nil {
		return nil, err
	}
	return Make(s.DisplayName(), lane, items, n), nil
}

// SuiteItems estimates the cases of a lane from the suite and its baseline file for the GPU
// class (a missing file, or a folder of them and no class, is fine: the plan then says which
// cases it had to guess).
func SuiteItems(s *suite.Suite, lane, gpu string) ([]Item, error) {
	var est estimates
	if s.Baselines != "" {
		// The file of the class's platform, as a run without a GPU chooses it (baselines.Resolve:
		// an h200 class plans from h100.json). The plan job has no GPU and reads no override
		// variable: every partition of a plan is cut from the same estimates.
		files, _ := baselines.Resolve(baselines.ResolveInput{Class: cmp.Or(gpu, s.GPU), Explicit: true})
		path, err := files.BaselinesFile(s.Baselines)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case errors.Is(err, baselines.ErrNoGPUClass):
			// A folder of baselines and no class given: the split is planned without their
			// estimates, in the plan job (no GPU) and in every run job alike; a run detects
			// its GPU's class afterwards, for its checks only.
		case err != nil:
			return nil, err
		default:
			f, err := baselines.Load(path)
			if err == nil {
				// A vendor scenario's estimate counts too, as its run reads it.
				f, err = f.MergeVendors()
			}
			switch {
			case errors.Is(err, os.ErrNotExist):
				// No file for this GPU class yet (its first regeneration): the cases'
				// estimates, as without a folder; a run in check mode reports the file.
			case err != nil:
				return nil, err
			default:
				est = fileEstimates{f}
			}
		}
	}
	items := itemsOf(s, lane, est)
	if len(items) == 0 {
		return nil, fmt.Errorf("suite %s: no cases in lane %q", s.Path, lane)
	}
	return items, nil
}
