package metrics

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// naiveSSIM follows scikit-image's float64 formulas literally, window by window: the independent
// implementation that the integer kernel is checked against on many random inputs.
func naiveSSIM(a, b []byte, w, h int) (mean float64, ch [3]float64) {
	const n = 49.0
	covNorm := n / (n - 1)
	for c := range 3 {
		var sum float64
		for y0 := 0; y0+7 <= h; y0++ {
			for x0 := 0; x0+7 <= w; x0++ {
				var ux, uy, uxx, uyy, uxy float64
				for y := y0; y < y0+7; y++ {
					for x := x0; x < x0+7; x++ {
						X, Y := float64(a[3*(y*w+x)+c]), float64(b[3*(y*w+x)+c])
						ux += X / n
						uy += Y / n
						uxx += X * X / n
						uyy += Y * Y / n
						uxy += X * Y / n
					}
				}
				vx := covNorm * (uxx - ux*ux)
				vy := covNorm * (uyy - uy*uy)
				vxy := covNorm * (uxy - ux*uy)
				a1, a2 := 2*ux*uy+ssimC1, 2*vxy+ssimC2
				b1, b2 := ux*ux+uy*uy+ssimC1, vx+vy+ssimC2
				sum += a1 * a2 / (b1 * b2)
			}
		}
		ch[c] = sum / float64((w-6)*(h-6))
	}
	return (ch[0] + ch[1] + ch[2]) / 3, ch
}

func TestSSIMMatchesNaive(t *testing.T) {
	r := rng(42)
	var s, p SSIMScratch // reused across sizes on purpose
	for i := range 40 {
		w, h := 7+int(r.next()%40), 7+int(r.next()%30)
		var a, b []byte
		switch i % 4 {
		case 0: // unrelated noise
			a, b = noisy(flat(w, h, 128), 127, r.next()), noisy(flat(w, h, 128), 127, r.next())
		case 1: // smooth vs noised
			a = smooth(w, h, float64(i)/7)
			b = noisy(a, 1+int(r.next()%40), r.next())
		case 2: // saturated extremes
			a, b = noisy(flat(w, h, 250), 10, r.next()), noisy(flat(w, h, 5), 10, r.next())
		case 3:
			a = smooth(w, h, 0.2)
			b = drifted(a, w, h)
		}
		want, wantCh := naiveSSIM(a, b, w, h)
		// The portable kernel within 1e-9; every vector kernel this CPU runs (its float32 part)
		// within vectorTolerance more.
		sums, _, _ := p.frame(&portableKernel, a, b, w, h)
		windows := float64((w - 2*ssimPad) * (h - 2*ssimPad))
		if ps := (sums[0] + sums[1] + sums[2]) / 3 / windows; math.Abs(ps-want) > 1e-9 {
			t.Errorf("%dx%d case %d: portable SSIM %.12f, naive %.12f", w, h, i%4, ps, want)
		}
		for c := range 3 {
			if math.Abs(sums[c]/windows-wantCh[c]) > 1e-9 {
				t.Errorf("%dx%d case %d channel %d: portable SSIM %.12f, naive %.12f", w, h, i%4, c, sums[c]/windows, wantCh[c])
			}
		}
		var got FrameMetrics
		for _, l := range kernel.Supported() {
			tol := 1e-9
			if l != kernel.Portable {
				tol += vectorTolerance
			}
			got = s.metrics(l, a, b, w, h)
			if math.Abs(got.SSIM-want) > tol {
				t.Errorf("%dx%d case %d, %s kernel: SSIM %.12f, naive %.12f", w, h, i%4, l, got.SSIM, want)
			}
			for c := range 3 {
				if math.Abs(got.SSIMChannels[c]-wantCh[c]) > tol {
					t.Errorf("%dx%d case %d channel %d, %s kernel: SSIM %.12f, naive %.12f", w, h, i%4, c, l, got.SSIMChannels[c], wantCh[c])
				}
			}
		}
		got = s.Metrics(a, b, w, h)
		if p := PSNR(a, b); p != got.PSNR && !(math.IsInf(p, 1) && math.IsInf(got.PSNR, 1)) {
			t.Errorf("%dx%d: PSNR %v in Metrics, %v alone", w, h, got.PSNR, p)
		}
		if d := MeanAbsDiff(a, b); d != got.MeanAbsDiff {
			t.Errorf("%dx%d: MeanAbsDiff %v in Metrics, %v alone", w, h, got.MeanAbsDiff, d)
		}
		if f := SSIM(a, b, w, h); f != got.SSIM {
			t.Errorf("%dx%d: SSIM %v with a fresh scratch, %v with a reused one", w, h, f, got.SSIM)
		}
	}
}

