package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// across is what a lane's cases say across their requests: the cases whose outputs have a
// shape to tell (checks.DiagnoseRepeat: a leak, a ground-truth mismatch), and the cases that
// had no ground-truth check at all.
type across struct {
	shaped []shapedCase
	noGT   []string // case ids
	noCLIP []string // case ids whose CLIP check was skipped for want of a scorer
}

type shapedCase struct {
	id string
	d  checks.RepeatDiagnosis
}

// acrossOf reads the diagnosis of every case of a lane. A case counts as without ground
// truth when none of its requests was compared with one although its outputs were checked
// (a consistency, audio or repeat check of any status): a case that never ran an output
// check has nothing to say either way, nor has one whose run wrote its ground truth.
func acrossOf(l *results.Result) across {
	var a across
	for i := range l.Cases {
		c := &l.Cases[i]
		d := checks.DiagnoseRepeat(checks.RepeatEvidenceOf(*c))
		if d.Shape != checks.ShapeNone {
			a.shaped = append(a.shaped, shapedCase{c.ID, d})
		}
		if d.NoGT && outputsChecked(c) {
			a.noGT = append(a.noGT, c.ID)
		}
		if clipNotEnforced(c) {
			a.noCLIP = append(a.noCLIP, c.ID)
		}
	}
	return a
}

// clipNotEnforced reports whether a case compared its output with a ground truth but skipped
// CLIP for want of a scorer, where SGLang would have enforced it.
func clipNotEnforced(c *results.CaseResult) bool {
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			if ck.Name == checks.ConsistencyCLIP && ck.Status == results.Skip && ck.Cause == checks.CLIPNotEnforced {
				return true
			}
		}
	}
	return false
}

// clipNotice is the one line per report that says where CLIP was not enforced.
func clipNotice(ids []string) string {
	return fmt.Sprintf(
		"CLIP was not enforced in %s (no CLIP scorer configured): SGLang enforces it on every consistency check, with openai/clip-vit-large-patch14; "+
			"run --clip-scorer CMD (docs/consistency.md)",
		words.Plural(len(ids), "case"),
	)
}

func outputsChecked(c *results.CaseResult) bool {
	checked := false
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			switch checks.KindOf(ck.Name).Group {
			case checks.GroupGroundTruth:
				return false
			case checks.GroupConsistency, checks.GroupAudio, checks.GroupRepeat:
				checked = true
			}
		}
	}
	return checked
}

// shapeTitle names a shape in a few words, for the head of its line.
func shapeTitle(s checks.RepeatShape) string {
	switch s {
	case checks.ShapeLeak:
		return "state leak across requests"
	case checks.ShapeLeakAndGTMismatch:
		return "state leak across requests, and a ground-truth mismatch"
	case checks.ShapeGTMismatch:
		return "ground-truth mismatch, not a leak"
	case checks.ShapeBorderline:
		return "at the ground truth's limit, not a leak"
	}
	return string(s)
}

func shapeIcon(s checks.RepeatShape) string {
	if s == checks.ShapeLeak || s == checks.ShapeLeakAndGTMismatch {
		return icon(results.Fail)
	}
	return "⚠️"
}

// acrossRequests writes what the outputs of the cases say across requests, under Problems:
// for each case with a shape, which one (a leak or a ground-truth mismatch) in one line;
// then, plainly, the cases that had no ground-truth check at all. Nothing when there is
// nothing to say.
func acrossRequests(b *strings.Builder, r *Report) {
	var lines, noCLIP []string
	multi := len(r.Lanes) > 1
	for li := range r.Lanes {
		l := &r.Lanes[li]
		lane := ""
		if multi {
			lane = " (" + escape(l.Lane) + ")"
		}
		a := acrossOf(l)
		for _, s := range a.shaped {
			lines = append(lines, fmt.Sprintf("- %s %s%s · **%s** — %s", shapeIcon(s.d.Shape), code(s.id), lane, shapeTitle(s.d.Shape), escape(s.d.Text())))
		}
		if len(a.noGT) > 0 {
			ids := make([]string, len(a.noGT))
			for i, id := range a.noGT {
				ids[i] = code(id)
			}
			lines = append(
				lines,
				fmt.Sprintf(
					"- ℹ️ No ground-truth check at all%s in %s: %s — their outputs were compared only with request 1 of the same server start", lane,
					words.Plural(len(a.noGT), "case"), strings.Join(ids, ", ")),
			)
		}
		for _, id := range a.noCLIP {
			noCLIP = append(noCLIP, code(id)+lane)
		}
	}
	if len(noCLIP) > 0 {
		lines = append(lines, "- ℹ️ "+escape(clipNotice(noCLIP))+": "+strings.Join(noCLIP, ", "))
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n### Outputs across requests\n\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}

// acrossLines writes the same to the text table, after its problems.
func acrossLines(b *bytes.Buffer, r *results.Result) {
	a := acrossOf(r)
	if len(a.shaped) == 0 && len(a.noGT) == 0 && len(a.noCLIP) == 0 {
		return
	}
	b.WriteByte('\n')
	for _, s := range a.shaped {
		fmt.Fprintf(b, "case %s across requests: %s: %s\n", s.id, shapeTitle(s.d.Shape), s.d.Text())
	}
	if len(a.noGT) > 0 {
		fmt.Fprintf(b, "no ground-truth check at all: %s (compared only with request 1)\n", strings.Join(a.noGT, ", "))
	}
	if len(a.noCLIP) > 0 {
		fmt.Fprintf(b, "%s: %s\n", clipNotice(a.noCLIP), strings.Join(a.noCLIP, ", "))
	}
}
