//go:build !(goexperiment.simd && amd64)

package metrics

import "github.com/diffusion-check/diffusion-check/internal/kernel"

// vectorKernel: this build has no vector kernels (they need GOEXPERIMENT=simd on amd64).
func vectorKernel(kernel.Level) *rowKernel { return nil }
