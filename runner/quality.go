package runner

import (
	"context"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/clip"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// noQualityScorer is why a floor got no score when the run has no quality scorer: the flag
// to set.
const noQualityScorer = "no quality scorer configured: run --quality-scorer COMMAND (or set DIFFUSION_CHECK_QUALITY_SCORER; docs/consistency.md)"

// quality makes the quality checks of request rr of case c, whose output files rep holds: one
// per metric the suite's quality_thresholds gives the case a floor (quality.*), each image of
// the output scored by the run's quality scorer with the case's prompt, as SGLang's
// compute_quality_scores and check_quality (test/quality_metrics.py) score the image a case
// generated; none without a floor. SGLang's metrics score an image: a video case's floors
// are skipped, saying so, and so are those of a request without a valid output. Not in gt
// mode, where SGLang writes the ground truth and checks nothing. SGLang calls them from its
// harness in code this project could not read (issue 60): the scorer's protocol and where
// the checks sit are diffusion-check's (docs/sglang-compat.md).
func (v *validator) quality(ctx context.Context, c *suite.Case, rep reply, rr *results.RequestResult) []results.Check {
	floors := v.cons.quality.For(c.ID)
	if len(floors) == 0 || v.mode == ModeGT {
		return nil
	}
	var out []results.Check
	skip := func(why string) []results.Check {
		for _, m := range checks.QualityMetrics() {
			if _, ok := floors[m]; ok {
				out = append(out, checks.Skipped(checks.QualityCheck(m), why))
			}
		}
		return out
	}
	switch {
	case c.Modality != suite.Image:
		return skip("not scored: SGLang's quality metrics score an image, and this case's output is a video")
	case !outputUsable(rr):
		return skip("not scored: the request has no valid output (see output.present and output.valid)")
	}
	var pairs []clip.QualityPair
	for _, f := range rep.Files {
		pairs = append(pairs, clip.QualityPair{Prompt: c.Request.Prompt, Image: abs(f.Path)})
	}
	for _, m := range checks.QualityMetrics() {
		floor, ok := floors[m]
		if !ok {
			continue
		}
		if v.cons.qualityBy == nil {
			out = append(out, checks.Quality(m, nil, floor, noQualityScorer))
			continue
		}
		scores, err := v.cons.qualityBy.Quality(ctx, m, pairs)
		why := ""
		if err != nil {
			why = err.Error()
		}
		out = append(out, checks.Quality(m, scores, floor, why))
	}
	return out
}
