package metrics

import "math"

// PSNR returns the peak signal-to-noise ratio of two equally long 8-bit buffers in dB, with
// data_range 255, as scikit-image's peak_signal_noise_ratio(a, b, data_range=255): +Inf when they
// are identical, NaN when their lengths differ or they are empty.
func PSNR(a, b []byte) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return math.NaN()
	}
	b = b[:len(a)]
	var sse uint64
	for i := range a {
		d := int64(a[i]) - int64(b[i])
		sse += uint64(d * d)
	}
	return psnrFromSSE(sse, len(a))
}

// MeanAbsDiff returns the mean absolute difference of two equally long 8-bit buffers (all
// samples, all channels), 0–255; NaN when their lengths differ or they are empty.
func MeanAbsDiff(a, b []byte) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return math.NaN()
	}
	b = b[:len(a)]
	var sad uint64
	for i := range a {
		d := int64(a[i]) - int64(b[i])
		m := d >> 63
		sad += uint64((d ^ m) - m)
	}
	return float64(sad) / float64(len(a))
}

// psnrFromSSE is 10·log10(255² / MSE) for a sum of squared differences over n samples.
func psnrFromSSE(sse uint64, n int) float64 {
	if sse == 0 {
		return math.Inf(1)
	}
	mse := float64(sse) / float64(n)
	return 10 * math.Log10(255*255/mse)
}
