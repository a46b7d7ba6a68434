package checks

import (
	"fmt"
	"math"

	"github.com/diffusion-check/diffusion-check/results"
)

// The no-reference quality floors of SGLang's harness (test/quality_metrics.py check_quality,
// test/server/quality_thresholds.json; sgl-project/sglang @ a1c1eca2 and @ 00fcb557): CLIP
// prompt adherence (100 × cosine, openai/clip-vit-base-patch32), CLIP-IQA (in [0, 1]) and
// ImageReward-v1.0, each computed only where the case sets a floor, and failed below it.
const (
	QualityClipScore   = "quality.clip_score"
	QualityClipIQA     = "quality.clip_iqa"
	QualityImageReward = "quality.image_reward"
)

// QualityMetrics are the metric names of SGLang's quality_thresholds.json (min_<metric>),
// in its check order.
func QualityMetrics() []string { return []string{"clip_score", "clip_iqa", "image_reward"} }

// QualityCheck names the check of a metric ("clip_score": quality.clip_score).
func QualityCheck(metric string) string { return "quality." + metric }

// Quality is the verdict of one enforced floor over the scores of a request's images
// (check_quality): the lowest score at or above floor passes. A metric that produced no
// value fails, as SGLang's "not computed, but threshold is enforced" (a missing scorer or a
// broken one must not read as green): notComputed says why none came, and a NaN score is an
// image the scorer could not score.
func Quality(metric string, scores []float64, floor float64, notComputed string) results.Check {
	c := results.Check{Name: QualityCheck(metric), Status: results.Pass, Limit: Float(floor)}
	fail := func(cause, detail string) results.Check {
		c.Status, c.Detail, c.Cause = results.Fail, detail, metric+" "+cause
		return c
	}
	if notComputed != "" || len(scores) == 0 {
		return fail("not computed", fmt.Sprintf("%s: not computed, but threshold %g is enforced: %s", metric, floor, notComputed))
	}
	worst, at := math.Inf(1), 0
	for i, s := range scores {
		if math.IsNaN(s) {
			return fail("not computed",
				fmt.Sprintf("%s: not computed for image %d of %d, but threshold %g is enforced: the scorer gave no score", metric, i+1, len(scores), floor))
		}
		if s < worst {
			worst, at = s, i
		}
	}
	c.Value = Float(worst)
	if worst < floor {
		detail := fmt.Sprintf("%s: %.4f < %g", metric, worst, floor)
		if len(scores) > 1 {
			detail += fmt.Sprintf(" (image %d of %d)", at+1, len(scores))
		}
		return fail("below its floor", detail)
	}
	c.Detail = fmt.Sprintf("%s %.4f ≥ %g", metric, worst, floor)
	return c
}
