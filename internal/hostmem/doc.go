// Package hostmem reads the host memory of a process tree from /proc: which processes descend
// from a root process, and the sum of their anonymous resident memory (RssAnon); and the
// host's CPU model (cpuinfo), which a run records beside its results. It is pure Go
// and reads nothing but files, so it works wherever a Linux /proc is mounted.
package hostmem
