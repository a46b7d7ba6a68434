//go:build !linux

package proc

import "context"

// NiceThread does nothing here: a niceness per thread is Linux's. The validation's decoders
// still run niced (WithNice), only the in-process metric runs at this process's priority.
func NiceThread(context.Context) {}
