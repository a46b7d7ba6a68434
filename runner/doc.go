// Package runner executes a suite: it starts each server under test, sends every case's
// requests to the same warm server, measures each request (end-to-end time, the server's
// performance.log record, sampled GPU and host memory, the output media, which it compares
// with the ground truth), hands what it measured to package judge for the request's final
// verdict, and writes each result through package results as soon as it is known.
package runner
