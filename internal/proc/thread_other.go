//go:build !linux

package proc

// Run runs f. Outside Linux a niceness belongs to the whole process, so work in this process
// cannot run below it; only the helpers it starts are niced (Nice.Command).
func (Nice) Run(f func()) { f() }
