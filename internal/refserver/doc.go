// Package refserver is the reference diffusion server behind `diffusion-check serve`: a small
// Go server that speaks SGLang's OpenAI-style image and video API (docs/sglang-compat.md §1–§3)
// and behaves like a diffusion server. Its output is a deterministic function of the request,
// its stage timings are measured and appended to performance.log, and Faults make it misbehave
// in the ways the repeated-request checks exist to catch.
package refserver
