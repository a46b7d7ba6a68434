// Package history keeps the perf and memory values of every run of a suite over commits: one
// small file per run in a store folder (a data branch a workflow keeps), the static page that
// charts them, and the rule that proposes tighter baselines from them (docs/history.md).
package history
