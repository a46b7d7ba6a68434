package report

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// maxDeselectedShown bounds the list of left-out cases in a comment; the plan and every
// results.json hold them all.
const maxDeselectedShown = 200

// selected counts, over lanes, the cases that ran and the cases of the lanes' plans, when
// test-impact selection made those plans; sel is the first lane's selection (nil: none did).
func selected(lanes []results.Result) (ran, of int, sel *results.Selection, left []results.Deselected) {
	for _, l := range lanes {
		if l.Selection == nil {
			continue
		}
		if sel == nil {
			sel = l.Selection
		}
		ran += len(l.Cases)
		of += len(l.Cases) + len(l.Deselected)
		left = append(left, l.Deselected...)
	}
	return ran, of, sel, left
}

// selectionLine says near the top of the report how many cases the changed paths selected,
// and lists those left out (collapsed) when the level keeps tables.
func selectionLine(b *strings.Builder, r *Report, lv level) {
	ran, of, sel, left := selected(r.Lanes)
	if sel == nil {
		return
	}
	if sel.All != "" {
		fmt.Fprintf(b, "\n🎯 All %s run: %s.\n", words.Plural(of, "case"), escape(sel.All))
		return
	}
	fmt.Fprintf(b, "\n🎯 **%d of %s selected by the changed paths** (%s from %s).\n", ran, words.Plural(of, "case"),
		words.Plural(sel.ChangedFiles, "changed file"), escape(sel.Source))
	if len(left) == 0 || !lv.tables {
		return
	}
	deselectedList(b, left)
}

// deselectedList is the collapsed list of the cases selection left out, with the reasons.
func deselectedList(b *strings.Builder, left []results.Deselected) {
	fmt.Fprintf(b, "\n<details><summary>%s left out: no changed path can affect them</summary>\n\n", words.Plural(len(left), "case"))
	for i, d := range left {
		if i == maxDeselectedShown {
			fmt.Fprintf(b, "- and %d more (every one is in the plan and in results.json)\n", len(left)-i)
			break
		}
		lane := ""
		if d.Lane != "" {
			lane = " (" + escape(d.Lane) + ")"
		}
		fmt.Fprintf(b, "- %s%s: %s\n", code(d.Case), lane, escape(d.Reason))
	}
	b.WriteString("\n</details>\n")
}

// SelectionSummary is the job summary of a plan made by test-impact selection: how many
// cases it kept, from which changes, and every case it left out with the reason.
func SelectionSummary(sel *results.Selection, left []results.Deselected) string {
	var b strings.Builder
	b.WriteString("### diffusion-check plan: test-impact selection\n")
	if sel.All != "" {
		fmt.Fprintf(&b, "\nAll %s run: %s.\n", words.Plural(sel.Of, "case"), escape(sel.All))
		return b.String()
	}
	fmt.Fprintf(&b, "\n**%d of %s selected by the changed paths** (%s from %s).\n", sel.Selected, words.Plural(sel.Of, "case"),
		words.Plural(sel.ChangedFiles, "changed file"), escape(sel.Source))
	if sel.Selected == 0 {
		b.WriteString("\nNothing to run: the plan is one empty partition, whose run checks nothing and passes.\n")
	}
	if len(left) > 0 {
		deselectedList(&b, left)
	}
	return b.String()
}

// nothingSelected reports whether selection left out every case of the lanes: they pass
// having checked nothing, and the headline and statuses say why.
func nothingSelected(lanes []results.Result) bool {
	ran, of, sel, _ := selected(lanes)
	return sel != nil && sel.All == "" && ran == 0 && of > 0
}
