//go:build goexperiment.simd && amd64

package main

import "simd/archsimd"

// ssimKernel mirrors the choice checks/ssim_simd_amd64.go makes today: the AVX-512 kernel
// where the CPU has AVX-512, else the portable one. When internal/metrics (run-time kernel
// dispatch) lands, metrics.KernelName replaces this function and its portable twin.
func ssimKernel() string {
	if archsimd.X86.AVX512() {
		return "avx512"
	}
	return "portable"
}
