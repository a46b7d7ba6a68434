//go:build !(goexperiment.simd && amd64)

package metrics

import "github.com/diffusion-check/diffusion-check/internal/kernel"

// vectorRun: this build has no vector kernels (they need GOEXPERIMENT=simd on amd64).
func vectorRun(kernel.Level) runFunc { return nil }
