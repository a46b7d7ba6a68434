//go:build !linux

package proc

import "context"

// Niced runs f. Outside Linux a niceness belongs to the whole process, so work in this
// process cannot run below it; only the helpers it starts are niced (WithNice).
func Niced(_ context.Context, f func()) { f() }
