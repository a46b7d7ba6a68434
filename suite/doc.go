// Package suite reads and validates suite files: which servers to start and which cases to
// send them. Decoding is strict; Load reports every problem at once, each naming file:line.
package suite
