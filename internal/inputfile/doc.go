// Package inputfile opens and reads files that may be hostile (artifacts a pull request's code
// may have written, a history store, an output folder, event payloads): regular files only,
// no symbolic link followed, no open that blocks, bounded, and a read that stops when its
// context ends. It is the one way the tool opens such a file.
package inputfile
