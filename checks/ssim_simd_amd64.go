//go:build goexperiment.simd && amd64

package checks

import "simd/archsimd"

// The AVX-512 kernel, built with GOEXPERIMENT=simd on amd64 and used when the CPU has AVX-512
// (else the portable kernel in ssim.go runs). It computes exactly the integer window sums of
// the portable kernel and then the same float64 expression, so it agrees with it to the last
// few bits of the float64 result.
//
// A row of a frame is 3w samples, channels interleaved. The kernel keeps, for every sample
// column, int32 sums over the last 7 rows of x, y, x²+y² and xy (the formula needs only the sum
// sxx+syy; x and y share one int32, x in the low 16 bits: a window sum of x is below 2¹⁴, and
// the packed sums and differences are exact), updated per row by adding the new row and subtracting the row 7 above, 16 samples
// per instruction. The 7-wide window of a sample is then the sum of 7 column sums 3 samples
// apart (the same channel), again 16 windows at a time, each lane of its own channel. The
// integer parts of the formula (p = sx·sy, q = sx²+sy², 49·sxy − p, 49·(sxx+syy) − q) stay below
// 3.2·10⁸ and are exact in int32; the products and the division are float64, two windows of
// the same channel (24 samples apart) per division.

func init() {
	if archsimd.X86.AVX512() {
		vectorRun = runAVX512
	}
}

// ssimUnit is how many samples one step of the window loop handles: 3 vectors of 16, so that
// lane i of each vector is always of channel i mod 3 of the vector's offset.
const ssimUnit = 48

