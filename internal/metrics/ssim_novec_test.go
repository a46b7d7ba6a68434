//go:build !(goexperiment.simd && amd64)

package metrics

import "github.com/diffusion-check/diffusion-check/internal/kernel"

// Without vector kernels there is no vAddRow path to choose (see ssim_simd_amd64_test.go).
func vbmiCases(kernel.Level) []bool { return []bool{false} }
