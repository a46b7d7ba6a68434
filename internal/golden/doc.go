// Package golden compares test output with golden files under a test's testdata/ folder and
// rewrites them with `go test -update`. Test-only: imported by tests, never by the binary.
package golden
