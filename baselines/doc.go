// Package baselines reads and writes the data files of SGLang's diffusion CI as they are:
// perf baselines (perf_baselines/<gpu>.json), known-failure lists, and regenerated baselines
// (the worst value of every metric across requests and partitions). It turns a file's
// scenario and tolerance profile into the plain limits that package checks compares with.
package baselines