func (s *SSIMScratch) vreset(w int) {
	mw3 := 3 * (w - 2*ssimPad)
	n := (mw3+ssimUnit-1)/ssimUnit*ssimUnit + 3*(ssimWin-1)
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

func runAVX512(s *SSIMScratch, a, b []byte, w, h int) (sums [3]float64, sse, sad uint64) {
	s.vreset(w)
	stride := 3 * w
	mw3 := 3 * (w - 2*ssimPad)
	units := (mw3 + ssimUnit - 1) / ssimUnit
	// Masks of the windows that exist in the last unit, per half vector (8 lanes).
	var last [6]archsimd.Mask64x8
	for k := range 6 {
		valid := mw3 - (units-1)*ssimUnit - 8*k
		var bits uint8
		if valid >= 8 {
			bits = 0xff
		} else if valid > 0 {
			bits = uint8(1)<<valid - 1
		}
		last[k] = archsimd.Mask64x8FromBits(bits)
	}
	var acc [3]archsimd.Float64x8
	for r := range h {
		pa := a[r*stride : r*stride+stride]
		pb := b[r*stride : r*stride+stride]
		oa, ob := s.zero, s.zero
		if r >= ssimWin {
			o := (r - ssimWin) * stride
			oa, ob = a[o:o+stride], b[o:o+stride]
		}
		e2, e1 := vAddRow(pa, pb, oa, ob, &s.vcol)
		sse += e2
		sad += e1
		if r < ssimWin-1 {
			continue
		}
		vRow(&s.vcol, units, &last, &acc)
	}
	// Lane j of acc[k] holds windows of channel (8·k' + j) mod 3, where k' is the offset (in
	// halves) of the first window of pair k: 0, 1 and 2 (see vUnit).
	for k := range acc {
		var v [8]float64
		acc[k].Store(&v)
		for j, x := range v {
			sums[(8*k+j)%3] += x
		}
	}
	archsimd.ClearAVXUpperBits()
	return sums, sse, sad
}

// vAddRow moves the column sums down one row: it adds the samples of pa, pb and subtracts those
// of oa, ob (the row 7 above, or zeros). It returns the sums of squared and absolute
// differences of pa and pb.
func vAddRow(pa, pb, oa, ob []byte, col *[3][]int32) (sse, sad uint64) {
	n := len(pa)
	pb, oa, ob = pb[:n], oa[:n], ob[:n]
	cl, c2, cxy := col[0][:n], col[1][:n], col[2][:n]
	var vsse, vsad archsimd.Int32x16
	i := 0
	for ; i+16 <= n; i += 16 {
		x := archsimd.LoadUint8x16Slice(pa[i:]).ExtendToUint32().AsInt32x16()
		y := archsimd.LoadUint8x16Slice(pb[i:]).ExtendToUint32().AsInt32x16()
		u := archsimd.LoadUint8x16Slice(oa[i:]).ExtendToUint32().AsInt32x16()
		v := archsimd.LoadUint8x16Slice(ob[i:]).ExtendToUint32().AsInt32x16()
		d := x.Sub(y)
		vsse = vsse.Add(d.Mul(d))
		vsad = vsad.Add(d.Abs())
		dx, dy := x.Sub(u), y.Sub(v)
		sq := dx.Mul(x.Add(u)).Add(dy.Mul(y.Add(v))) // x²+y² − u²−v²
		xy := x.Mul(y).Sub(u.Mul(v))
		archsimd.LoadInt32x16Slice(cl[i:]).Add(dx.Add(dy.ShiftAllLeft(16))).StoreSlice(cl[i:])
		archsimd.LoadInt32x16Slice(c2[i:]).Add(sq).StoreSlice(c2[i:])
		archsimd.LoadInt32x16Slice(cxy[i:]).Add(xy).StoreSlice(cxy[i:])
	}
	// A row of 3·w samples holds at most (3·w/16)·255² per lane: no overflow for any w below
	// 10⁵, and maxPixels-sized frames are far from that width.
	var t [16]int32
	vsse.Store(&t)
	for _, e := range t {
		sse += uint64(e)
	}
	vsad.Store(&t)
	for _, e := range t {
		sad += uint64(e)
	}
	for ; i < n; i++ {
		x, y, u, v := int32(pa[i]), int32(pb[i]), int32(oa[i]), int32(ob[i])
		d := int64(x - y)
		sse += uint64(d * d)
		m := d >> 63
		sad += uint64((d ^ m) - m)
		cl[i] += x - u + (y-v)<<16
		c2[i] += x*x + y*y - u*u - v*v
		cxy[i] += x*y - u*v
	}
	return sse, sad
}

// vRow adds the local SSIM of the windows of one row of windows into acc: 48 windows (a unit)
// per step, pairs of windows 24 samples (8 pixels) apart sharing one division; last masks the
// windows that exist in the last unit.
func vRow(col *[3][]int32, units int, last *[6]archsimd.Mask64x8, acc *[3]archsimd.Float64x8) {
	a0, a1, a2 := acc[0], acc[1], acc[2]
	cl, c2, cxy := col[0], col[1], col[2]
	for u := range units {
		i := u * ssimUnit
		// Halves at sample offsets 0,8 | 16,24 | 32,40: pairs (0,24), (8,32), (16,40).
		n0, d0, n1, d1 := win16(cl[i:], c2[i:], cxy[i:])
		n2, d2, n3, d3 := win16(cl[i+16:], c2[i+16:], cxy[i+16:])
		n4, d4, n5, d5 := win16(cl[i+32:], c2[i+32:], cxy[i+32:])
		if u == units-1 {
			n0, n1, n2 = n0.Masked(last[0]), n1.Masked(last[1]), n2.Masked(last[2])
			n3, n4, n5 = n3.Masked(last[3]), n4.Masked(last[4]), n5.Masked(last[5])
		}
		a0 = a0.Add(n0.Mul(d3).Add(n3.Mul(d0)).Div(d0.Mul(d3)))
		a1 = a1.Add(n1.Mul(d4).Add(n4.Mul(d1)).Div(d1.Mul(d4)))
		a2 = a2.Add(n2.Mul(d5).Add(n5.Mul(d2)).Div(d2.Mul(d5)))
	}
	acc[0], acc[1], acc[2] = a0, a1, a2
}

// win16 returns the numerators and denominators of the local SSIM of the 16 windows whose first
// samples are the first 16 of the column sums: lanes 0–7 and 8–15.
func win16(cl, c2, cxy []int32) (nlo, dlo, nhi, dhi archsimd.Float64x8) {
	l, s2, sxy := hsum(cl), hsum(c2), hsum(cxy)
	sx, sy := l.And(archsimd.BroadcastInt32x16(0xffff)), l.ShiftAllRight(16)
	p := sx.Mul(sy)
	q := sx.Mul(sx).Add(sy.Mul(sy))
	n49 := archsimd.BroadcastInt32x16(ssimN)
	a := p.Add(p)
	b := sxy.Mul(n49).Sub(p)
	b = b.Add(b)
	d := s2.Mul(n49).Sub(q)
	k1 := archsimd.BroadcastFloat64x8(c1n)
	k2 := archsimd.BroadcastFloat64x8(c2n)
	nlo = a.GetLo().ConvertToFloat64().Add(k1).Mul(b.GetLo().ConvertToFloat64().Add(k2))
	nhi = a.GetHi().ConvertToFloat64().Add(k1).Mul(b.GetHi().ConvertToFloat64().Add(k2))
	dlo = q.GetLo().ConvertToFloat64().Add(k1).Mul(d.GetLo().ConvertToFloat64().Add(k2))
	dhi = q.GetHi().ConvertToFloat64().Add(k1).Mul(d.GetHi().ConvertToFloat64().Add(k2))
	return
}

// hsum returns the 16 sums c[i] + c[i+3] + … + c[i+18], i = 0…15: the 7-wide windows of
// one channel.
func hsum(c []int32) archsimd.Int32x16 {
	c = c[:16+3*(ssimWin-1)]
	s := archsimd.LoadInt32x16Slice(c[0:])
	s = s.Add(archsimd.LoadInt32x16Slice(c[3:]))
	s = s.Add(archsimd.LoadInt32x16Slice(c[6:]))
	s = s.Add(archsimd.LoadInt32x16Slice(c[9:]))
	s = s.Add(archsimd.LoadInt32x16Slice(c[12:]))
	s = s.Add(archsimd.LoadInt32x16Slice(c[15:]))
	return s.Add(archsimd.LoadInt32x16Slice(c[18:]))
}
