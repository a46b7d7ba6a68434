// Package results owns the record of a run and its files: the types of results.json and
// requests.jsonl (record.go: Result, CaseResult, RequestResult, Check, Status, …, with their
// names and Schema), the files of one run's output folder (--out): requests.jsonl, appended
// as each request is judged, results.json, rewritten atomically, the artifacts tree and the
// disk-space reserve; and reading them back (a results.json completed from requests.jsonl when
// the run ended before its final write), also the many a command line names (ReadAll); and
// what is computed across runs: Merge of partitions into lanes (PlanProblems: every planned
// case ran exactly once), KnownOutcomes and TallyRequests. It runs no server and makes no
// verdict, so that the report path reads results without the executor.
package results
