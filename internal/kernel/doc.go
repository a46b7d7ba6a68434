// Package kernel chooses which vector instruction set the measuring kernels of this process use
// (SSIM in internal/metrics, yuv420p → rgb24 in internal/media).
//
// One binary runs on every x86-64 level and on arm64: the vector kernels are compiled in (with
// GOEXPERIMENT=simd on amd64) but never run before the CPU has been asked whether it has their
// instructions. The choice is made once, at the first call of Selected, from what the CPU
// reports; Force replaces it (the command line's DIFFUSION_CHECK_KERNEL). Go's own GODEBUG
// switches act here too, because the CPU query reads the runtime's feature flags:
// GODEBUG=cpu.avx512f=off hides AVX-512 and GODEBUG=cpu.avx2=off hides AVX2 (and so both).
//
// This is the one piece of process-wide state of the measuring code, on purpose: which
// instructions a CPU runs is a property of the process, like GOMAXPROCS, and threading it
// through every frame comparison would only invite two kernels in one run.
package kernel
