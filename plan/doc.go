// Package plan splits a lane of a suite into partitions, one per job of a GitHub Actions
// matrix, from estimates of each case's time (the case's own, its baseline's, SGLang's
// default), and checks a plan file against the suite a run reads: every job computes or reads
// the same split.
package plan
