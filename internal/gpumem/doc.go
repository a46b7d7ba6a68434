// Package gpumem samples the GPU memory of a server's process tree through NVML, and its host
// anonymous memory through /proc (package hostmem), at a high fixed rate, and reports the peak
// of every measurement window (server load, each request in flight). It is the only package
// that uses cgo: go-nvml opens the driver's libnvidia-ml at run time, so a cgo build runs
// everywhere and, without a driver, reports NVML as unavailable while host memory is still
// sampled. A build without cgo (CGO_ENABLED=0) behaves the same, with a note that says so
// (package nvml).
package gpumem
