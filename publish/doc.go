// Package publish is the report's way to GitHub: what `report --publish` writes, in which
// order, within which budget, and what it does when the token may not write. It decides;
// internal/gh makes the API calls and report renders the text.
//
// # Order
//
// Publish writes, for one merged report:
//
//  1. nothing at all when the results are not of the commit being published
//     (gh.CheckCommit): results are published only for the commit they were measured on;
//  2. a commit status per lane on the pull request's head: first, because branch protection
//     reads them, and a failure to read the comments must not cost them;
//  3. the failure pictures on the pictures branch (no branch, a fork's pull request or a
//     refusal: a notice, and the comment links to the artifacts);
//  4. a check run per lane (a refusal: a notice);
//  5. the PR comment: the previous comment of the key is read (its hidden state, for what
//     changed and for the comment mode), then the head commit's statuses (every other lane's
//     verdict), the mode decides whether to write (Mode), the pull request is read for its
//     head (a report whose commit is no longer the head is of an earlier push: it leaves the
//     comment to the newer push, says why, and the command exits 0), and the comment is
//     upserted; then the statuses are read again, and the comment written again while another
//     lane's status changed meanwhile (see Concurrent reports).
//
// A failure of one step is kept and the next steps still run: a comment that cannot be read
// costs neither the statuses nor the check runs. Publish returns every failure joined.
//
// # Concurrent reports
//
// Each lane's report job publishes on its own, often at the same moment, and all of them
// edit one comment. The comment is a view, never the record: each lane's verdict lives in
// its commit status, which only that lane's report writes, so no write can lose another
// lane's (GitHub offers no conditional edit of an issue comment,
// https://docs.github.com/rest/issues/comments#update-an-issue-comment, so a read-merge-write of
// the comment's hidden state, as it was, loses one report's lane whenever two interleave).
// The comment shows this report's lanes in full and every other lane as its status says
// (report.Report.Others), its headline speaks for all of them, and after each write Publish
// reads the statuses again and writes once more when they changed: the last write of all is
// then rendered from statuses that include every report's lanes (the proof is on converge).
// A lane's status and its line in the comment therefore never disagree once the last report
// is done. What only the comment's state knows (what changed since the previous run, a
// known or flaky pass) is kept for a lane shown as the same run in the same state.
// Not covered: two reports of the same lane at once (a re-run while the first still
// publishes) are not ordered, and the last status and the last comment may come from
// different ones; a concurrency group on the report job prevents that.
//
// # Budget
//
// Options.Budget is one deadline for everything publishing asks of GitHub, every request and
// retry included (the caller's context may end it earlier; it should carry the same deadline
// for what it asked before, such as the pull request of a workflow_run). The pictures get a
// third of it at most: the comment must not wait on them.
//
// # A read-only token
//
// A fork's pull_request workflow gets a token that can read but not write. When every
// failure is that refusal (gh.ErrReadOnly), publishing has not failed the report: Publish
// puts the report in the job summary (unless Options.Summarized says it is there already),
// tells readOnlyNotice (the workflow_run pattern that publishes for forks), and returns no
// error, with Outputs.ReadOnly set. Any other refusal is an error for the caller to exit on.
package publish
