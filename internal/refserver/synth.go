package refserver

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"runtime"
	"sync"

	"github.com/diffusion-check/diffusion-check/internal/media"
)

// The synthetic "model": a scene of soft coloured blobs over a gradient, a low-frequency wave
// and a finer texture, whose parameters come from a hash of the request. It looks like an
// image (smooth structure, not noise), so SSIM against ground truth means something, and a
// video is the scene moving smoothly over time.
//
// Per-axis tables are computed in float64 and quantised to Q15 integers; the per-pixel work is
// integer arithmetic. Pixels are therefore the same on every platform, except in the unlikely
// case that a table entry falls within one ulp of a rounding boundary.

const (
	numBlobs = 5
	q        = 15 // fixed-point bits of the tables
	one      = 1 << q
)

// sceneKey is what a request's scene depends on. The size, the frame count and the step count
// (through the amount of detail) shape how it is rendered.
type sceneKey struct {
	Prompt, Negative string
	Seed             int64
	Index            int    // which of the n images of one request
	Inputs           []byte // hash of the input images, if any
}

func (k sceneKey) hash() [32]byte {
	h := sha256.New()
	var b [8]byte
	for _, s := range []string{k.Prompt, k.Negative} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	for _, v := range []int64{k.Seed, int64(k.Index)} {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	h.Write(k.Inputs)
	return [32]byte(h.Sum(nil))
}

// splitmix64 is a tiny PRNG whose sequence is fixed forever (unlike math/rand's helpers).
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform returns a float in [lo, hi).
func (s *splitmix64) uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*float64(s.next()>>11)/(1<<53)
}

type rgb [3]float64

type blob struct {
	cx, cy, sx, sy float64 // centre and spread, in fractions of the frame
	mx, my, phase  float64 // motion amplitude (fraction of the frame) and phase over the clip
	col            rgb
	alpha          float64
}

type wave struct {
	kx, ky, phase float64 // cycles per frame width/height; phase in radians
	speed         float64 // phase turns over the clip
	col           rgb     // amplitude per channel, 0–255 units
}

// scene is the parameter set of one output.
type scene struct {
	bg0, bg1 rgb
	gx, gy   float64 // gradient direction weights, gx+gy = 1
	blobs    [numBlobs]blob
	waves    [3]wave // two broad waves and one fine texture
	tones    []media.Tone
}

// newScene derives a scene from a hash. detail (0–1, from the step count) scales the waves, as
// more denoising steps give a more detailed picture. drift perturbs the scene as a state leak
// would: shifted positions and phases, rotated colours; still a plausible image, clearly
// different (SSIM against the clean output well below 0.9).
func newScene(h [32]byte, detail float64, drift bool) *scene {
	r := splitmix64(binary.LittleEndian.Uint64(h[:8]) ^ binary.LittleEndian.Uint64(h[8:16]))
	colour := func(lo, hi float64) rgb { return rgb{r.uniform(lo, hi), r.uniform(lo, hi), r.uniform(lo, hi)} }
	s := &scene{bg0: colour(20, 120), bg1: colour(100, 230)}
	s.gx = r.uniform(0, 1)
	s.gy = 1 - s.gx
	for i := range s.blobs {
		s.blobs[i] = blob{
			cx: r.uniform(0.1, 0.9), cy: r.uniform(0.1, 0.9),
			sx: r.uniform(0.08, 0.3), sy: r.uniform(0.08, 0.3),
			mx: r.uniform(-0.12, 0.12), my: r.uniform(-0.12, 0.12), phase: r.uniform(0, 2*math.Pi),
			col: colour(0, 255), alpha: r.uniform(0.55, 0.9),
		}
	}
	for i := range s.waves {
		k, amp := r.uniform(0.6, 2.2), 22.0
		if i == 2 { // fine texture
			k, amp = r.uniform(5, 9), 14.0
		}
		a := r.uniform(0, 2*math.Pi)
		s.waves[i] = wave{kx: k * math.Cos(a), ky: k * math.Sin(a), phase: r.uniform(0, 2*math.Pi),
			speed: r.uniform(-1, 1), col: rgb{amp * r.uniform(0.3, 1), amp * r.uniform(0.3, 1), amp * r.uniform(0.3, 1)}}
		for c := range s.waves[i].col {
			s.waves[i].col[c] *= detail
		}
	}
	notes := []float64{220, 246.94, 277.18, 329.63, 369.99, 440, 493.88, 554.37, 659.25, 739.99}
	for range 3 {
		s.tones = append(s.tones, media.Tone{
			FreqHz: notes[r.next()%uint64(len(notes))], Amplitude: r.uniform(0.12, 0.22),
			PhaseRad: r.uniform(0, 2*math.Pi), TremoloHz: r.uniform(0.5, 3), Pan: r.uniform(-0.6, 0.6),
		})
	}
	if drift {
		s.bg0 = rgb{s.bg0[1], s.bg0[2], s.bg0[0]}
		s.bg1 = rgb{s.bg1[2], s.bg1[0], s.bg1[1]}
		s.gx, s.gy = s.gy, s.gx
		for i := range s.blobs {
			b := &s.blobs[i]
			b.cx, b.cy = math.Mod(b.cx+0.37, 0.8)+0.1, math.Mod(b.cy+0.29, 0.8)+0.1
			b.col = rgb{b.col[2], b.col[0], b.col[1]}
		}
		for i := range s.waves {
			s.waves[i].phase += math.Pi * 0.8
			s.waves[i].kx, s.waves[i].ky = s.waves[i].ky, -s.waves[i].kx
		}
		for i := range s.tones {
			s.tones[i].FreqHz *= 1.5
		}
	}
	return s
}

