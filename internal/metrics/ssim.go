package metrics

import (
	"math"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// SSIM as scikit-image computes it with structural_similarity(a, b, channel_axis=2,
// data_range=255) and its defaults: a 7×7 uniform window, sample covariance (N/(N−1)),
// K1 = 0.01, K2 = 0.03, the mean of the local SSIM over the windows that lie fully inside the
// image (scikit-image crops (7−1)/2 = 3 pixels from each side of its SSIM map), and the mean of
// the three channels' means.
//
// The kernel works on exact integer window sums. For one channel, with sx, sy, sxx, syy, sxy
// the sums of x, y, x², y², xy over a window of N = 49 pixels, scikit-image's
//
//	S = (2·ux·uy + C1)(2·vxy + C2) / ((ux² + uy² + C1)(vx + vy + C2)),
//	ux = sx/N, vx = (sxx/N − ux²)·N/(N−1), vxy = (sxy/N − ux·uy)·N/(N−1)
//
// is, after multiplying numerator and denominator by N² and N(N−1),
//
//	S = (2p + N²C1)(2(N·sxy − p) + N(N−1)C2) / ((q + N²C1)(N(sxx + syy) − q + N(N−1)C2))
//
// with p = sx·sy and q = sx² + sy²: integers up to about 3·10⁸ and two constants, so the only
// rounding is in the last few float64 operations. The window sums come from column sums over the
// last 7 rows (one add and one subtract per sample and row) and a sliding sum along the row. Two
// quantities share one uint64: (x², y²) in one word, (x, y, xy) in the other; the fields never
// overflow (a window sum of x² is at most 49·255² < 2²², of x at most 49·255 < 2¹⁴), so packed
// adds and subtracts are exact.

const (
	ssimWin = 7
	ssimN   = ssimWin * ssimWin
	// ssimPad is how many pixels scikit-image crops from each side of the SSIM map.
	ssimPad = (ssimWin - 1) / 2
)

// The constants of the integer form above, for data_range 255.
var (
	ssimC1 = (0.01 * 255) * (0.01 * 255)
	ssimC2 = (0.03 * 255) * (0.03 * 255)
	c1n    = float64(ssimN*ssimN) * ssimC1
	c2n    = float64(ssimN*(ssimN-1)) * ssimC2
)

// SSIMScratch holds the buffers of the SSIM kernel, so that comparing many frames of one size
// allocates nothing after the first. The zero value is ready to use; one SSIMScratch must not
// be used by two goroutines at once.
type SSIMScratch struct {
	w   int
	col [3][2][]uint64 // per channel: packed column sums over the last 7 rows (x²,y²) and (x,y,xy)
	// The vector kernels' state (ssim_simd_amd64.go, ssim_avx2_amd64.go): int32 column sums over the last 7 rows of
	// every sample of a row, channels interleaved as in the frame, padded with zeros.
	vw   int
	vcol [3][]int32 // Σx + Σy·2¹⁶, Σ(x²+y²), Σxy
	zero []byte     // a row of zeros: the "row 7 above" of the first 7 rows
	// noVBMI makes the AVX-512 kernel build its words without VPERMI2B on a CPU that has it,
	// so that tests cover both paths there.
	noVBMI bool
}

// runFunc is a kernel without a map: run(s, a, b, w, h, nil), or a vector version of it that
// returns the same SSE and SAD and sums of the local SSIM within vectorTolerance a window.
// vectorRun(level) (ssim_simd_amd64.go, ssim_novec.go) gives the vector ones, nil for Portable.
type runFunc = func(s *SSIMScratch, a, b []byte, w, h int) (sums [3]float64, sse, sad uint64)

// kernelRun is the kernel of level l: its vector kernel, else the portable one.
func kernelRun(l kernel.Level) runFunc {
	if v := vectorRun(l); v != nil {
		return v
	}
	return func(s *SSIMScratch, a, b []byte, w, h int) ([3]float64, uint64, uint64) {
		return s.run(a, b, w, h, nil)
	}
}

// vectorTolerance bounds |vector − exact| for the local SSIM of one window, and so for their
// mean over any set of windows, where vector is either vector kernel (ssim_simd_amd64.go, ssim_avx2_amd64.go: the same
// float32 operations on 16 or 8 lanes). With u = 2⁻²⁴ (float32 rounding) and the window's SSIM written as
// (A/Q)·(B/D), |A/Q| ≤ 1 and |B/D| ≤ 1 (Cauchy–Schwarz), each of A, Q, D is computed with
// relative error ≤ 2u (integer conversion, rounded constant, addition, all terms ≥ 0) and B with
// absolute error ≤ 2u·D (|b| ≤ d), the products and the quotient add 3u: ≤ 10u for n/d before
// its rounding. Two windows share a division ((n1·d2 + n2·d1)/(d1·d2): four more roundings,
// at most 4u·|s|), so a pair is off by at most 2·10u + 7u, 13.5u a window: 8.1·10⁻⁷, below the
// 10⁻⁶ agreement asked of the mean (scikit-image's own float64 error is about 10⁻¹²). In
// practice the mean over a frame is within about 2·10⁻⁸ of scikit-image's (most of it from N²C1
// and N(N−1)C2 rounded to float32, the same in every window).
const vectorTolerance = 13.5 / (1 << 24)

// FrameMetrics are the metrics of one pair of RGB24 frames.
type FrameMetrics struct {
	// SSIM is the mean of SSIMChannels, as scikit-image's structural_similarity with
	// channel_axis=2 reports it.
	SSIM         float64
	SSIMChannels [3]float64 // R, G, B
	// PSNR in dB with data_range 255; +Inf for identical frames.
	PSNR float64
	// MeanAbsDiff is the mean absolute difference of all samples, 0–255.
	MeanAbsDiff float64
}

// validRGB reports whether a and b are two w×h RGB24 frames large enough for a 7×7 window.
func validRGB(a, b []byte, w, h int) bool {
	return w >= ssimWin && h >= ssimWin && len(a) == 3*w*h && len(b) == len(a) && len(a)/3/w == h
}

// SSIM returns the structural similarity of two w×h RGB24 frames (w·h·3 bytes, row after
// row), equal to scikit-image's structural_similarity(a, b, channel_axis=2, data_range=255).
// It is NaN when the buffers do not hold w×h pixels each or the frame is smaller than the 7×7
// window (scikit-image refuses those).
func SSIM(a, b []byte, w, h int) float64 {
	var s SSIMScratch
	return s.SSIM(a, b, w, h)
}

// SSIM is the package-level SSIM without allocating, once the scratch has seen this width.
func (s *SSIMScratch) SSIM(a, b []byte, w, h int) float64 {
	return s.Metrics(a, b, w, h).SSIM
}

// Metrics computes SSIM (per channel and mean), PSNR and mean absolute difference of two w×h
// RGB24 frames in one pass. Every field is NaN when the frames are not valid for SSIM (see
// SSIM).
func (s *SSIMScratch) Metrics(a, b []byte, w, h int) FrameMetrics {
	if !validRGB(a, b, w, h) {
		nan := math.NaN()
		return FrameMetrics{SSIM: nan, SSIMChannels: [3]float64{nan, nan, nan}, PSNR: nan, MeanAbsDiff: nan}
	}
	return s.metrics(kernel.Selected(), a, b, w, h)
}

// metrics is Metrics with the kernel of level l, on frames known to be valid.
func (s *SSIMScratch) metrics(l kernel.Level, a, b []byte, w, h int) FrameMetrics {
	sums, sse, sad := kernelRun(l)(s, a, b, w, h)
	windows := float64((w - 2*ssimPad) * (h - 2*ssimPad))
	var m FrameMetrics
	for c := range sums {
		m.SSIMChannels[c] = sums[c] / windows
	}
	m.SSIM = (m.SSIMChannels[0] + m.SSIMChannels[1] + m.SSIMChannels[2]) / 3
	m.PSNR = psnrFromSSE(sse, len(a))
	m.MeanAbsDiff = float64(sad) / float64(len(a))
	return m
}

// SSIMMap returns the local SSIM, averaged over the three channels, of every window that lies
// fully inside the frame: an mw×mh map (mw = w−6, mh = h−6), row after row, whose value at
// (x, y) belongs to the window centred on pixel (x+3, y+3). Its mean is SSIM(a, b, w, h). It is
// nil when the frames are not valid for SSIM.
func SSIMMap(a, b []byte, w, h int) (m []float64, mw, mh int) {
	if !validRGB(a, b, w, h) {
		return nil, 0, 0
	}
	mw, mh = w-2*ssimPad, h-2*ssimPad
	m = make([]float64, mw*mh)
	var s SSIMScratch
	s.run(a, b, w, h, m)
	return m, mw, mh
}

// reset sizes the buffers for width w and clears them.
func (s *SSIMScratch) reset(w int) {
	if s.w != w || s.col[0][0] == nil {
		s.w = w
		for c := range 3 {
			for k := range 2 {
				s.col[c][k] = make([]uint64, w)
			}
		}
		return
	}
	for c := range 3 {
		for k := range 2 {
			clear(s.col[c][k])
		}
	}
}

// run is the kernel: it returns the sum of the local SSIM over the fully-inside windows per
// channel, the sum of squared differences and the sum of absolute differences. When smap is
// not nil it also adds each window's SSIM/3 into it.
func (s *SSIMScratch) run(a, b []byte, w, h int, smap []float64) (sums [3]float64, sse, sad uint64) {
	s.reset(w)
	stride := 3 * w
	mw := w - 2*ssimPad
	for r := range h {
		pa := a[r*stride : r*stride+stride]
		pb := b[r*stride : r*stride+stride]
		var oa, ob []byte
		if r >= ssimWin {
			o := (r - ssimWin) * stride
			oa, ob = a[o:o+stride], b[o:o+stride]
		}
		for c := range 3 {
			var oac, obc []byte
			if oa != nil {
				oac, obc = oa[c:], ob[c:]
			}
			e2, e1 := addRow(pa[c:], pb[c:], oac, obc, oa != nil, s.col[c][0], s.col[c][1])
			sse += e2
			sad += e1
		}
		if r < ssimWin-1 {
			continue
		}
		top := r - (ssimWin - 1)
		for c := range 3 {
			if smap != nil {
				sums[c] += windowRowMap(s.col[c][0], s.col[c][1], smap[top*mw:top*mw+mw])
			} else {
				sums[c] += windowRow(s.col[c][0], s.col[c][1])
			}
		}
	}
	return sums, sse, sad
}

// addRow moves one channel's column sums down a row: it adds the new row's samples (pa[0],
// pa[3], ... against pb) and, when old is true, subtracts those of the row 7 above (oa, ob). It
// returns the new row's sums of squared and absolute differences. Recomputing the old row's
// products from its bytes is cheaper than keeping them.
func addRow(pa, pb, oa, ob []byte, old bool, colSq, colLin []uint64) (sse, sad uint64) {
	n := len(colSq)
	colLin = colLin[:n]
	if n == 0 || len(pa) < 3*(n-1)+1 || len(pb) < 3*(n-1)+1 {
		return 0, 0
	}
	pa, pb = pa[:3*(n-1)+1], pb[:3*(n-1)+1]
	if old {
		if len(oa) < len(pa) || len(ob) < len(pa) {
			return 0, 0
		}
		oa, ob = oa[:len(pa)], ob[:len(pa)]
		for i := range n {
			x, y := uint64(pa[3*i]), uint64(pb[3*i])
			u, v := uint64(oa[3*i]), uint64(ob[3*i])
			colSq[i] += (x*x | y*y<<32) - (u*u | v*v<<32)
			colLin[i] += (x | y<<16 | x*y<<32) - (u | v<<16 | u*v<<32)
			d := int64(x) - int64(y)
			sse += uint64(d * d)
			m := d >> 63
			sad += uint64((d ^ m) - m)
		}
		return sse, sad
	}
	for i := range n {
		x, y := uint64(pa[3*i]), uint64(pb[3*i])
		colSq[i] += x*x | y*y<<32
		colLin[i] += x | y<<16 | x*y<<32
		d := int64(x) - int64(y)
		sse += uint64(d * d)
		m := d >> 63
		sad += uint64((d ^ m) - m)
	}
	return sse, sad
}

// window returns the local SSIM of one window from its packed sums.
func window(hSq, hLin uint64) float64 {
	sxx, syy := int64(hSq&0xffffffff), int64(hSq>>32)
	sx, sy, sxy := int64(hLin&0xffff), int64(hLin>>16&0xffff), int64(hLin>>32)
	p := sx * sy
	q := sx*sx + sy*sy
	num := (float64(2*p) + c1n) * (float64(2*(ssimN*sxy-p)) + c2n)
	den := (float64(q) + c1n) * (float64(ssimN*(sxx+syy)-q) + c2n)
	return num / den
}

// windowRow slides the 7-wide window along one channel's column sums and returns the sum of
// the local SSIM of every window. It is window() written out, two windows per division
// (n1/d1 + n2/d2 = (n1·d2 + n2·d1)/(d1·d2); d is at most about 10³⁴, far from overflow).
func windowRow(colSq, colLin []uint64) float64 {
	n := len(colSq)
	colLin = colLin[:n]
	var hSq, hLin uint64
	for i := range ssimWin - 1 {
		hSq += colSq[i]
		hLin += colLin[i]
	}
	var sum float64
	var pend bool
	var n1, d1 float64
	for i := ssimWin - 1; i < n; i++ {
		hSq += colSq[i]
		hLin += colLin[i]
		s2 := int64(hSq&0xffffffff) + int64(hSq>>32)
		sx, sy, sxy := int64(hLin&0xffff), int64(hLin>>16&0xffff), int64(hLin>>32)
		p := sx * sy
		q := sx*sx + sy*sy
		num := (float64(2*p) + c1n) * (float64(2*(ssimN*sxy-p)) + c2n)
		den := (float64(q) + c1n) * (float64(ssimN*s2-q) + c2n)
		if pend {
			sum += (n1*den + num*d1) / (d1 * den)
		} else {
			n1, d1 = num, den
		}
		pend = !pend
		hSq -= colSq[i-ssimWin+1]
		hLin -= colLin[i-ssimWin+1]
	}
	if pend {
		sum += n1 / d1
	}
	return sum
}

// windowRowMap is windowRow that also adds each window's SSIM/3 into m (len n−6).
func windowRowMap(colSq, colLin []uint64, m []float64) float64 {
	n := len(colSq)
	colLin = colLin[:n]
	m = m[:n-ssimWin+1]
	var hSq, hLin uint64
	for i := range ssimWin {
		hSq += colSq[i]
		hLin += colLin[i]
	}
	v := window(hSq, hLin)
	m[0] += v / 3
	sum := v
	for i := ssimWin; i < n; i++ {
		hSq += colSq[i] - colSq[i-ssimWin]
		hLin += colLin[i] - colLin[i-ssimWin]
		v := window(hSq, hLin)
		m[i-ssimWin+1] += v / 3
		sum += v
	}
	return sum
}
