// Command selection measures test-impact selection on a stream of real pull requests, for
// selection by the import graph of the server under test and for `paths:` globs alone, side
// by side: how many pull requests select none, some or all of a suite's cases, and the GPU
// minutes that implies (each case's plan estimate, one server start included, times its
// num_gpus). It also lists the pull requests outside PREFIX that change a module a server
// imports: changes the diffusion server runs that a workflow filtered by PREFIX never tests.
//
//	go run ./bench/selection STREAM.jsonl TREE SUITE.yaml [SUITE.yaml...]
//
// STREAM.jsonl holds one pull request a line, {"pr": N, "files": [...]}. TREE is a checkout
// of the server's repository (for SGLang, one whose python/ holds sglang/). Each suite's
// folder is copied to AT (default python/sglang/multimodal_gen/test/server, where SGLang keeps
// its diffusion CI data) inside a scratch repository whose other folders are TREE's, so that
// changes to the data files count as changes to the suite's own files. The globs-only run is
// the same suite with every server's imports: removed. The import graphs are read once per
// suite and kept across pull requests (selection.Graphs), as the tree does not change.
package main
