// Package githubfake is an httptest fake of the part of GitHub's REST API that diffusion-check
// uses: the token's user (GET /user), issue comments (paginated), commit statuses, the pull
// requests of a commit, the files of a pull request (paginated, at most 3,000 as GitHub),
// check runs (checks.go) and git data — blobs, trees, commits, refs — for the pictures
// branch (git.go). It checks every request — method,
// path, authorization, headers, body — and records a problem for anything a real GitHub would
// refuse or that diffusion-check should never send; faults (5xx, 429, rate-limit 403s, slow
// responses) can be injected, and a fault that no request matched fails the test (NewT,
// Unused), as a stub that was never called does in cli/cli's httpmock. It serves both
// api.github.com paths and GHES's /api/v3 prefix.
package githubfake
