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

	// One frame's walk (rowKernel): what the rows so far add up to, and the kernel's settings
	// for the frame's width.
	sums     [3]float64       // the portable kernel's sums of the local SSIM, per channel
	sse, sad uint64           // sums of squared and absolute differences
	smap     []float64        // when not nil, the portable kernel adds each window's SSIM/3 here (SSIMMap)
	vacc     [48]float64      // the vector kernels' float64 accumulators, lane by lane
	vsteps   int              // steps of the window loop a row takes
	vlast    [6]int           // windows that exist in each vector of the last step
	vbmi     bool             // the AVX-512 kernel builds its words with VPERMI2B
	held     [RowsHeld][]byte // the output's last rows (walk), row r in slot r mod RowsHeld
}

// Rows gives the rows of one rgb24 frame of width w, in order: called with r = 0, 1, …, h−1
// (once each), it returns row r, 3·w bytes. A row it returned must stay as it is until RowsHeld
// more rows were asked of it: the kernel subtracts every row again 7 rows after adding it. A
// row of another length makes the frame invalid (its metrics NaN). media.RawFormat.Rows gives
// them converted from yuv420p a row at a time, in RowsHeld rows of memory.
type Rows = func(r int) []byte

// RowsHeld is how many rows of each frame the kernel holds at once.
const RowsHeld = ssimWin + 1

// FrameRows returns the rows of a whole rgb24 frame of width w (nil past its end).
func FrameRows(a []byte, w int) Rows {
	stride := 3 * w
	return func(r int) []byte {
		if r < 0 || (r+1)*stride > len(a) {
			return nil
		}
		return a[r*stride : (r+1)*stride]
	}
}

// rowKernel is an SSIM kernel taken a row at a time, on one output and its ground truth:
// begin readies s for frames of width w; row moves s's column sums down by the output's new
// row pa and the ground truth's pb, subtracting the rows 7 above, oa and ob (nil for the first
// 7 rows), and once top ≥ 0 adds the local SSIM of the row of windows whose top is row top;
// end returns the sums of the local SSIM per channel (SSE and SAD are in s). The portable
// kernel is portableKernel; vectorKernel(level) (ssim_simd_amd64.go, ssim_novec.go) gives the
// vector ones, nil for Portable, which return the same SSE and SAD and sums of the local SSIM
// within vectorTolerance a window.
type rowKernel struct {
	begin func(s *SSIMScratch, w int)
	row   func(s *SSIMScratch, pa, pb, oa, ob []byte, top int)
	end   func(s *SSIMScratch) [3]float64
}

// kernelOf is the kernel of level l: its vector kernel, else the portable one.
func kernelOf(l kernel.Level) *rowKernel {
	if v := vectorKernel(l); v != nil {
		return v
	}
	return &portableKernel
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
		return invalidMetrics()
	}
	return s.metrics(kernel.Selected(), a, b, w, h)
}

func invalidMetrics() FrameMetrics {
	nan := math.NaN()
	return FrameMetrics{SSIM: nan, SSIMChannels: [3]float64{nan, nan, nan}, PSNR: nan, MeanAbsDiff: nan}
}

// metrics is Metrics with the kernel of level l, on frames known to be valid.
func (s *SSIMScratch) metrics(l kernel.Level, a, b []byte, w, h int) FrameMetrics {
	k := kernelOf(l)
	s.frame(k, a, b, w, h)
	return s.result(k, w, h)
}

// frame runs kernel k on two whole frames and returns the sums of the local SSIM per channel,
// SSE and SAD.
func (s *SSIMScratch) frame(k *rowKernel, a, b []byte, w, h int) (sums [3]float64, sse, sad uint64) {
	ok := [1]bool{}
	walk(k, []*SSIMScratch{s}, []Rows{FrameRows(a, w)}, FrameRows(b, w), w, h, ok[:])
	return k.end(s), s.sse, s.sad
}

// result turns what kernel k left in s after a walk of w×h frames into their metrics.
func (s *SSIMScratch) result(k *rowKernel, w, h int) FrameMetrics {
	sums := k.end(s)
	windows := float64((w - 2*ssimPad) * (h - 2*ssimPad))
	var m FrameMetrics
	for c := range sums {
		m.SSIMChannels[c] = sums[c] / windows
	}
	m.SSIM = (m.SSIMChannels[0] + m.SSIMChannels[1] + m.SSIMChannels[2]) / 3
	m.PSNR = psnrFromSSE(s.sse, 3*w*h)
	m.MeanAbsDiff = float64(s.sad) / float64(3*w*h)
	return m
}

