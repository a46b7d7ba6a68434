// Package inputfile reads files that may be hostile (artifacts a pull request's code may have
// written, event payloads): regular files only, bounded, and a read that stops when its
// context ends.
package inputfile
