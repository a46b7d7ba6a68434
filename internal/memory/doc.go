// Package memory is the vocabulary shared by a memory sampler and the runner that uses it: a
// session over one server's process tree, the windows measured inside it, and the peaks each
// window saw. It sits below both, so that the sampler (internal/gpumem) never imports its
// consumer (runner), which declares the sampler interface it needs.
package memory
