//go:build goexperiment.simd && amd64

package metrics

import (
	"simd/archsimd"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
)

// vbmiCases are the vAddRow paths the kernel of level l has on this CPU: for AVX-512 with
// VPERMI2B (where the CPU has VBMI) and without; one path for the others.
func vbmiCases(l kernel.Level) []bool {
	if l == kernel.AVX512 && archsimd.X86.AVX512VBMI() {
		return []bool{true, false}
	}
	return []bool{false}
}
