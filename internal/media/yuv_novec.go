//go:build !(goexperiment.simd && amd64)

package media

import "github.com/diffusion-check/diffusion-check/internal/kernel"

// vectorYUV: this build has no vector converters (they need GOEXPERIMENT=simd on amd64).
func vectorYUV(kernel.Level) yuvRowFunc { return nil }
