// Package fault parses the fault specs of the reference server ("crash-at=2",
// "slow-after=1:3", ...). It is the one place that decides what a valid spec is, so that
// `diffusion-check serve --fault` (internal/refserver) and a suite's builtin server
// (suite) accept the same ones, and checking a suite does not pull in the server.
package fault