func TestSSIMMap(t *testing.T) {
	w, h := 41, 29
	a := smooth(w, h, 0.4)
	b := noisy(a, 30, 9)
	m, mw, mh := SSIMMap(a, b, w, h)
	if mw != w-6 || mh != h-6 || len(m) != mw*mh {
		t.Fatalf("map %dx%d of %d values, want %dx%d", mw, mh, len(m), w-6, h-6)
	}
	var sum float64
	for _, v := range m {
		if v < -1 || v > 1 {
			t.Fatalf("local SSIM %v out of [-1, 1]", v)
		}
		sum += v
	}
	tol := 1e-12 // the map comes from the portable kernel, SSIM from the one this CPU selects
	if kernel.Selected() != kernel.Portable {
		tol += vectorTolerance
	}
	if mean, want := sum/float64(len(m)), SSIM(a, b, w, h); math.Abs(mean-want) > tol {
		t.Errorf("map mean %.15f, SSIM %.15f", mean, want)
	}
	// A disturbance in one corner lowers the map there and nowhere far from it.
	c := append([]byte(nil), a...)
	for y := range 5 {
		for x := range 5 {
			for k := range 3 {
				c[3*(y*w+x)+k] ^= 0x80
			}
		}
	}
	m, _, _ = SSIMMap(a, c, w, h)
	if m[0] > 0.9 || m[len(m)-1] != 1 {
		t.Errorf("corner disturbance: map starts %v and ends %v, want low and 1", m[0], m[len(m)-1])
	}
}

func TestMetricsInvalid(t *testing.T) {
	ok := make([]byte, 3*8*8)
	for _, tc := range []struct {
		name string
		a, b []byte
		w, h int
	}{
		{"too narrow", make([]byte, 3*6*8), make([]byte, 3*6*8), 6, 8},
		{"too short", make([]byte, 3*8*6), make([]byte, 3*8*6), 8, 6},
		{"lengths differ", ok, ok[:len(ok)-3], 8, 8},
		{"wrong size", ok, ok, 8, 9},
		{"empty", nil, nil, 0, 0},
		{"negative", ok, ok, -8, -8},
	} {
		if v := SSIM(tc.a, tc.b, tc.w, tc.h); !math.IsNaN(v) {
			t.Errorf("%s: SSIM %v, want NaN", tc.name, v)
		}
		if m, _, _ := SSIMMap(tc.a, tc.b, tc.w, tc.h); m != nil {
			t.Errorf("%s: SSIMMap returned a map", tc.name)
		}
	}
	if v := PSNR(ok, ok[:3]); !math.IsNaN(v) {
		t.Errorf("PSNR of unequal lengths: %v", v)
	}
	if v := MeanAbsDiff(nil, nil); !math.IsNaN(v) {
		t.Errorf("MeanAbsDiff of nothing: %v", v)
	}
	if v := PSNR(ok, ok); !math.IsInf(v, 1) {
		t.Errorf("PSNR of identical buffers: %v, want +Inf", v)
	}
}

// ringRows gives a's rows of width w as a converter does: each copied into slot r mod slots of
// a ring, so that a row's memory is reused slots rows later.
func ringRows(a []byte, w, slots int) Rows {
	ring := make([]byte, slots*3*w)
	return func(r int) []byte {
		src := FrameRows(a, w)(r)
		if src == nil {
			return nil
		}
		dst := ring[r%slots*3*w : (r%slots+1)*3*w]
		copy(dst, src)
		return dst
	}
}

