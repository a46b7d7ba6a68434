//go:build goexperiment.simd && amd64

package metrics

import (
	"simd/archsimd"
	"unsafe"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// The AVX-512 kernel, built with GOEXPERIMENT=simd on amd64 and used when package kernel selects
// AVX512 (the AVX2 kernel is in ssim_avx2_amd64.go; else the portable kernel in ssim.go runs).
// No vector instruction of this file runs unless the CPU was asked first: there is no init and
// no package-level vector value; the byte tables below are plain arrays, loaded into vectors
// inside the kernel. Its window sums are exactly the portable
// kernel's; the last few operations of the formula are float32, within a proven bound of the
// exact result (vectorTolerance in ssim.go).
//
// A row of a frame is 3w samples, channels interleaved. The kernel keeps, for every sample
// column, three int32 sums over the last 7 rows: x + y·2¹⁶ (x and y as two 16-bit words; a
// window sum of either is below 2¹⁴), 49·(x²+y²) and 98·xy. A row moves them down by adding
// the new row and subtracting the row 7 above, 16 samples per instruction, with 16-bit pair
// products (VPMADDWD): with P = (x, y) and Q = (u, v) the words of the new and the old sample,
// D = P−Q and S = P+Q,
//
//	49·(x²+y² − u²−v²) = (49·D)·S,  98·(xy − uv) = (49·D)·(S with its words swapped),
//
// each "·" one VPMADDWD (49·(x−u) and x+u fit in int16). The 7-wide window of a sample is the
// sum of 7 column sums 3 samples apart (the same channel), 16 windows at a time, each lane of its
// own channel. With L = (sx, sy) the window's two word sums, q = sx²+sy² = L·L and 2p = 2·sx·sy =
// L·(L swapped), again one VPMADDWD each; then the integers of the portable formula,
// a = 2p, b = 98·sxy − 2p, q and d = 49·(sxx+syy) − q, all exact in int32 (|·| < 3.2·10⁸),
// go to float32 for (a + N²C1)(b + N(N−1)C2) / ((q + N²C1)(d + N(N−1)C2)), two windows of the
// same channel (48 samples apart) per division, and each sum of two goes to a float64
// accumulator.

// vectorKernel returns the vector kernel of level l, nil for Portable.
func vectorKernel(l kernel.Level) *rowKernel {
	switch l {
	case kernel.AVX512:
		return &avx512Kernel
	case kernel.AVX2:
		return &avx2Kernel
	}
	return nil
}

// ssimStep is how many samples one step of the window loop handles: 6 vectors of 16; vector k
// and k+3 (48 samples apart) hold windows of the same channels lane by lane.
const ssimStep = 96

// pairIdx holds the byte indices (into a‖b, 128 bytes) that make the 16-bit words (x, y) of 16
// samples out of 64 bytes of a and b; the odd bytes are then zeroed. A plain array: vAddRow loads
// it into vectors, after the CPU check.
var pairIdx = func() (idx [4][64]uint8) {
	for k := range 4 {
		for j := range 16 {
			idx[k][4*j] = uint8(16*k + j)
			idx[k][4*j+2] = uint8(64 + 16*k + j)
		}
	}
	return idx
}()

func (s *SSIMScratch) vreset(w int) {
	mw3 := 3 * (w - 2*ssimPad)
	// Covers the 3w samples of a row (mw3 + 18 = 3w) and the windows of the last step.
	n := (mw3+ssimStep-1)/ssimStep*ssimStep + 3*(ssimWin-1)
	if s.vw != w || s.vcol[0] == nil {
		s.vw = w
		for k := range s.vcol {
			s.vcol[k] = make([]int32, n)
		}
		s.zero = make([]byte, 3*w)
		return
	}
	for k := range s.vcol {
		clear(s.vcol[k])
	}
}

// vbegin readies s for a frame of width w under a vector kernel of step samples a step (6
// vectors of step/6 windows): the column sums cleared, the accumulators zeroed, and how many
// windows exist in each vector of the last step.
func (s *SSIMScratch) vbegin(w, step int) {
	s.vreset(w)
	s.sse, s.sad = 0, 0
	clear(s.vacc[:])
	mw3 := 3 * (w - 2*ssimPad)
	s.vsteps = (mw3 + step - 1) / step
	for k := range s.vlast {
		s.vlast[k] = min(max(mw3-(s.vsteps-1)*step-step/6*k, 0), step/6)
	}
}

// vend returns the sums of the local SSIM per channel out of the accumulators of a kernel of
// lanes float64 lanes: accumulator k lane j holds windows at sample offset lanes·k + j of a
// step, and more of its channel further on.
func (s *SSIMScratch) vend(lanes int) (sums [3]float64) {
	for i, x := range s.vacc[:6*lanes] {
		sums[i%3] += x
	}
	return sums
}

// avx512Kernel: the rows of windows are vRow's, the column sums vAddRow's.
var avx512Kernel = rowKernel{
	begin: func(s *SSIMScratch, w int) {
		s.vbegin(w, ssimStep)
		// VPERMI2B (AVX512-VBMI: Ice Lake and later, Zen 4) builds the words in one
		// instruction; without it (Skylake-SP, Cascade Lake) vAddRow takes a few more.
		s.vbmi = archsimd.X86.AVX512VBMI() && !s.noVBMI
	},
	row: func(s *SSIMScratch, pa, pb, oa, ob []byte, top int) {
		if oa == nil {
			oa, ob = s.zero, s.zero
		}
		e2, e1 := vAddRow(pa, pb, oa, ob, &s.vcol, s.vbmi)
		s.sse += e2
		s.sad += e1
		if top >= 0 {
			var last [6]archsimd.Mask32x16
			var acc [6]archsimd.Float64x8
			for k := range last {
				last[k] = archsimd.Mask32x16FromBits(uint16(1)<<s.vlast[k] - 1)
				acc[k] = archsimd.LoadFloat64x8((*[8]float64)(s.vacc[8*k:]))
			}
			vRow(&s.vcol, s.vsteps, &last, &acc)
			for k := range acc {
				acc[k].Store((*[8]float64)(s.vacc[8*k:]))
			}
		}
		archsimd.ClearAVXUpperBits()
	},
	end: func(s *SSIMScratch) [3]float64 { return s.vend(8) },
}

// vAddRow moves the column sums down one row: it adds the samples of pa, pb and subtracts those
// of oa, ob (the row 7 above, or zeros). It returns the sums of squared and absolute
// differences of pa and pb. The main loop reads and writes through unsafe pointers that advance
// 64 samples a step, inside the lengths resliced at the top (see vRow).
func vAddRow(pa, pb, oa, ob []byte, col *[3][]int32, vbmi bool) (sse, sad uint64) {
	n := len(pa)
	pb, oa, ob = pb[:n], oa[:n], ob[:n]
	cl, c2, cxy := col[0][:n], col[1][:n], col[2][:n]
	var vsse archsimd.Int32x16
	var vsad archsimd.Uint64x8
	n49 := archsimd.BroadcastInt16x32(ssimN)
	low := archsimd.BroadcastInt32x16(0x00ff00ff).AsUint8x64() // the even bytes
	var i0, i1, i2, i3 archsimd.Uint8x64
	if vbmi {
		i0, i1 = archsimd.LoadUint8x64(&pairIdx[0]), archsimd.LoadUint8x64(&pairIdx[1])
		i2, i3 = archsimd.LoadUint8x64(&pairIdx[2]), archsimd.LoadUint8x64(&pairIdx[3])
	}
	blocks := n / 64
	if blocks > 0 {
		px, py := unsafe.Pointer(&pa[0]), unsafe.Pointer(&pb[0])
		pu, pv := unsafe.Pointer(&oa[0]), unsafe.Pointer(&ob[0])
		pl, p2, pxy := unsafe.Pointer(&cl[0]), unsafe.Pointer(&c2[0]), unsafe.Pointer(&cxy[0])
		for k := range blocks {
			x := archsimd.LoadUint8x64((*[64]uint8)(px))
			y := archsimd.LoadUint8x64((*[64]uint8)(py))
			u := archsimd.LoadUint8x64((*[64]uint8)(pu))
			v := archsimd.LoadUint8x64((*[64]uint8)(pv))
			vsad = vsad.Add(x.SumAbsDiff(y).AsUint64x8())
			ad := x.SubSaturated(y).Or(y.SubSaturated(x))
			lo := ad.GetLo().ExtendToUint16().AsInt16x32()
			hi := ad.GetHi().ExtendToUint16().AsInt16x32()
			vsse = vsse.Add(lo.DotProductPairs(lo)).Add(hi.DotProductPairs(hi))
			if vbmi { // (x, y) words by one byte permute of x‖y, and a mask
				pairUpdate(x.ConcatPermute(y, i0).And(low), u.ConcatPermute(v, i0).And(low), n49, pl, p2, pxy)
				pairUpdate(x.ConcatPermute(y, i1).And(low), u.ConcatPermute(v, i1).And(low), n49, unsafe.Add(pl, 64), unsafe.Add(p2, 64), unsafe.Add(pxy, 64))
				pairUpdate(x.ConcatPermute(y, i2).And(low), u.ConcatPermute(v, i2).And(low), n49, unsafe.Add(pl, 128), unsafe.Add(p2, 128), unsafe.Add(pxy, 128))
				pairUpdate(x.ConcatPermute(y, i3).And(low), u.ConcatPermute(v, i3).And(low), n49, unsafe.Add(pl, 192), unsafe.Add(p2, 192), unsafe.Add(pxy, 192))
			} else { // x + y·2¹⁶ from two zero-extensions, a shift and an or
				pairUpdate(words(px, py, 0), words(pu, pv, 0), n49, pl, p2, pxy)
				pairUpdate(words(px, py, 16), words(pu, pv, 16), n49, unsafe.Add(pl, 64), unsafe.Add(p2, 64), unsafe.Add(pxy, 64))
				pairUpdate(words(px, py, 32), words(pu, pv, 32), n49, unsafe.Add(pl, 128), unsafe.Add(p2, 128), unsafe.Add(pxy, 128))
				pairUpdate(words(px, py, 48), words(pu, pv, 48), n49, unsafe.Add(pl, 192), unsafe.Add(p2, 192), unsafe.Add(pxy, 192))
			}
			if k+1 < blocks { // never past the end, not even as a pointer
				px, py, pu, pv = unsafe.Add(px, 64), unsafe.Add(py, 64), unsafe.Add(pu, 64), unsafe.Add(pv, 64)
				pl, p2, pxy = unsafe.Add(pl, 256), unsafe.Add(p2, 256), unsafe.Add(pxy, 256)
			}
		}
	}
	// A row of 3·w samples adds at most (3·w/64)·4·255² per lane: no overflow for any w below
	// 10⁵, and maxPixels-sized frames are far from that width.
	var t [16]int32
	vsse.Store(&t)
	for _, e := range t {
		sse += uint64(e)
	}
	var t8 [8]uint64
	vsad.Store(&t8)
	for _, e := range t8 {
		sad += e
	}
	e2, e1 := addRowTail(pa, pb, oa, ob, cl, c2, cxy, 64*blocks)
	return sse + e2, sad + e1
}

// addRowTail is vAddRow's and vAddRow2's scalar end: it moves the column sums of the samples
// from `from` on, which fill no whole vector, and returns their sums of squared and absolute
// differences.
func addRowTail(pa, pb, oa, ob []byte, cl, c2, cxy []int32, from int) (sse, sad uint64) {
	for i := from; i < len(pa); i++ {
		x, y, u, v := int32(pa[i]), int32(pb[i]), int32(oa[i]), int32(ob[i])
		d := int64(x - y)
		sse += uint64(d * d)
		m := d >> 63
		sad += uint64((d ^ m) - m)
		cl[i] += x - u + (y-v)<<16
		c2[i] += ssimN * (x*x + y*y - u*u - v*v)
		cxy[i] += 2 * ssimN * (x*y - u*v)
	}
	return sse, sad
}

// words returns the 16-bit words (x, y) of the 16 samples at px+o and py+o (AVX-512F/BW only).
func words(px, py unsafe.Pointer, o uintptr) archsimd.Uint8x64 {
	x := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(px, o))).ExtendToUint32()
	y := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(py, o))).ExtendToUint32()
	return x.Or(y.ShiftAllLeft(16)).AsUint8x64()
}

