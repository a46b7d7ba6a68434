//go:build goexperiment.simd && amd64

package metrics

import (
	"simd/archsimd"
	"unsafe"
)

// The AVX2 kernel: the AVX-512 kernel of ssim_simd_amd64.go on 256-bit vectors (8 int32 lanes),
// for CPUs without AVX-512 (Haswell to Alder Lake, Zen 1 to Zen 3). Same integer column sums,
// exact, and the same float32 operations at the end, so the same bound (vectorTolerance). What
// AVX2 lacks is replaced by instructions it has:
//   - the (x, y) 16-bit words of 8 samples come from two zero-extensions (VPMOVZXBD) of 8 bytes,
//     a shift and an or (no VPERMI2B);
//   - the word swap inside a 32-bit lane is a byte shuffle (VPSHUFB; no VPROLD);
//   - the masks of the last step come from a compare against the lane index (no KMOVD).
// Nothing in the loops may be a legacy-SSE instruction: on some CPUs (the GPU host's Xeon here)
// one inside a loop of dirty 256-bit state made the kernel 15 times slower. A shift by a
// variable count (ShiftAllRight) is such a trap: Go moves the count into an XMM register with a
// legacy MOVQ. The shuffles below take their place; TestNoLegacySSEInKernels keeps it so.
// A step is 48 samples: 6 vectors of 8 windows; vectors k and k+3 (24 samples apart) hold
// windows of the same channels lane by lane and share one division.

const ssimStep2 = 48

// avx2Kernel: the rows of windows are vRow2's, the column sums vAddRow2's. Its column sums
// are vreset's, sized for ssimStep (96), a multiple of this kernel's step: long enough.
var avx2Kernel = rowKernel{
	begin: func(s *SSIMScratch, w int) { s.vbegin(w, ssimStep2) },
	row: func(s *SSIMScratch, pa, pb, oa, ob []byte, top int) {
		if oa == nil {
			oa, ob = s.zero, s.zero
		}
		swap := archsimd.LoadInt8x32(&swapIdx)
		e2, e1 := vAddRow2(pa, pb, oa, ob, &s.vcol, swap)
		s.sse += e2
		s.sad += e1
		if top >= 0 {
			lane := archsimd.LoadInt32x8(&[8]int32{0, 1, 2, 3, 4, 5, 6, 7})
			var last [6]archsimd.Mask32x8
			var acc [6]archsimd.Float64x4
			for k := range last {
				last[k] = lane.Less(archsimd.BroadcastInt32x8(int32(s.vlast[k])))
				acc[k] = archsimd.LoadFloat64x4((*[4]float64)(s.vacc[4*k:]))
			}
			vRow2(&s.vcol, s.vsteps, &last, &acc, swap)
			for k := range acc {
				acc[k].Store((*[4]float64)(s.vacc[4*k:]))
			}
		}
		archsimd.ClearAVXUpperBits()
	},
	end: func(s *SSIMScratch) [3]float64 { return s.vend(4) },
}

// vAddRow2 is vAddRow on 32 samples a step. The words of samples 24–31 of a step come from a
// 16-byte load at 24, so a step needs 8 bytes beyond its own 32: the loop stops where that
// would pass the end of the row, and the scalar tail does the rest.
func vAddRow2(pa, pb, oa, ob []byte, col *[3][]int32, swap archsimd.Int8x32) (sse, sad uint64) {
	n := len(pa)
	pb, oa, ob = pb[:n], oa[:n], ob[:n]
	cl, c2, cxy := col[0][:n], col[1][:n], col[2][:n]
	var vsse archsimd.Int32x8
	var vsad archsimd.Uint64x4
	n49 := archsimd.BroadcastInt16x16(ssimN)
	blocks := 0
	if n >= 40 {
		blocks = (n - 8) / 32
	}
	if blocks > 0 {
		px, py := unsafe.Pointer(&pa[0]), unsafe.Pointer(&pb[0])
		pu, pv := unsafe.Pointer(&oa[0]), unsafe.Pointer(&ob[0])
		pl, p2, pxy := unsafe.Pointer(&cl[0]), unsafe.Pointer(&c2[0]), unsafe.Pointer(&cxy[0])
		for k := range blocks {
			x := archsimd.LoadUint8x32((*[32]uint8)(px))
			y := archsimd.LoadUint8x32((*[32]uint8)(py))
			vsad = vsad.Add(x.SumAbsDiff(y).AsUint64x4())
			ad := x.SubSaturated(y).Or(y.SubSaturated(x))
			lo := ad.GetLo().ExtendToUint16().AsInt16x16()
			hi := ad.GetHi().ExtendToUint16().AsInt16x16()
			vsse = vsse.Add(lo.DotProductPairs(lo)).Add(hi.DotProductPairs(hi))
			pairUpdate2(words2(px, py, 0), words2(pu, pv, 0), n49, swap, pl, p2, pxy)
			pairUpdate2(words2(px, py, 8), words2(pu, pv, 8), n49, swap, unsafe.Add(pl, 32), unsafe.Add(p2, 32), unsafe.Add(pxy, 32))
			pairUpdate2(words2(px, py, 16), words2(pu, pv, 16), n49, swap, unsafe.Add(pl, 64), unsafe.Add(p2, 64), unsafe.Add(pxy, 64))
			pairUpdate2(words2(px, py, 24), words2(pu, pv, 24), n49, swap, unsafe.Add(pl, 96), unsafe.Add(p2, 96), unsafe.Add(pxy, 96))
			if k+1 < blocks { // never past the end, not even as a pointer
				px, py, pu, pv = unsafe.Add(px, 32), unsafe.Add(py, 32), unsafe.Add(pu, 32), unsafe.Add(pv, 32)
				pl, p2, pxy = unsafe.Add(pl, 128), unsafe.Add(p2, 128), unsafe.Add(pxy, 128)
			}
		}
	}
	// A row of 3·w samples adds at most (3·w/32)·4·255² per lane: no overflow for any w below
	// 5·10⁴, and maxPixels-sized frames are far from that width.
	var t [8]int32
	vsse.Store(&t)
	var t4 [4]uint64
	vsad.Store(&t4)
	archsimd.ClearAVXUpperBits() // scalar code follows
	for _, e := range t {
		sse += uint64(e)
	}
	for _, e := range t4 {
		sad += e
	}
	e2, e1 := addRowTail(pa, pb, oa, ob, cl, c2, cxy, 32*blocks)
	return sse + e2, sad + e1
}

