package runner

import (
	"fmt"
	"slices"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/runner/selection"
)

// KeepItems returns the items of the cases in ids, in their order: the cases a selection
// kept, before MakePlan splits them.
func KeepItems(items []PlanItem, ids []string) []PlanItem {
	out := []PlanItem{} // "estimates": [] in a plan of nothing, not null
	for _, it := range items {
		if slices.Contains(ids, it.Case) {
			out = append(out, it)
		}
	}
	return out
}

// SetSelection records on a plan made from KeepItems what the selection kept and left out
// (sel says from which changes; out is the selection itself), and hashes it into the plan's
// hash: runs of the same split but another selection are runs of another plan.
func (p *Plan) SetSelection(sel checks.Selection, out *selection.Outcome) {
	sel.Selected, sel.Of = len(out.Selected), len(out.Selected)+len(out.Deselected)
	p.Selection = &sel
	p.SelectedBy = out.Selected
	p.Deselected = out.Deselected
	p.Hash = planHash(p)
}

// CheckSelection is what is wrong with a plan file's selection: a case both planned and
// left out, or left out twice.
func (p *Plan) CheckSelection() error {
	planned := map[string]bool{}
	for _, pp := range p.Partitions {
		for _, id := range pp.Cases {
			planned[id] = true
		}
	}
	seen := map[string]bool{}
	for _, d := range p.Deselected {
		switch {
		case planned[d.Case]:
			return fmt.Errorf("case %q is both planned and deselected", d.Case)
		case seen[d.Case]:
			return fmt.Errorf("case %q is deselected twice", d.Case)
		}
		seen[d.Case] = true
	}
	return nil
}
