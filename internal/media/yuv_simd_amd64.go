//go:build goexperiment.simd && amd64

package media

import (
	"simd/archsimd"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// The vector yuv420p → rgb24 converters: the same 16-bit arithmetic as yuvRowPortable (and
// swscale's SSSE3 code). Nothing here runs before package kernel has asked the CPU: no init, no
// package-level vectors; the index tables are plain arrays, loaded into vectors by each row.

// vectorYUV returns the vector converter of level l, nil for Portable. The AVX-512 one needs
// AVX512-VBMI as well (VPERMI2B); an AVX-512 CPU without it (Skylake-SP) gets the AVX2 one.
func vectorYUV(l kernel.Level) yuvRowFunc {
	switch {
	case l == kernel.AVX512 && archsimd.X86.AVX512VBMI():
		return yuvRowAVX512
	case l >= kernel.AVX2:
		return yuvRowAVX2
	}
	return nil
}

// The AVX-512 (with VBMI) converter, 64 pixels a step. Chroma terms are computed on 32 chroma
// samples and doubled with VPERMW; the three byte planes are interleaved into rgb24 with two
// VPERMI2B per 64 output bytes.

// avx512Tables are its permutation indices: dupLo, dupHi double chroma samples 0–15 and 16–31;
// rgbIdx1[o], rgbIdx2[o] make output bytes 64o … 64o+63 out of R‖G, then (R‖G)‖B.
var avx512Tables = func() (t struct {
	dupLo, dupHi     [32]uint16
	rgbIdx1, rgbIdx2 [3][64]uint8
}) {
	for k := range 32 {
		t.dupLo[k], t.dupHi[k] = uint16(k/2), uint16(16+k/2)
	}
	for o := range 3 {
		for j := range 64 {
			p := 64*o + j
			px, ch := p/3, p%3
			switch ch {
			case 0:
				t.rgbIdx1[o][j], t.rgbIdx2[o][j] = uint8(px), uint8(j)
			case 1:
				t.rgbIdx1[o][j], t.rgbIdx2[o][j] = uint8(64+px), uint8(j)
			case 2:
				t.rgbIdx1[o][j], t.rgbIdx2[o][j] = 0, uint8(64+px)
			}
		}
	}
	return t
}()

func yuvRowAVX512(dst, y, u, v []byte, c *yuvCoeffs) {
	t := &avx512Tables
	dupLo, dupHi := archsimd.LoadUint16x32(&t.dupLo), archsimd.LoadUint16x32(&t.dupHi)
	var rgbIdx1, rgbIdx2 [3]archsimd.Uint8x64
	for o := range 3 {
		rgbIdx1[o], rgbIdx2[o] = archsimd.LoadUint8x64(&t.rgbIdx1[o]), archsimd.LoadUint8x64(&t.rgbIdx2[o])
	}
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
	archsimd.ClearAVXUpperBits()
}

// The AVX2 converter, 32 pixels (16 chroma samples) a step. AVX2 has no cross-lane word
// permute and no unsigned word-to-byte narrowing, so instead of doubling the chroma terms it
// splits the luma into even and odd pixels (each then pairs with chroma sample k in lane k),
// clamps in 16 bits, and packs two output bytes into each word: A = (R, G) of pixel 2k,
// B = (B of 2k, R of 2k+1), C = (G, B) of pixel 2k+1. rgb24 is then the words A0 B0 C0 A1 B1 C1
// …: each 128-bit lane makes 48 bytes with nine VPSHUFB (three per 16-byte output, zeroing what
// another source fills) and ORs, and three VPERM2I128 put the lanes' halves in order.

// avx2Shuf[j][s] is the VPSHUFB index that moves the words of source s (A, B, C) to their places
// in output block j (16 bytes) of a lane; -128 makes a zero byte.
var avx2Shuf = func() (t [3][3][32]int8) {
	for j := range 3 {
		for s := range 3 {
			for m := range 8 { // output word m of block j is word 8j+m of the lane's 24
				wd := 8*j + m
				b := int8(-128)
				if wd%3 == s {
					b = int8(2 * (wd / 3))
				}
				for lane := range 2 {
					t[j][s][16*lane+2*m] = b
					t[j][s][16*lane+2*m+1] = b + 1
					if b < 0 {
						t[j][s][16*lane+2*m+1] = -128
					}
				}
			}
		}
	}
	return t
}()

// oddIdx is the VPSHUFB index that moves byte 2k+1 of a lane to word k (the odd pixels' luma):
// a shuffle, not a shift by a variable count, which Go would feed with a legacy-SSE MOVQ (see
// the SSIM kernel's note on legacy SSE in vector loops).
var oddIdx = [32]int8{
	1, -128, 3, -128, 5, -128, 7, -128, 9, -128, 11, -128, 13, -128, 15, -128, // low 128-bit lane
	1, -128, 3, -128, 5, -128, 7, -128, 9, -128, 11, -128, 13, -128, 15, -128, // high lane
}

func yuvRowAVX2(dst, y, u, v []byte, c *yuvCoeffs) {
	odd := archsimd.LoadInt8x32(&oddIdx)
	var sh [3][3]archsimd.Int8x32
	for j := range 3 {
		for s := range 3 {
			sh[j][s] = archsimd.LoadInt8x32(&avx2Shuf[j][s])
		}
	}
	cy, cvr, cub := archsimd.BroadcastInt16x16(c.y), archsimd.BroadcastInt16x16(c.vr), archsimd.BroadcastInt16x16(c.ub)
	cug, cvg := archsimd.BroadcastInt16x16(c.ug), archsimd.BroadcastInt16x16(c.vg)
	yoff, coff := archsimd.BroadcastInt16x16(c.yOff), archsimd.BroadcastInt16x16(1024)
	c255, low := archsimd.BroadcastInt16x16(255), archsimd.BroadcastUint16x16(0x00ff)
	var zero archsimd.Int16x16
	clamp := func(x archsimd.Int16x16) archsimd.Int16x16 { return x.Max(zero).Min(c255) }
	block := func(j int, a, b, c archsimd.Uint8x32) archsimd.Uint8x32 {
		return a.PermuteOrZeroGrouped(sh[j][0]).Or(b.PermuteOrZeroGrouped(sh[j][1])).Or(c.PermuteOrZeroGrouped(sh[j][2]))
	}
	n := len(y) / 32 * 32
	for i := 0; i < n; i += 32 {
		uu := archsimd.LoadUint8x16Slice(u[i/2:]).ExtendToUint16().AsInt16x16().ShiftAllLeft(3).Sub(coff)
		vv := archsimd.LoadUint8x16Slice(v[i/2:]).ExtendToUint16().AsInt16x16().ShiftAllLeft(3).Sub(coff)
		r, b := vv.MulHigh(cvr), uu.MulHigh(cub)
		g := uu.MulHigh(cug).AddSaturated(vv.MulHigh(cvg))
		yb := archsimd.LoadUint8x32Slice(y[i:])
		ye := yb.AsUint16x16().And(low).AsInt16x16().ShiftAllLeft(3).Sub(yoff).MulHigh(cy)
		yo := yb.PermuteOrZeroGrouped(odd).AsInt16x16().ShiftAllLeft(3).Sub(yoff).MulHigh(cy)
		wa := clamp(ye.AddSaturated(r)).Or(clamp(ye.AddSaturated(g)).ShiftAllLeft(8)).AsUint8x32()
		wb := clamp(ye.AddSaturated(b)).Or(clamp(yo.AddSaturated(r)).ShiftAllLeft(8)).AsUint8x32()
		wc := clamp(yo.AddSaturated(g)).Or(clamp(yo.AddSaturated(b)).ShiftAllLeft(8)).AsUint8x32()
		o0, o1, o2 := block(0, wa, wb, wc), block(1, wa, wb, wc), block(2, wa, wb, wc)
		// o_j holds output block j of the lane's 48 bytes: bytes 16j… in its low half and
		// 48+16j… in its high half.
		d := dst[3*i:][:96]
		o0.Select128FromPair(0, 2, o1).StoreSlice(d)
		o2.Select128FromPair(0, 3, o0).StoreSlice(d[32:])
		o1.Select128FromPair(1, 3, o2).StoreSlice(d[64:])
	}
	archsimd.ClearAVXUpperBits() // scalar code follows
	if n < len(y) {
		yuvRowPortable(dst[3*n:], y[n:], u[n/2:], v[n/2:], c)
	}
}
