// Package judge makes the final verdict of every request and case of a run, in one place and
// in one order: given what a request measured and what is known when it finishes (the
// baseline file and its tolerances, the mode, the GPU class, the request before it in its
// case, the known-failures list), Request returns its final checks and status, which the
// runner writes once to requests.jsonl. Case- and run-level rules are their own named steps:
// Case (the checks of a server start), Confirmation (what a case's confirmation requests say
// about the failures of its requests). The verdicts themselves are package checks' pure
// functions; judge decides which apply, in which order, under which policy. Every status is
// judge's alone (status.go): a request's, a case's, a run's and a merged lane's, set before a
// run writes results.json and when a command reads one; the writer and the readers compute
// none. So is SGLang's retry policy (retry.go). No I/O: the runner loads the files and
// measures.
//
// How a request is judged (requestRules, in this order; docs/architecture.md says the same):
//
//  1. perf: its timings against the case's scenario (checks.Perf, or checks.PerfE2EOnly
//     under checks.perf: false), with SGLang's AMD rule inside checks (tolerance 1.0, limits
//     only warn); a missing scenario fails; only for a request the server answered.
//  2. memory: its runtime peak of every source against the baseline (checks.RuntimeMemory);
//     off CUDA recorded, not enforced (vram).
//  3. growth: its peaks against the previous request of the case (checks.GrowthSince), CUDA
//     only: memory that grows fails even under the baseline.
//  4. enforcement: in baseline mode every check of steps 1-3 is recorded, not enforced.
//  5. spread: each check with a value gets the baseline's spread of its metric.
//  6. known: the known-failures entries, over every check of the request (the measured ones
//     too): a listed failure is known, an expired entry leaves it failed, a pass is fixed;
//     not for a confirmation request, whose checks only label the case's failures.
//  7. status: RequestStatus, except for a request the run cut short (cancelled).
//
// Later events change a request's verdict only through Confirmation (its case's
// confirmation requests label, and may turn flaky, its failed perf and memory checks); the
// runner writes such a request again with what changed.
package judge
