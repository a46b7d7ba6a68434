// Package archtest holds no code: its test enforces the import rules of docs/architecture.md
// on the module's real import graph (as `go list` reports it), so that a low-level package
// that starts importing a high-level one, or a process launch that creeps into the verdicts
// of package checks, fails `go test` instead of waiting for a reviewer to notice. It also
// keeps the package graph drawn in that document equal to the real one, and the names the
// docs quote in backquotes (`checks.KindOf`, `Cache.Forget`, `runner/request.go`) alive:
// docs_test.go says which spans are resolved and how.
package archtest