// stepDetail maps a step count to the amount of fine detail in the output.
func stepDetail(steps int) float64 { return float64(steps) / float64(steps+6) }

// canvas renders frames of one scene at one size, reusing its tables between frames.
type canvas struct {
	s    *scene
	w, h int
	// base, when set, is an input image (packed RGB, w×h) blended half and half with the scene.
	base []byte

	// per-axis tables, Q15
	bx, by       [numBlobs][]int64
	wsx, wcx     [3][]int64 // sin/cos of the x part of each wave
	wsy, wcy     [3][]int64 // sin/cos of the y part (phase included)
	gradX, gradY []int64
	// blobLo, blobHi bound the columns where each blob is not negligible (this frame).
	blobLo, blobHi [numBlobs]int
	// rows holds one set of row buffers (R, G, B in Q8) per rendering goroutine.
	rows [][3][]int64
}

// parallelPixels is the frame size from which rows are rendered by several goroutines.
const parallelPixels = 1 << 18

func newCanvas(s *scene, w, h int, base []byte) *canvas {
	c := &canvas{s: s, w: w, h: h, base: base}
	alloc := func(n int) []int64 { return make([]int64, n) }
	for i := range numBlobs {
		c.bx[i], c.by[i] = alloc(w), alloc(h)
	}
	for i := range c.wsx {
		c.wsx[i], c.wcx[i], c.wsy[i], c.wcy[i] = alloc(w), alloc(w), alloc(h), alloc(h)
	}
	c.gradX, c.gradY = alloc(w), alloc(h)
	workers := 1
	if w*h >= parallelPixels {
		workers = max(1, min(runtime.GOMAXPROCS(0), h/64))
	}
	for range workers {
		c.rows = append(c.rows, [3][]int64{alloc(w), alloc(w), alloc(w)})
	}
	for x := range w {
		c.gradX[x] = fix(s.gx * coord(x, w))
	}
	for y := range h {
		c.gradY[y] = fix(s.gy * coord(y, h))
	}
	return c
}

func fix(v float64) int64 { return int64(math.Round(v * one)) }

// coord is the centre of pixel i of n in [0, 1].
func coord(i, n int) float64 { return (float64(i) + 0.5) / float64(n) }

// frame renders the scene at time t ∈ [0, 1) (the fraction of the clip) into dst, bpp bytes per
// pixel (3: packed RGB; 4: RGBA with opaque alpha).
func (c *canvas) frame(t float64, dst []byte, bpp int) {
	s, w, h := c.s, c.w, c.h
	turn := 2 * math.Pi * t
	for i, b := range s.blobs {
		cx := b.cx + b.mx*math.Sin(turn+b.phase)
		cy := b.cy + b.my*math.Cos(turn+b.phase)
		c.blobLo[i], c.blobHi[i] = w, 0
		for x := range w {
			d := (coord(x, w) - cx) / b.sx
			c.bx[i][x] = fix(math.Exp(-d * d))
			if c.bx[i][x] >= 8 {
				c.blobLo[i], c.blobHi[i] = min(c.blobLo[i], x), x+1
			}
		}
		c.blobHi[i] = max(c.blobHi[i], c.blobLo[i])
		for y := range h {
			d := (coord(y, h) - cy) / b.sy
			c.by[i][y] = fix(b.alpha * math.Exp(-d*d))
		}
	}
	for i, wv := range s.waves {
		for x := range w {
			a := 2 * math.Pi * wv.kx * coord(x, w)
			c.wsx[i][x], c.wcx[i][x] = fix(math.Sin(a)), fix(math.Cos(a))
		}
		for y := range h {
			a := 2*math.Pi*wv.ky*coord(y, h) + wv.phase + wv.speed*turn
			c.wsy[i][y], c.wcy[i][y] = fix(math.Sin(a)), fix(math.Cos(a))
		}
	}
	// Colours in Q8 (value·256).
	var bg0, dbg [3]int64
	var blobCol [numBlobs][3]int64
	var waveAmp [3][3]int64
	for ch := range 3 {
		for i := range s.blobs {
			blobCol[i][ch] = int64(math.Round(s.blobs[i].col[ch] * 256))
		}
		bg0[ch] = int64(math.Round(s.bg0[ch] * 256))
		dbg[ch] = int64(math.Round((s.bg1[ch] - s.bg0[ch]) * 256))
		for i := range s.waves {
			waveAmp[i][ch] = int64(math.Round(s.waves[i].col[ch] * 256))
		}
	}
	p := &framePlan{bg0: bg0, dbg: dbg, blobCol: blobCol, waveAmp: waveAmp, dst: dst, bpp: bpp}
	workers := len(c.rows)
	if workers == 1 {
		c.rowsInto(p, 0, h, c.rows[0])
		return
	}
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() { c.rowsInto(p, k*h/workers, (k+1)*h/workers, c.rows[k]) })
	}
	wg.Wait()
}

