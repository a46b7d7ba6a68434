//go:build !(goexperiment.simd && amd64)

package kernel

import "runtime"

// detect: without GOEXPERIMENT=simd on amd64 there are no vector kernels in the build.
func detect() []Level { return []Level{Portable} }

func describe() string {
	if runtime.GOARCH == "amd64" {
		return "amd64 build without GOEXPERIMENT=simd: no vector kernels compiled in"
	}
	return runtime.GOARCH + ": no vector kernels for this architecture"
}
