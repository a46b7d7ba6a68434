package media

import (
	"io"
	"os"
	"syscall"
)

// setPipeSize asks the kernel for a pipe buffer of up to one frame (capped at 1 MiB, the
// unprivileged limit), so that ffmpeg writes a frame in a few large chunks rather than 16 of
// 64 KiB, each a context switch. Failing is harmless: the pipe keeps its default size.
func setPipeSize(r io.Reader, bytes int) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return
	}
	const fSetPipeSz = 1031 // F_SETPIPE_SZ
	// Best effort, like the returns above: a pipe left at its default size is only slower.
	_ = sc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, uintptr(min(bytes, 1<<20)))
	})
}
