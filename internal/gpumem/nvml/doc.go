// Package nvml is the part of go-nvml's API that package gpumem uses, so that gpumem builds
// with and without cgo. With cgo its names are aliases of github.com/NVIDIA/go-nvml/pkg/nvml
// (the same types, so go-nvml's mocks fit) and Open returns the driver's library, which is
// loaded at Init. Without cgo go-nvml does not compile; the same names are declared here with
// no library behind them, and Open says why NVML cannot be used, which gpumem reports as it
// reports a machine without a driver.
package nvml
