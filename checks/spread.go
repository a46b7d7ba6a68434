package checks

import (
	"math"
	"slices"
)

// Spread summarises one metric over the requests a baseline was made from: how many values
// (N), the smallest, the median, the largest, and the median absolute deviation (MAD: the
// median of |value − median|), a measure of noise that one outlier cannot inflate. The
// baseline itself keeps the worst value; the spread says how much the values moved.
type Spread struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	MAD    float64 `json:"mad"`
}

// SpreadOf is the spread of values; NaN and infinite values are left out (not measured).
// ok is false when no value is left.
func SpreadOf(values []float64) (s Spread, ok bool) {
	var vs []float64
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Spread{}, false
	}
	slices.Sort(vs)
	med := sortedMedian(vs)
	dev := make([]float64, len(vs))
	for i, v := range vs {
		dev[i] = math.Abs(v - med)
	}
	slices.Sort(dev)
	return Spread{N: len(vs), Min: vs[0], Median: med, Max: vs[len(vs)-1], MAD: sortedMedian(dev)}, true
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

// MADs is how far v lies from the median in MADs, signed: (v − median) / MAD, +4.1 for a
// value 4.1 MADs above it. ok is false when the MAD is zero (one value, or values all
// alike), where no such distance exists; Outside then says whether v differs from them.
func (s Spread) MADs(v float64) (d float64, ok bool) {
	if s.MAD <= 0 || math.IsNaN(s.MAD) || s.N == 0 {
		return 0, false
	}
	return (v - s.Median) / s.MAD, true
}

// Outside reports whether v lies outside every value the spread saw (below Min or above
// Max).
func (s Spread) Outside(v float64) bool { return s.N > 0 && (v < s.Min || v > s.Max) }
