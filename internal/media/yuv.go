package media

import (
	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// yuv420p → rgb24 in Go, bit for bit as ffmpeg's swscale does it by default.
//
// With its default flags, swscale converts yuv420p to rgb24 of the same size with its
// "unscaled" converter (ff_yuv2rgb_get_func_ptr; chosen when SWS_ACCURATE_RND is off and the
// height is even), which on x86 is the SSSE3/MMX code of libswscale/x86/yuv_2_rgb.asm: per
// pixel, in 16-bit lanes,
//
//	Y' = y<<3 − yOffset, U' = u<<3 − 1024, V' = v<<3 − 1024
//	R = clip(Y'·cy>>16 + V'·crv>>16), B = clip(Y'·cy>>16 + U'·cbu>>16)
//	G = clip(Y'·cy>>16 + (U'·cgu>>16 + V'·cgv>>16))
//
// (x·c>>16 is pmulhw: the high half of the signed product), each chroma sample serving a 2×2
// block of luma. The coefficients come from ff_yuv2rgb_c_init_tables for the stream's colour
// matrix at limited range. Moving yuv420p (1.5 bytes a pixel) through the pipe instead of rgb24
// (3) and converting here saves about a third of the decoders' CPU (docs/performance.md).
//
// Only what was verified against ffmpeg takes this path (yuvEligible): yuv420p, limited range,
// BT.601 or BT.709 matrix (unspecified means BT.601, as in swscale), width a multiple of 16,
// even height. And each set of constants is proven on real frames before it is trusted: a
// FrameReader that reads a whole stream has ffmpeg write its own rgb24 of frame 0 beside the
// yuv420p frames and compares it with the conversion here at the end of the stream; on any
// difference (another ffmpeg version, another CPU) the stream ends with ErrYUVDiffers and every
// later decode of the process takes ffmpeg's rgb24 (frames.go).

// yuvCoeffs are the 16-bit constants of the conversion.
type yuvCoeffs struct {
	y, vr, ub, ug, vg, yOff int16
}

// invTables are swscale's ff_yuv2rgb_coeffs rows {crv, cbu, cgu, cgv} for the matrices used here.
var (
	invBT601 = [4]int64{104597, 132201, 25675, 53279}
	invBT709 = [4]int64{117489, 138438, 13975, 34925}
)

// roundToInt16 is swscale's: rounds f/2¹⁶ to nearest and saturates.
func roundToInt16(f int64) int16 {
	r := (f + 1<<15) >> 16
	switch {
	case r < -0x7fff:
		return -0x8000
	case r > 0x7fff:
		return 0x7fff
	}
	return int16(r)
}

// limitedRangeCoeffs computes ff_yuv2rgb_c_init_tables's MMX/SSE constants for limited-range
// input, full-range rgb output, default brightness, contrast and saturation.
func limitedRangeCoeffs(inv [4]int64) yuvCoeffs {
	crv, cbu, cgu, cgv := inv[0], inv[1], -inv[2], -inv[3]
	const contrast, saturation = 1 << 16, 1 << 16
	cy := int64(1<<16) * 255 / 219
	oy := int64(16 << 16)
	cy = cy * contrast >> 16
	crv = crv * contrast * saturation >> 32
	cbu = cbu * contrast * saturation >> 32
	cgu = cgu * contrast * saturation >> 32
	cgv = cgv * contrast * saturation >> 32
	return yuvCoeffs{
		y: roundToInt16(cy << 13), vr: roundToInt16(crv << 13), ub: roundToInt16(cbu << 13),
		ug: roundToInt16(cgu << 13), vg: roundToInt16(cgv << 13), yOff: roundToInt16(oy << 3),
	}
}

// yuvEligible says whether a stream's frames may be converted here, and with which constants.
// The strings are ffprobe's pix_fmt, color_space and color_range.
func yuvEligible(pixFmt, space, rng string, w, h int) (yuvCoeffs, bool) {
	if pixFmt != "yuv420p" || w%16 != 0 || h%2 != 0 || (rng != "" && rng != "unknown" && rng != "tv") {
		return yuvCoeffs{}, false
	}
	switch space {
	case "", "unknown", "bt470bg", "smpte170m":
		return limitedRangeCoeffs(invBT601), true
	case "bt709":
		return limitedRangeCoeffs(invBT709), true
	}
	return yuvCoeffs{}, false
}

// mulhi is pmulhw.
func mulhi(a, b int16) int32 { return int32(a) * int32(b) >> 16 }

func clip8(v int32) byte { return byte(min(max(v, 0), 255)) }

// yuvRowFunc converts one row of pixels: len(y) luma samples and their len(y)/2 chroma
// samples into dst, 3·len(y) bytes of rgb24.
type yuvRowFunc = func(dst, y, u, v []byte, c *yuvCoeffs)

// yuvRow converts row r of the yuv420p frame src (planes back to back, w×h, w/2×h/2, w/2×h/2)
// into dst (3·w bytes) with conv.
func yuvRow(dst, src []byte, w, h, r int, c *yuvCoeffs, conv yuvRowFunc) {
	cw, ch := w/2, h/2
	conv(dst[:3*w], src[r*w:][:w], src[w*h+r/2*cw:][:cw], src[w*h+cw*ch+r/2*cw:][:cw], c)
}

// yuv420ToRGB converts one yuv420p frame to packed rgb24 in dst (3·w·h bytes), row by row
// with conv.
func yuv420ToRGB(dst, src []byte, w, h int, c *yuvCoeffs, conv yuvRowFunc) {
	for r := range h {
		yuvRow(dst[3*w*r:], src, w, h, r, c, conv)
	}
}

// yuvRowPortable converts one row of len(y) pixels.
func yuvRowPortable(dst, y, u, v []byte, c *yuvCoeffs) {
	for i := range len(u) {
		uu, vv := int16(u[i])<<3-1024, int16(v[i])<<3-1024
		r, b := mulhi(vv, c.vr), mulhi(uu, c.ub)
		g := mulhi(uu, c.ug) + mulhi(vv, c.vg)
		for k := range 2 {
			yc := mulhi(int16(y[2*i+k])<<3-c.yOff, c.y)
			d := dst[6*i+3*k:][:3]
			d[0], d[1], d[2] = clip8(yc+r), clip8(yc+g), clip8(yc+b)
		}
	}
}

// yuvConverter is the row converter of level l (a vector one where this build and CPU have
// it, else the portable one), and whether it is a vector one.
func yuvConverter(l kernel.Level) (conv yuvRowFunc, vector bool) {
	if v := vectorYUV(l); v != nil {
		return v, true
	}
	return yuvRowPortable, false
}

// yuv420ToRGBFast converts with the converter of the kernel level selected for this process.
func yuv420ToRGBFast(dst, src []byte, w, h int, c *yuvCoeffs) {
	conv, _ := yuvConverter(kernel.Selected())
	yuv420ToRGB(dst, src, w, h, c, conv)
}

// Rows returns the rgb24 rows of raw, a frame of this format, one at a time as a consumer
// that walks a frame top to bottom asks for them (metrics.Rows): row r converted into slot
// r mod n of ring (room for n = len(ring)/(3·w) rows), bit for bit what RGB gives, so that no
// whole rgb24 frame is ever written; for frames that travel as rgb24, row r of raw itself. A
// row stays as returned until n more rows were asked for. Past the frame's rows, and for a raw
// frame of another size or a ring of no row, it returns nil.
func (f RawFormat) Rows(raw, ring []byte) func(r int) []byte {
	stride := 3 * f.w
	switch {
	case len(raw) != f.Size() || stride == 0 || f.yuv && len(ring) < stride:
		return func(int) []byte { return nil }
	case !f.yuv:
		return func(r int) []byte {
			if r < 0 || r >= f.h {
				return nil
			}
			return raw[r*stride : (r+1)*stride]
		}
	}
	slots := len(ring) / stride
	conv, _ := yuvConverter(kernel.Selected())
	return func(r int) []byte {
		if r < 0 || r >= f.h {
			return nil
		}
		dst := ring[r%slots*stride : (r%slots+1)*stride]
		yuvRow(dst, raw, f.w, f.h, r, &f.coef, conv)
		return dst
	}
}

// yuvVector says whether the selected converter is a vector one; only then is moving yuv420p
// through the pipe worth it (the portable loop costs more CPU than ffmpeg's SSSE3 conversion
// saves).
func yuvVector() bool {
	_, v := yuvConverter(kernel.Selected())
	return v
}
