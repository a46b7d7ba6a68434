//go:build goexperiment.simd && amd64

package checks

import "simd/archsimd"

// vbmiCases are the vAddRow paths this CPU can run: with VPERMI2B (where it has VBMI) and
// without.
func vbmiCases() []bool {
	if archsimd.X86.AVX512VBMI() {
		return []bool{true, false}
	}
	return []bool{false}
}

// setVBMI selects vAddRow's path; setVBMI(true) restores the CPU's default.
func setVBMI(on bool) { useVBMI = on && archsimd.X86.AVX512VBMI() }
