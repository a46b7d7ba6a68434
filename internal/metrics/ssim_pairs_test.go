package metrics

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The reference pairs: deterministic images made here, compared by scikit-image on another
// machine (testdata/ssim_reference.py), whose numbers are kept in testdata/ssim_reference.json.
// Only the numbers are committed; the images are made again by the tests.

var writePairs = flag.String("ssim.pairs", "", "write the reference image pairs as PNGs into this folder (for testdata/ssim_reference.py) and stop")

// rng is splitmix64: a tiny PRNG whose sequence is fixed forever.
type rng uint64

func (s *rng) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [-n, n].
func (s *rng) intn(n int) int { return int(s.next()%uint64(2*n+1)) - n }

func clamp8(v float64) byte { return byte(math.Max(0, math.Min(255, math.Round(v)))) }

// smooth is an image-like picture: gradients and low-frequency waves, different per channel.
func smooth(w, h int, seed float64) []byte {
	p := make([]byte, 3*w*h)
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			for c := range 3 {
				fc := float64(c)
				v := 40 + 150*fx*(1-fy) + 50*math.Sin(2*math.Pi*(fx*(1.5+fc)+fy*(0.7+seed))+fc) +
					20*math.Cos(2*math.Pi*(fx*4.3-fy*3.1+seed*fc)) + 10*math.Sin(float64(x*y)/97)
				p[3*(y*w+x)+c] = clamp8(v)
			}
		}
	}
	return p
}

func noisy(src []byte, amp int, seed uint64) []byte {
	r := rng(seed)
	out := make([]byte, len(src))
	for i, v := range src {
		out[i] = clamp8(float64(int(v) + r.intn(amp)))
	}
	return out
}

func drifted(src []byte, w, h int) []byte {
	out := make([]byte, len(src))
	for y := range h {
		for x := range w {
			for c := range 3 {
				i := 3*(y*w+x) + c
				out[i] = clamp8(float64(src[i])*0.97 + 6 + 5*math.Sin(float64(x)/9+float64(c)) + 3*math.Cos(float64(y)/5))
			}
		}
	}
	return out
}

func shifted(src []byte, w, h, dx int) []byte {
	out := make([]byte, len(src))
	for y := range h {
		for x := range w {
			sx := min(max(x-dx, 0), w-1)
			copy(out[3*(y*w+x):3*(y*w+x)+3], src[3*(y*w+sx):3*(y*w+sx)+3])
		}
	}
	return out
}

func flat(w, h int, v byte) []byte {
	p := make([]byte, 3*w*h)
	for i := range p {
		p[i] = v
	}
	return p
}

type refPair struct {
	name string
	w, h int
	a, b []byte
}

// refPairs returns the reference pairs: odd and even sizes, the smallest legal one, 720p,
// identical, drifted, noised, shifted, saturated and pure-noise content.
func refPairs() []refPair {
	var ps []refPair
	add := func(name string, w, h int, a, b []byte) { ps = append(ps, refPair{name, w, h, a, b}) }
	s := smooth(37, 23, 0.3)
	add("smooth_37x23_identical", 37, 23, s, s)
	add("smooth_37x23_noise", 37, 23, s, noisy(s, 12, 1))
	add("smooth_37x23_drift", 37, 23, s, drifted(s, 37, 23))
	m := smooth(64, 48, 0.1)
	add("smooth_64x48_shift1", 64, 48, m, shifted(m, 64, 48, 1))
	add("random_7x7", 7, 7, noisy(flat(7, 7, 128), 127, 2), noisy(flat(7, 7, 128), 127, 3))
	add("flat_black_white_9x8", 9, 8, flat(9, 8, 0), flat(9, 8, 255))
	add("random_vs_smooth_301x17", 301, 17, noisy(smooth(301, 17, 0.9), 90, 4), smooth(301, 17, 0.9))
	big := smooth(1280, 720, 0.5)
	add("smooth_1280x720_noise", 1280, 720, big, noisy(big, 6, 5))
	add("smooth_1280x720_drift", 1280, 720, big, drifted(big, 1280, 720))
	return ps
}

func rgbImage(p []byte, w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range w * h {
		copy(img.Pix[4*i:4*i+3], p[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return img
}

// TestMain writes the reference pairs when -ssim.pairs is given, instead of testing.
func TestMain(m *testing.M) {
	flag.Parse()
	if *writePairs == "" {
		os.Exit(m.Run())
	}
	if err := os.MkdirAll(*writePairs, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, p := range refPairs() {
		for side, px := range map[string][]byte{"a": p.a, "b": p.b} {
			f, err := os.Create(filepath.Join(*writePairs, p.name+"_"+side+".png"))
			if err == nil {
				err = png.Encode(f, rgbImage(px, p.w, p.h))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
	os.Exit(0)
}
