package checks

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

func TestSpreadOf(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		values []float64
		want   results.Spread
		ok     bool
	}{
		{"none", nil, results.Spread{}, false},
		{"only NaN", []float64{nan, math.Inf(1)}, results.Spread{}, false},
		{"one value: MAD 0", []float64{100}, results.Spread{N: 1, Min: 100, Median: 100, Max: 100}, true},
		{"alike: MAD 0", []float64{5, 5, 5}, results.Spread{N: 3, Min: 5, Median: 5, Max: 5}, true},
		// median 3; deviations 2,1,0,1,97 → sorted 0,1,1,2,97 → MAD 1: the outlier does not inflate it.
		{"odd, with an outlier", []float64{100, 1, 3, 2, 4}, results.Spread{N: 5, Min: 1, Median: 3, Max: 100, MAD: 1}, true},
		// median (2+4)/2 = 3; deviations 2,1,1,7 → MAD (1+2)/2 = 1.5.
		{"even", []float64{10, 4, 1, 2}, results.Spread{N: 4, Min: 1, Median: 3, Max: 10, MAD: 1.5}, true},
		{"NaN left out", []float64{nan, 2, 4}, results.Spread{N: 2, Min: 2, Median: 3, Max: 4, MAD: 1}, true},
	}
	for _, tt := range tests {
		got, ok := SpreadOf(tt.values)
		if ok != tt.ok {
			t.Errorf("%s: ok %v, want %v", tt.name, ok, tt.ok)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: SpreadOf (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSpreadMADs(t *testing.T) {
	s := results.Spread{N: 5, Min: 90, Median: 100, Max: 110, MAD: 5}
	tests := []struct {
		v       float64
		want    float64
		ok      bool
		outside bool
	}{
		{120.5, 4.1, true, true},
		{100, 0, true, false},
		{95, -1, true, false},
		{80, -4, true, true},
	}
	for _, tt := range tests {
		d, ok := s.MADs(tt.v)
		if ok != tt.ok || math.Abs(d-tt.want) > 1e-12 || s.Outside(tt.v) != tt.outside {
			t.Errorf("MADs(%v) = %v, %v, outside %v; want %v, %v, %v", tt.v, d, ok, s.Outside(tt.v), tt.want, tt.ok, tt.outside)
		}
	}
	one := results.Spread{N: 1, Min: 100, Median: 100, Max: 100}
	if _, ok := one.MADs(130); ok {
		t.Errorf("MADs with MAD 0 (n=1): want no distance")
	}
	if !one.Outside(130) || one.Outside(100) {
		t.Errorf("Outside with MAD 0: want 130 outside, 100 not")
	}
	if (results.Spread{}).Outside(1) {
		t.Errorf("an empty spread has nothing outside it")
	}
}
