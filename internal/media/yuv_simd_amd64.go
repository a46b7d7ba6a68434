//go:build goexperiment.simd && amd64

package media

import "simd/archsimd"

// The AVX-512 (with VBMI) yuv420p → rgb24 converter: the same 16-bit arithmetic as
// yuvRowPortable (and swscale's SSSE3 code), 64 pixels a step. Chroma terms are computed on 32
// chroma samples and doubled with VPERMW; the three byte planes are interleaved into rgb24 with
// two VPERMI2B per 64 output bytes.

func init() {
	if archsimd.X86.AVX512() && archsimd.X86.AVX512VBMI() {
		yuv420ToRGBFast = yuv420ToRGBAVX512
		yuvVector = true
	}
}

var (
	dupLo, dupHi     archsimd.Uint16x32
	rgbIdx1, rgbIdx2 [3]archsimd.Uint8x64
)

func init() {
	var lo, hi [32]uint16
	for k := range 32 {
		lo[k], hi[k] = uint16(k/2), uint16(16+k/2)
	}
	dupLo, dupHi = archsimd.LoadUint16x32(&lo), archsimd.LoadUint16x32(&hi)
	for o := range 3 {
		var i1, i2 [64]uint8
		for j := range 64 {
			p := 64*o + j
			px, ch := p/3, p%3
			switch ch {
			case 0:
				i1[j], i2[j] = uint8(px), uint8(j)
			case 1:
				i1[j], i2[j] = uint8(64+px), uint8(j)
			case 2:
				i1[j], i2[j] = 0, uint8(64+px)
			}
		}
		rgbIdx1[o], rgbIdx2[o] = archsimd.LoadUint8x64(&i1), archsimd.LoadUint8x64(&i2)
	}
}

func yuv420ToRGBAVX512(dst, src []byte, w, h int, c *yuvCoeffs) {
	cw := w / 2
	yp, up, vp := src[:w*h], src[w*h:w*h+cw*(h/2)], src[w*h+cw*(h/2):w*h+2*cw*(h/2)]
	for row := range h {
		yuvRowAVX512(dst[3*w*row:][:3*w], yp[row*w:][:w], up[row/2*cw:][:cw], vp[row/2*cw:][:cw], c)
	}
}

func yuvRowAVX512(dst, y, u, v []byte, c *yuvCoeffs) {
	cy, cvr, cub := archsimd.BroadcastInt16x32(c.y), archsimd.BroadcastInt16x32(c.vr), archsimd.BroadcastInt16x32(c.ub)
	cug, cvg := archsimd.BroadcastInt16x32(c.ug), archsimd.BroadcastInt16x32(c.vg)
	yoff, coff := archsimd.BroadcastInt16x32(c.yOff), archsimd.BroadcastInt16x32(1024)
	var zero archsimd.Int16x32
	var z8 archsimd.Uint8x64
	pack := func(lo, hi archsimd.Int16x32) archsimd.Uint8x64 {
		return z8.SetLo(lo.Max(zero).AsUint16x32().SaturateToUint8()).SetHi(hi.Max(zero).AsUint16x32().SaturateToUint8())
	}
	luma := func(b []byte) archsimd.Int16x32 {
		return archsimd.LoadUint8x32Slice(b).ExtendToUint16().AsInt16x32().ShiftAllLeft(3).Sub(yoff).MulHigh(cy)
	}
	n := len(y) / 64 * 64
	for i := 0; i < n; i += 64 {
		uu := archsimd.LoadUint8x32Slice(u[i/2:]).ExtendToUint16().AsInt16x32().ShiftAllLeft(3).Sub(coff)
		vv := archsimd.LoadUint8x32Slice(v[i/2:]).ExtendToUint16().AsInt16x32().ShiftAllLeft(3).Sub(coff)
		r, b := vv.MulHigh(cvr), uu.MulHigh(cub)
		g := uu.MulHigh(cug).AddSaturated(vv.MulHigh(cvg))
		y0, y1 := luma(y[i:]), luma(y[i+32:])
		R := pack(y0.AddSaturated(r.Permute(dupLo)), y1.AddSaturated(r.Permute(dupHi)))
		G := pack(y0.AddSaturated(g.Permute(dupLo)), y1.AddSaturated(g.Permute(dupHi)))
		B := pack(y0.AddSaturated(b.Permute(dupLo)), y1.AddSaturated(b.Permute(dupHi)))
		d := dst[3*i:][:192]
		for o := range 3 {
			R.ConcatPermute(G, rgbIdx1[o]).ConcatPermute(B, rgbIdx2[o]).StoreSlice(d[64*o:])
		}
	}
	if n < len(y) {
		yuvRowPortable(dst[3*n:], y[n:], u[n/2:], v[n/2:], c)
	}
}
