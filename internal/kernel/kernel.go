package kernel

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Level is a family of vector kernels. Higher levels use wider vectors.
type Level int

// The levels, narrowest first.
const (
	// Portable is plain Go: every CPU, every build.
	Portable Level = iota
	// AVX2 is 256-bit vectors (AVX2 and FMA: Haswell, Zen 1 and later).
	AVX2
	// AVX512 is 512-bit vectors (AVX-512 F, CD, BW, DQ and VL: Skylake-SP, Ice Lake, Zen 4 and
	// later).
	AVX512
)

var names = [...]string{Portable: "portable", AVX2: "avx2", AVX512: "avx512"}

// String is the level's name as DIFFUSION_CHECK_KERNEL spells it.
func (l Level) String() string {
	if l < 0 || int(l) >= len(names) {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return names[l]
}

// Parse reads a level's name (portable, avx2, avx512; case-insensitive).
func Parse(s string) (Level, error) {
	for l, n := range names {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Level(l), nil
		}
	}
	return Portable, fmt.Errorf("unknown kernel %q (want one of %s)", s, strings.Join(names[:], ", "))
}

// Supported lists the levels this build can run on this CPU, narrowest first; Portable is
// always there.
func Supported() []Level { return detect() }

var (
	chooseOnce sync.Once
	selected   atomic.Int32
)

// Selected is the level the kernels use: the widest supported one, unless Force chose another.
func Selected() Level {
	chooseOnce.Do(func() {
		s := detect()
		selected.Store(int32(s[len(s)-1]))
	})
	return Level(selected.Load())
}

// Force makes every later kernel call use level l. It fails, changing nothing, when this
// build or CPU cannot run l.
func Force(l Level) error {
	s := detect()
	if !slices.Contains(s, l) {
		return fmt.Errorf("kernel %s: not supported here (%s); supported: %s", l, Describe(), join(s))
	}
	chooseOnce.Do(func() {})
	selected.Store(int32(l))
	return nil
}

// Describe names the CPU's relevant features and this build's vector support, for messages
// and `diffusion-check version`.
func Describe() string { return describe() }

func join(ls []Level) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ", ")
}