// TestEachMatchesMetrics: Each, walking several outputs against one ground truth a row at a
// time, gives every output bit for bit what Metrics gives it, with every kernel this build and
// CPU run, whether the rows are whole frames' or come through a ring of RowsHeld rows (a ring
// of one row fewer gives other numbers: the kernel does need them all held). An output whose
// rows are short gets NaN without touching the others; a ground truth's short row, or a frame
// below 7×7, makes them all NaN.
func TestEachMatchesMetrics(t *testing.T) {
	r := rng(11)
	const w, h = 37, 23
	gt := smooth(w, h, 0.3)
	outs := [][]byte{noisy(gt, 9, r.next()), drifted(gt, w, h), noisy(flat(w, h, 200), 40, r.next())}
	same := func(a, b FrameMetrics) bool {
		return math.Float64bits(a.SSIM) == math.Float64bits(b.SSIM) && a.SSIMChannels == b.SSIMChannels &&
			math.Float64bits(a.PSNR) == math.Float64bits(b.PSNR) && a.MeanAbsDiff == b.MeanAbsDiff
	}
	var e EachScratch
	for _, l := range kernel.Supported() {
		var s SSIMScratch
		want := make([]FrameMetrics, len(outs))
		for i, o := range outs {
			want[i] = s.metrics(l, o, gt, w, h)
		}
		for _, slots := range []int{h, RowsHeld, RowsHeld - 1} {
			rows := make([]Rows, len(outs))
			for i, o := range outs {
				rows[i] = ringRows(o, w, slots)
			}
			got := e.each(l, rows, ringRows(gt, w, slots), w, h)
			for i := range outs {
				if same(got[i], want[i]) != (slots >= RowsHeld) {
					t.Errorf("%s, ring of %d rows, output %d: Each %+v, Metrics %+v", l, slots, i, got[i], want[i])
				}
			}
		}
		short := func(r int) []byte { return FrameRows(outs[1], w)(r)[:3*w-min(r/9, 1)] } // short from row 9
		got := e.each(l, []Rows{FrameRows(outs[0], w), short, FrameRows(outs[2], w)}, FrameRows(gt, w), w, h)
		if !same(got[0], want[0]) || !math.IsNaN(got[1].SSIM) || !math.IsNaN(got[1].PSNR) || !same(got[2], want[2]) {
			t.Errorf("%s: with output 1's rows short from row 9: %+v", l, got)
		}
		gtShort := func(r int) []byte { return FrameRows(gt, w)(r)[:3*w-min(r/9, 1)] }
		for _, m := range e.each(l, []Rows{FrameRows(outs[0], w)}, gtShort, w, h) {
			if !math.IsNaN(m.SSIM) || !math.IsNaN(m.MeanAbsDiff) {
				t.Errorf("%s: with the ground truth's rows short from row 9: %+v", l, m)
			}
		}
		for _, m := range e.each(l, []Rows{FrameRows(outs[0][:3*6*6], 6)}, FrameRows(gt[:3*6*6], 6), 6, 6) {
			if !math.IsNaN(m.SSIM) {
				t.Errorf("%s: 6×6 frames: %+v", l, m)
			}
		}
	}
}

// reference is testdata/ssim_reference.json: scikit-image's numbers for refPairs.
type reference struct {
	How, Date, Python, Numpy, Skimage string
	Pairs                             map[string]struct {
		Width, Height int
		SSIM          float64    `json:"ssim"`
		SSIMChannels  [3]float64 `json:"ssim_channels"`
		PSNR          *float64   `json:"psnr"`
		MeanAbsDiff   float64    `json:"mean_abs_diff"`
	}
}

func TestSSIMMatchesScikitImage(t *testing.T) {
	data, err := os.ReadFile("testdata/ssim_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	pairs := refPairs()
	if len(ref.Pairs) != len(pairs) {
		t.Errorf("reference has %d pairs, refPairs makes %d: run testdata/ssim_reference.py again", len(ref.Pairs), len(pairs))
	}
	var s SSIMScratch
	for _, l := range kernel.Supported() {
		for _, p := range pairs {
			checkScikitPair(t, &s, l, p, ref)
		}
	}
}

// checkScikitPair compares one reference pair, measured with the kernel of level l, with
// scikit-image's numbers.
func checkScikitPair(t *testing.T, s *SSIMScratch, l kernel.Level, p refPair, ref reference) {
	t.Helper()
	{
		want, ok := ref.Pairs[p.name]
		if !ok {
			t.Errorf("%s: no reference values", p.name)
			return
		}
		if want.Width != p.w || want.Height != p.h {
			t.Errorf("%s: reference is %dx%d, pair is %dx%d", p.name, want.Width, want.Height, p.w, p.h)
			return
		}
		got := s.metrics(l, p.a, p.b, p.w, p.h)
		near := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-6 || math.IsNaN(got) {
				t.Errorf("%s, %s kernel: %s %.10f, scikit-image %.10f (diff %.2g)", p.name, l, what, got, want, got-want)
			}
		}
		near("SSIM", got.SSIM, want.SSIM)
		for c := range 3 {
			near("SSIM channel "+string("RGB"[c]), got.SSIMChannels[c], want.SSIMChannels[c])
		}
		if want.PSNR == nil {
			if !math.IsInf(got.PSNR, 1) {
				t.Errorf("%s: PSNR %v, scikit-image +Inf", p.name, got.PSNR)
			}
		} else {
			near("PSNR", got.PSNR, *want.PSNR)
		}
		near("mean abs diff", got.MeanAbsDiff, want.MeanAbsDiff)
	}
}
