// Package report renders results for people: the per-request text table, Markdown for the
// PR comment and the job summary, JUnit, and the commit status, check run and annotations of
// a lane. It does no I/O beyond the writer it is given: what it renders is published to
// GitHub by internal/gh, wired in cmd.
package report