// walk runs kernel k on every output (outs[i], scratch ss[i]) against one ground truth, a row
// at a time: each ground-truth row is asked for once and serves every output, and no frame
// need be whole in memory (RowsHeld rows of each). ok[i] reports whether output i gave rows of
// the right length throughout (false for all when the ground truth did not); what k left in
// ss[i] is its result only then.
func walk(k *rowKernel, ss []*SSIMScratch, outs []Rows, gt Rows, w, h int, ok []bool) {
	stride := 3 * w
	for i := range ok {
		ok[i] = true
	}
	var gHeld [RowsHeld][]byte
	for r := range h {
		g := gt(r)
		if len(g) != stride {
			clear(ok)
			break
		}
		gHeld[r%RowsHeld] = g
		var og []byte
		if r >= ssimWin {
			og = gHeld[(r-ssimWin)%RowsHeld]
		}
		top := r - (ssimWin - 1) // the row of windows that row r completes; none before the 7th
		for i, s := range ss {
			if !ok[i] {
				continue
			}
			a := outs[i](r)
			if len(a) != stride {
				ok[i] = false
				continue
			}
			if r == 0 {
				k.begin(s, w) // only now: a width its rows do not have would size buffers for nothing
			}
			s.held[r%RowsHeld] = a
			var oa []byte
			if r >= ssimWin {
				oa = s.held[(r-ssimWin)%RowsHeld]
			}
			k.row(s, a, g, oa, og, top)
		}
	}
	for _, s := range ss {
		clear(s.held[:]) // the rows are the caller's: hold none past the walk
	}
}

// EachScratch is the scratch of Each: an SSIMScratch per output. The zero value is ready to
// use; one EachScratch must not be used by two goroutines at once.
type EachScratch struct {
	ss  []SSIMScratch
	ptr []*SSIMScratch
	ok  []bool
	res []FrameMetrics
}

// Each computes, for every output of outs, what Metrics computes of it and the ground truth
// gt (frames of w×h), walking the frames a row at a time in step: every ground-truth row is
// asked for once, and no frame need be whole in memory. An output whose rows are not all 3·w
// bytes gets NaN metrics, all of them when gt's are not. The result is e's own until the next
// call.
func (e *EachScratch) Each(outs []Rows, gt Rows, w, h int) []FrameMetrics {
	return e.each(kernel.Selected(), outs, gt, w, h)
}

func (e *EachScratch) each(l kernel.Level, outs []Rows, gt Rows, w, h int) []FrameMetrics {
	n := len(outs)
	if len(e.ss) < n {
		e.ss = append(e.ss, make([]SSIMScratch, n-len(e.ss))...)
		e.ptr, e.ok, e.res = make([]*SSIMScratch, n), make([]bool, n), make([]FrameMetrics, n)
	}
	ptr, ok, res := e.ptr[:n], e.ok[:n], e.res[:n]
	for i := range ptr {
		ptr[i] = &e.ss[i]
	}
	if w < ssimWin || h < ssimWin {
		clear(ok)
	} else {
		k := kernelOf(l)
		walk(k, ptr, outs, gt, w, h, ok)
		for i, s := range ptr {
			if ok[i] {
				res[i] = s.result(k, w, h)
			}
		}
	}
	for i := range res {
		if !ok[i] {
			res[i] = invalidMetrics()
		}
	}
	return res
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
	s.smap = m
	s.frame(&portableKernel, a, b, w, h)
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

// portableKernel is the kernel in plain Go, on packed uint64 column sums per channel; with
// s.smap set it also adds each window's SSIM/3 into that map.
var portableKernel = rowKernel{
	begin: func(s *SSIMScratch, w int) {
		s.reset(w)
		s.sums, s.sse, s.sad = [3]float64{}, 0, 0
	},
	row: func(s *SSIMScratch, pa, pb, oa, ob []byte, top int) {
		for c := range 3 {
			var oac, obc []byte
			if oa != nil {
				oac, obc = oa[c:], ob[c:]
			}
			e2, e1 := addRow(pa[c:], pb[c:], oac, obc, oa != nil, s.col[c][0], s.col[c][1])
			s.sse += e2
			s.sad += e1
		}
		if top < 0 {
			return
		}
		mw := s.w - 2*ssimPad
		for c := range 3 {
			if s.smap != nil {
				s.sums[c] += windowRowMap(s.col[c][0], s.col[c][1], s.smap[top*mw:top*mw+mw])
			} else {
				s.sums[c] += windowRow(s.col[c][0], s.col[c][1])
			}
		}
	},
	end: func(s *SSIMScratch) [3]float64 { return s.sums },
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
