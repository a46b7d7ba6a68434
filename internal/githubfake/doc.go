// Package githubfake is an httptest fake of the part of GitHub's REST API that diffusion-check
// uses: the token's user (GET /user, and GraphQL's viewer), issue comments (paginated),
// commit statuses, the pull requests of a commit and of a branch, the files of a pull
// request (paginated, at most 3,000 as GitHub), deployment environments (environments.go),
// check runs (checks.go) and git data — blobs, trees, commits, refs — for the pictures branch
// (git.go). It answers as GitHub does where that is unkind: a fork-only commit lists no pull
// request asked of the base, an installation token cannot call GET /user, a missing
// environment is 404 until a job names it, which creates it with no reviewers. It checks
// every request — method, path, authorization, headers, body — and records a problem for
// anything a real GitHub would refuse or that diffusion-check should never send; faults (5xx,
// 429, rate-limit 403s, slow responses) can be injected. It serves both api.github.com paths
// and GHES's /api/v3 prefix (and GraphQL at /graphql and GHES's /api/graphql).
package githubfake
