// Package perflog reads SGLang's performance.log: the format of one record
// (perf_logger.log_request_summary writes one JSON line per request, docs/sglang-compat.md §3),
// what no measurement can be, and a follower of the file as the server appends to it that
// hands each request its record.
package perflog
