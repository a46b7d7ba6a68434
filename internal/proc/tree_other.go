//go:build !linux

package proc

// BecomeSubreaper does nothing where there is no child subreaper (prctl is Linux's).
func BecomeSubreaper() error { return nil }

// Tree is a snapshot of a process and its descendants; without /proc it is empty.
type Tree struct{}

// Snapshot records nothing without /proc: only the process group is killed.
func Snapshot(int) *Tree { return &Tree{} }

// Sweep has nothing to end.
func (*Tree) Sweep() (killed, left []string) { return nil, nil }
