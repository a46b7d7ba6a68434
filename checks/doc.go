// Package checks is the vocabulary of a verdict and its pure rules: every check name and its
// Kind (label, unit, direction, group, table column), the causes a check gives, and the
// functions that turn numbers and limits into checks (perf, memory, consistency, audio,
// realtime, the API, a request's repeat drift, known failures, confirmation labels). It
// writes checks into the record that package results owns (results.Check, results.Status) and
// keeps no record of its own; the statuses of requests, cases and runs are package judge's.
// No I/O, no processes.
package checks
