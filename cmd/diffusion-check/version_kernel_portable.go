//go:build !(goexperiment.simd && amd64)

package main

// ssimKernel: without GOEXPERIMENT=simd on amd64 only the portable kernel is compiled in.
// When internal/metrics (run-time kernel dispatch) lands, metrics.KernelName replaces this.
func ssimKernel() string { return "portable" }
