package checks

import (
	"math"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestQualityFloors: as SGLang's check_quality, the lowest image's score at or above the
// floor passes, below it fails with the score and the floor, and an enforced metric that
// produced no value fails (no scorer, a failed scorer, a null score), never passes.
func TestQualityFloors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64
		why    string
		status results.Status
		detail string
	}{
		{"above", []float64{-0.587}, "", results.Pass, "image_reward -0.5870 ≥ -1.3"},
		{"at", []float64{-1.3}, "", results.Pass, "image_reward -1.3000 ≥ -1.3"},
		{"below", []float64{-2.041}, "", results.Fail, "image_reward: -2.0410 < -1.3"},
		{"the worst of several", []float64{0.2, -2.5, -0.1}, "", results.Fail, "image_reward: -2.5000 < -1.3 (image 2 of 3)"},
		{"no scorer", nil, "no quality scorer configured: run --quality-scorer COMMAND", results.Fail,
			"image_reward: not computed, but threshold -1.3 is enforced: no quality scorer configured: run --quality-scorer COMMAND"},
		{"a null score", []float64{0.1, math.NaN()}, "", results.Fail,
			"image_reward: not computed for image 2 of 2, but threshold -1.3 is enforced: the scorer gave no score"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Quality("image_reward", tc.scores, -1.3, tc.why)
			if c.Name != QualityImageReward || c.Status != tc.status || c.Detail != tc.detail || c.Limit == nil || *c.Limit != -1.3 {
				t.Errorf("Quality = %+v, want %s %q", c, tc.status, tc.detail)
			}
		})
	}
	for _, m := range QualityMetrics() {
		if k := KindOf(QualityCheck(m)); !k.Registered || k.Direction != HigherIsBetter {
			t.Errorf("%s: %+v", m, k)
		}
	}
}
