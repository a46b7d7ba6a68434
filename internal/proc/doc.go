// Package proc starts processes so that none outlives its caller: helpers (ffmpeg, ffprobe,
// scorers) and the servers under test. Each leads its own process group; cancelling the
// context of a helper terminates its group; on Linux the kernel kills each one when the
// caller dies, even by SIGKILL (Pdeathsig); and a Guard kills a whole group, grandchildren
// included, when the caller dies.
package proc
