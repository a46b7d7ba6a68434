// Package untrusted shows text that diffusion-check did not write (server output, messages
// and names from results files, artifacts: a pull request can write any of them) so that it
// reads as what it is: characters that hide or reorder what a reader sees (bidirectional
// overrides and isolates, NUL, ESC and the other control characters, the Unicode line and
// paragraph separators) become visible escapes ("\u202e", "\x1b"), and, in a GitHub Actions
// log, no line it forms is a workflow command in either syntax ("::cmd::" and the older
// "##[cmd]").
package untrusted
