package plan

import (
	"errors"
	"fmt"
	"slices"

	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/selection"
	"github.com/diffusion-check/diffusion-check/suite"
)

// KeepItems returns the items of the cases in ids, in their order: the cases a selection
// kept, before Make splits them.
func KeepItems(items []Item, ids []string) []Item {
	out := []Item{} // "estimates": [] in a plan of nothing, not null
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
func (p *Plan) SetSelection(sel results.Selection, out *selection.Outcome) {
	sel.Selected, sel.Of = len(out.Selected), len(out.Selected)+len(out.Deselected)
	p.Selection = &sel
	p.SelectedBy = out.Selected
	p.Deselected = out.Deselected
	p.seal()
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

// CheckSuite is what makes a plan file stale for suite s: a case it planned or left out that
// the suite does not have in the plan's lane, a case of the lane it neither planned nor left
// out (added after planning: it would never run, and the report would not miss it), or a
// case list whose hash is not the one the plan records. Each problem names the case.
func (p *Plan) CheckSuite(s *suite.Suite) error {
	lane := map[string]bool{}
	var ids []string
	for _, c := range s.CasesFor(p.Lane) {
		lane[c.ID] = true
		ids = append(ids, c.ID)
	}
	inSuite := map[string]bool{}
	for _, c := range s.Cases {
		inSuite[c.ID] = true
	}
	var errs []error
	where := func(id string) string {
		if inSuite[id] {
			return fmt.Sprintf("is not in lane %q of suite %s", p.Lane, s.Path)
		}
		return "is not in suite " + s.Path
	}
	known := map[string]bool{}
	for _, pp := range p.Partitions {
		for _, id := range pp.Cases {
			known[id] = true
			if !lane[id] {
				errs = append(errs, fmt.Errorf("case %q %s", id, where(id)))
			}
		}
	}
	for _, d := range p.Deselected {
		known[d.Case] = true
		if !lane[d.Case] {
			errs = append(errs, fmt.Errorf("deselected case %q %s", d.Case, where(d.Case)))
		}
	}
	for _, id := range ids {
		if !known[id] {
			errs = append(errs, fmt.Errorf("case %q of lane %q is neither planned nor deselected: "+
				"the suite has it, the plan does not (a stale plan: plan again)", id, p.Lane))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Same sets; the hash still catches a plan whose recorded list was edited by hand.
	if p.CasesHash != "" && p.CasesHash != caseListHash(ids) {
		return fmt.Errorf("cases_hash %s is not the hash of the lane's %d cases (%s): the plan was edited or made from another list",
			p.CasesHash, len(ids), caseListHash(ids))
	}
	return nil
}