// words2 returns the 16-bit words (x, y) of the 8 samples at px+o and py+o.
func words2(px, py unsafe.Pointer, o uintptr) archsimd.Int16x16 {
	x := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(px, o))).ExtendLo8ToUint32()
	y := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(py, o))).ExtendLo8ToUint32()
	return x.Or(y.ShiftAllLeft(16)).AsInt16x16()
}

// swapIdx is the VPSHUFB index that swaps the two 16-bit words of every 32-bit lane.
var swapIdx = [32]int8{2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}

// swapWords swaps the two 16-bit words of every 32-bit lane; swap is swapIdx loaded.
func swapWords(v archsimd.Int32x8, swap archsimd.Int8x32) archsimd.Int16x16 {
	return v.AsUint8x32().PermuteOrZeroGrouped(swap).AsInt16x16()
}

// pairUpdate2 is pairUpdate on 8 samples.
func pairUpdate2(p, q, n49 archsimd.Int16x16, swap archsimd.Int8x32, cl, c2, cxy unsafe.Pointer) {
	d := p.Sub(q)
	s := p.Add(q)
	d49 := d.Mul(n49)
	sq := d49.DotProductPairs(s)
	xy := d49.DotProductPairs(swapWords(s.AsInt32x8(), swap))
	archsimd.LoadInt16x16((*[16]int16)(cl)).Add(d).Store((*[16]int16)(cl))
	archsimd.LoadInt32x8((*[8]int32)(c2)).Add(sq).Store((*[8]int32)(c2))
	archsimd.LoadInt32x8((*[8]int32)(cxy)).Add(xy).Store((*[8]int32)(cxy))
}

// vRow2 is vRow on 8 windows a vector: 48 windows (a step) in three iterations, each a pair of
// vectors 24 samples (8 pixels) apart sharing one division.
func vRow2(col *[3][]int32, steps int, last *[6]archsimd.Mask32x8, acc *[6]archsimd.Float64x4, swap archsimd.Int8x32) {
	n := steps*ssimStep2 + 3*(ssimWin-1)
	cl, c2, cxy := col[0][:n], col[1][:n], col[2][:n]
	pl, p2, pxy := unsafe.Pointer(&cl[0]), unsafe.Pointer(&c2[0]), unsafe.Pointer(&cxy[0])
	k1 := archsimd.BroadcastFloat32x8(c1n32)
	k2 := archsimd.BroadcastFloat32x8(c2n32)
	a0, a1, a2, a3, a4, a5 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
	lastFrom := 3 * (steps - 1)
	k := 0
	for p := range 3 * steps {
		l := hsum2(pl)
		lw := l.AsInt16x16()
		q := lw.DotProductPairs(lw)
		a := lw.DotProductPairs(swapWords(l, swap))
		b := hsum2(pxy).Sub(a)
		d := hsum2(p2).Sub(q)
		n1 := a.ConvertToFloat32().Add(k1).Mul(b.ConvertToFloat32().Add(k2))
		d1 := q.ConvertToFloat32().Add(k1).Mul(d.ConvertToFloat32().Add(k2))
		l = hsum2(unsafe.Add(pl, 4*24))
		lw = l.AsInt16x16()
		q = lw.DotProductPairs(lw)
		a = lw.DotProductPairs(swapWords(l, swap))
		b = hsum2(unsafe.Add(pxy, 4*24)).Sub(a)
		d = hsum2(unsafe.Add(p2, 4*24)).Sub(q)
		n2 := a.ConvertToFloat32().Add(k1).Mul(b.ConvertToFloat32().Add(k2))
		d2 := q.ConvertToFloat32().Add(k1).Mul(d.ConvertToFloat32().Add(k2))
		if p >= lastFrom {
			n1, n2 = n1.Masked(last[k]), n2.Masked(last[k+3])
		}
		sum := n1.MulAdd(d2, n2.Mul(d1)).Div(d1.Mul(d2))
		a0, a1, a2, a3, a4, a5 = a2, a3, a4, a5, a0.Add(sum.GetLo().ConvertToFloat64()), a1.Add(sum.GetHi().ConvertToFloat64())
		step := 4 * 8
		if k++; k == 3 {
			k, step = 0, 4*32
		}
		if p+1 < 3*steps { // never past the end, not even as a pointer
			pl, p2, pxy = unsafe.Add(pl, step), unsafe.Add(p2, step), unsafe.Add(pxy, step)
		}
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5] = a0, a1, a2, a3, a4, a5
	archsimd.ClearAVXUpperBits() // Go code follows
}

// hsum2 is hsum on 8 windows.
func hsum2(c unsafe.Pointer) archsimd.Int32x8 {
	s := archsimd.LoadInt32x8((*[8]int32)(c))
	s = s.Add(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(c, 12))))
	s = s.Add(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(c, 24))))
	s = s.Add(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(c, 36))))
	s = s.Add(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(c, 48))))
	s = s.Add(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(c, 60))))
	return s.Add(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(c, 72))))
}