// pairUpdate updates the 16 column sums at cl, c2, cxy with the 16-bit words p = (x, y) of the
// new samples and q = (u, v) of the old.
func pairUpdate(p8, q8 archsimd.Uint8x64, n49 archsimd.Int16x32, cl, c2, cxy unsafe.Pointer) {
	p, q := p8.AsInt16x32(), q8.AsInt16x32()
	d := p.Sub(q)
	s := p.Add(q)
	d49 := d.Mul(n49)
	sq := d49.DotProductPairs(s)
	xy := d49.DotProductPairs(s.AsInt32x16().RotateAllLeft(16).AsInt16x32())
	archsimd.LoadInt16x32((*[32]int16)(cl)).Add(d).Store((*[32]int16)(cl))
	archsimd.LoadInt32x16((*[16]int32)(c2)).Add(sq).Store((*[16]int32)(c2))
	archsimd.LoadInt32x16((*[16]int32)(cxy)).Add(xy).Store((*[16]int32)(cxy))
}

// vRow adds the local SSIM of the windows of one row of windows into acc: 96 windows (a step)
// in three iterations, each a pair of vectors of 16 windows 48 samples (16 pixels) apart
// sharing one division; last masks the windows that exist in the last step. Everything is in
// this one function (hsum inlined): a call would spill every vector register. The loads go
// through unsafe pointers (the column sums are checked once to be long enough): Go's slice
// expressions cost more scalar instructions than the vector work they feed.
func vRow(col *[3][]int32, steps int, last *[6]archsimd.Mask32x16, acc *[6]archsimd.Float64x8) {
	n := steps*ssimStep + 3*(ssimWin-1)
	cl, c2, cxy := col[0][:n], col[1][:n], col[2][:n]
	pl, p2, pxy := unsafe.Pointer(&cl[0]), unsafe.Pointer(&c2[0]), unsafe.Pointer(&cxy[0])
	k1 := archsimd.BroadcastFloat32x16(c1n32)
	k2 := archsimd.BroadcastFloat32x16(c2n32)
	// a0, a1 are the accumulators of the pair at hand; they rotate by two every iteration, so
	// that pair k of a step (k = 0, 1, 2) always adds into acc[2k], acc[2k+1].
	a0, a1, a2, a3, a4, a5 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
	lastFrom := 3 * (steps - 1)
	k := 0
	for p := range 3 * steps {
		// pl, p2, pxy point at the pair's first windows (the second are 48 samples on): they
		// advance by 16 samples, and by 64 after the third pair of a step. (Pointers that
		// advance let the compiler put the constant offsets in the loads.) For each vector of
		// 16 windows: L = (sx, sy), q = L·L, a = 2p = L·swap(L), b = 98·sxy − a,
		// d = 49·(sxx+syy) − q, then n = (a + N²C1)(b + N(N−1)C2) and
		// d = (q + N²C1)(d + N(N−1)C2) in float32. Written out twice: Go would not inline it.
		l := hsum(pl)
		lw := l.AsInt16x32()
		q := lw.DotProductPairs(lw)
		a := lw.DotProductPairs(l.RotateAllLeft(16).AsInt16x32())
		b := hsum(pxy).Sub(a)
		d := hsum(p2).Sub(q)
		n1 := a.ConvertToFloat32().Add(k1).Mul(b.ConvertToFloat32().Add(k2))
		d1 := q.ConvertToFloat32().Add(k1).Mul(d.ConvertToFloat32().Add(k2))
		l = hsum(unsafe.Add(pl, 4*48))
		lw = l.AsInt16x32()
		q = lw.DotProductPairs(lw)
		a = lw.DotProductPairs(l.RotateAllLeft(16).AsInt16x32())
		b = hsum(unsafe.Add(pxy, 4*48)).Sub(a)
		d = hsum(unsafe.Add(p2, 4*48)).Sub(q)
		n2 := a.ConvertToFloat32().Add(k1).Mul(b.ConvertToFloat32().Add(k2))
		d2 := q.ConvertToFloat32().Add(k1).Mul(d.ConvertToFloat32().Add(k2))
		if p >= lastFrom {
			n1, n2 = n1.Masked(last[k]), n2.Masked(last[k+3])
		}
		sum := n1.MulAdd(d2, n2.Mul(d1)).Div(d1.Mul(d2))
		a0, a1, a2, a3, a4, a5 = a2, a3, a4, a5, a0.Add(sum.GetLo().ConvertToFloat64()), a1.Add(sum.GetHi().ConvertToFloat64())
		step := 4 * 16
		if k++; k == 3 {
			k, step = 0, 4*64
		}
		if p+1 < 3*steps { // never past the end, not even as a pointer
			pl, p2, pxy = unsafe.Add(pl, step), unsafe.Add(p2, step), unsafe.Add(pxy, step)
		}
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5] = a0, a1, a2, a3, a4, a5
}

// N²C1 and N(N−1)C2 in float32.
const (
	c1n32 = float32(ssimN * ssimN * (0.01 * 255) * (0.01 * 255))
	c2n32 = float32(ssimN * (ssimN - 1) * (0.03 * 255) * (0.03 * 255))
)

// hsum returns the 16 sums c[i] + c[i+3] + … + c[i+18], i = 0…15, of the int32 at c: the
// 7-wide windows of one channel.
func hsum(c unsafe.Pointer) archsimd.Int32x16 {
	s := archsimd.LoadInt32x16((*[16]int32)(c))
	s = s.Add(archsimd.LoadInt32x16((*[16]int32)(unsafe.Add(c, 12))))
	s = s.Add(archsimd.LoadInt32x16((*[16]int32)(unsafe.Add(c, 24))))
	s = s.Add(archsimd.LoadInt32x16((*[16]int32)(unsafe.Add(c, 36))))
	s = s.Add(archsimd.LoadInt32x16((*[16]int32)(unsafe.Add(c, 48))))
	s = s.Add(archsimd.LoadInt32x16((*[16]int32)(unsafe.Add(c, 60))))
	return s.Add(archsimd.LoadInt32x16((*[16]int32)(unsafe.Add(c, 72))))
}
