package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// PlanProblems proves from the results of one plan's partitions that every planned case ran
// exactly once. Results carry the plan's hash and its case lists (Result.PlanHash, Planned);
// results without a hash (a run of no plan) are not checked. It returns, by plan hash, what is
// wrong: partitions that never reported (naming their cases), planned cases missing from the
// partition that ran them, cases that ran twice or ran outside the plan (a case the plan's
// test-impact selection left out among them), results that claim the same hash with different
// case lists or different deselected cases, and a case both planned and deselected. Cases the
// selection left out (Result.Deselected) are neither missing nor unplanned. A missing
// partition is never a silent pass.
func PlanProblems(inputs []Input) map[string][]string {
	type group struct {
		planned    [][]string
		deselected []Deselected
		from       string
		parts      map[int]string // partition index → file
		ran        map[string]string
	}
	groups := map[string]*group{}
	problems := map[string][]string{}
	add := func(hash, format string, args ...any) {
		problems[hash] = append(problems[hash], fmt.Sprintf(format, args...))
	}
	for _, x := range inputs {
		r := x.Result
		if r.PlanHash == "" {
			continue
		}
		g := groups[r.PlanHash]
		if g == nil {
			g = &group{planned: r.Planned, deselected: r.Deselected, from: x.File, parts: map[int]string{}, ran: map[string]string{}}
			groups[r.PlanHash] = g
			for _, d := range r.Deselected {
				if slices.ContainsFunc(r.Planned, func(p []string) bool { return slices.Contains(p, d.Case) }) {
					add(r.PlanHash, "%s: case %s is both planned and deselected in plan %s", x.File, d.Case, r.PlanHash)
				}
			}
		}
		if !slices.EqualFunc(g.planned, r.Planned, slices.Equal[[]string]) {
			add(r.PlanHash, "%s and %s claim plan %s but list different cases", g.from, x.File, r.PlanHash)
			continue
		}
		if !slices.Equal(g.deselected, r.Deselected) {
			add(r.PlanHash, "%s and %s claim plan %s but list different deselected cases", g.from, x.File, r.PlanHash)
			continue
		}
		if r.Partition.Total != len(g.planned) || r.Partition.Index < 0 || r.Partition.Index >= len(g.planned) {
			add(r.PlanHash, "%s: partition %d/%d does not fit plan %s of %d partitions", x.File, r.Partition.Index, r.Partition.Total, r.PlanHash,
				len(g.planned))
			continue
		}
		if prev, ok := g.parts[r.Partition.Index]; ok && prev != x.File {
			add(r.PlanHash, "partition %d/%d reported twice: %s and %s", r.Partition.Index, r.Partition.Total, prev, x.File)
			continue
		}
		g.parts[r.Partition.Index] = x.File
		planned := g.planned[r.Partition.Index]
		for _, c := range r.Cases {
			switch {
			case slices.ContainsFunc(r.Deselected, func(d Deselected) bool { return d.Case == c.ID }):
				add(r.PlanHash, "%s: case %s ran in partition %d/%d, but the plan deselected it", x.File, c.ID, r.Partition.Index, r.Partition.Total)
			case !slices.Contains(planned, c.ID):
				add(r.PlanHash, "%s: case %s ran in partition %d/%d, which the plan does not give it", x.File, c.ID, r.Partition.Index, r.Partition.Total)
			}
			if prev, ok := g.ran[c.ID]; ok && prev != x.File {
				add(r.PlanHash, "case %s ran twice: %s and %s", c.ID, prev, x.File)
			}
			g.ran[c.ID] = x.File
		}
		for _, id := range planned {
			if !slices.ContainsFunc(r.Cases, func(c CaseResult) bool { return c.ID == id }) {
				add(r.PlanHash, "%s: planned case %s of partition %d/%d has no result", x.File, id, r.Partition.Index, r.Partition.Total)
			}
		}
	}
	for hash, g := range groups {
		for i, cases := range g.planned {
			if _, ok := g.parts[i]; !ok {
				add(hash, "partition %d/%d of plan %s never reported: its cases %s did not run", i, len(g.planned), hash, strings.Join(cases, ", "))
			}
		}
	}
	for _, p := range problems {
		slices.SortFunc(p, cmp.Compare[string])
	}
	return problems
}