// framePlan is what rowsInto needs of one frame besides the canvas tables.
type framePlan struct {
	bg0, dbg [3]int64
	blobCol  [numBlobs][3]int64
	waveAmp  [3][3]int64
	dst      []byte
	bpp      int
}

// rowsInto renders rows [y0, y1) of a frame. Each row is built stage by stage in three
// channel buffers: simple loops over x with the y-dependent factors hoisted, and blobs
// skipped where they are negligible.
//
// It is left out of the race detector's instrumentation (go:norace): its goroutines write
// disjoint rows of dst and their own row buffers, and read tables frame wrote before they
// started (the WaitGroup orders them, and frame stays instrumented). Instrumented, every
// pixel cost ten times as much: one MiniMax-H3 video (1344x768, 107 frames) took 36 s
// instead of 3.7 s under go test -race.
//
//go:norace
func (c *canvas) rowsInto(p *framePlan, y0, y1 int, buf [3][]int64) {
	s, w, bpp, dst := c.s, c.w, p.bpp, p.dst
	bg0, dbg, blobCol, waveAmp := p.bg0, p.dbg, p.blobCol, p.waveAmp
	R, G, B := buf[0], buf[1], buf[2]
	for y := y0; y < y1; y++ {
		gy := c.gradY[y]
		for x, gx := range c.gradX {
			g := gx + gy // Q15
			R[x] = bg0[0] + dbg[0]*g>>q
			G[x] = bg0[1] + dbg[1]*g>>q
			B[x] = bg0[2] + dbg[2]*g>>q
		}
		for i := range numBlobs {
			by := c.by[i][y]
			if by < 8 {
				continue
			}
			cr, cg, cb := blobCol[i][0], blobCol[i][1], blobCol[i][2]
			bx := c.bx[i][c.blobLo[i]:c.blobHi[i]]
			r, g, b := R[c.blobLo[i]:c.blobHi[i]], G[c.blobLo[i]:c.blobHi[i]], B[c.blobLo[i]:c.blobHi[i]]
			for x, v := range bx {
				a := v * by >> q // Q15
				if a < 8 {
					continue
				}
				r[x] += (cr - r[x]) * a >> q
				g[x] += (cg - g[x]) * a >> q
				b[x] += (cb - b[x]) * a >> q
			}
		}
		for i := range s.waves {
			cy, sy := c.wcy[i][y], c.wsy[i][y]
			ar, ag, ab := waveAmp[i][0], waveAmp[i][1], waveAmp[i][2]
			wsx, wcx := c.wsx[i], c.wcx[i][:len(c.wsx[i])]
			for x, sx := range wsx {
				v := (sx*cy + wcx[x]*sy) >> q // sin(ax+by+φ), Q15
				R[x] += ar * v >> q
				G[x] += ag * v >> q
				B[x] += ab * v >> q
			}
		}
		row := dst[y*w*bpp : (y+1)*w*bpp]
		var base []byte
		if c.base != nil {
			base = c.base[3*y*w : 3*(y+1)*w]
		}
		for x := range w {
			r, g, b := R[x], G[x], B[x]
			if base != nil {
				r = (r + int64(base[3*x])<<8) / 2
				g = (g + int64(base[3*x+1])<<8) / 2
				b = (b + int64(base[3*x+2])<<8) / 2
			}
			o := x * bpp
			row[o] = clamp8((r + 128) >> 8)
			row[o+1] = clamp8((g + 128) >> 8)
			row[o+2] = clamp8((b + 128) >> 8)
			if bpp == 4 {
				row[o+3] = 255
			}
		}
	}
}

func clamp8(v int64) byte {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}
