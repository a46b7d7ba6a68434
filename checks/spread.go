package checks

import (
	"math"
	"slices"

	"github.com/diffusion-check/diffusion-check/results"
)

// SpreadOf is the spread of values; NaN and infinite values are left out (not measured).
// ok is false when no value is left.
func SpreadOf(values []float64) (s results.Spread, ok bool) {
	var vs []float64
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return results.Spread{}, false
	}
	slices.Sort(vs)
	med := sortedMedian(vs)
	dev := make([]float64, len(vs))
	for i, v := range vs {
		dev[i] = math.Abs(v - med)
	}
	slices.Sort(dev)
	return results.Spread{N: len(vs), Min: vs[0], Median: med, Max: vs[len(vs)-1], MAD: sortedMedian(dev)}, true
}

// sortedMedian is the median of sorted, non-empty values: the middle one, or the mean of the
// two middle ones.
func sortedMedian(vs []float64) float64 {
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
