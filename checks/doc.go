// Package checks holds the result vocabulary shared by the runner, the verdict rules and the
// report, and the pure functions that turn measurements into verdicts.
package checks
