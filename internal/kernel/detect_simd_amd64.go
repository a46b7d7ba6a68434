//go:build goexperiment.simd && amd64

package kernel

import (
	"strings"

	"simd/archsimd"
)

// detect asks the CPU (through the runtime's feature flags, which GODEBUG=cpu.*=off clears).
// AVX512 requires AVX2 too: its kernels mix in 256-bit instructions.
func detect() []Level {
	l := []Level{Portable}
	if archsimd.X86.AVX2() && archsimd.X86.FMA() {
		l = append(l, AVX2)
		if archsimd.X86.AVX512() {
			l = append(l, AVX512)
		}
	}
	return l
}

func describe() string {
	var f []string
	for _, x := range []struct {
		name string
		has  bool
	}{
		{"avx2", archsimd.X86.AVX2()}, {"fma", archsimd.X86.FMA()},
		{"avx512", archsimd.X86.AVX512()}, {"avx512vbmi", archsimd.X86.AVX512VBMI()},
	} {
		if x.has {
			f = append(f, x.name)
		}
	}
	if len(f) == 0 {
		return "amd64 CPU without AVX2"
	}
	return "amd64 CPU with " + strings.Join(f, ", ")
}
