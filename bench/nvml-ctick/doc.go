// ctick measures the CPU cost of a 1 kHz NVML device-counter sampler whose tick loop is a C
// pthread (no Go runtime on the ticking thread), with the Go side woken only by the C thread
// (on a rise of the counter) and by its own timer (-fold: fold the peak and read one
// /proc/PID/status, as gpumem's host-memory sample does). It is the experiment behind
// docs/gpu.md "A C tick thread: measured, not adopted", kept as its own module so that the main
// module still builds without cgo. On the GPU machine: go build -o ctick . && ./ctick -mode full.
package main
