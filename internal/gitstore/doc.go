// Package gitstore fetches a pinned git repository at one commit into a cache folder, the way
// a suite's `ground_truth: {repo, commit, path}` names SGLang's ground-truth store
// (sgl-project/ci-data-diffusion at test_utils.py's SGL_TEST_FILES_CI_DATA_REVISION). It runs
// the git binary (through internal/proc), never a Go git library: a blob-less, sparse fetch of
// the one commit, its checkout, and a check that HEAD is that commit. A checkout becomes a
// cache entry only by an atomic rename once it is complete, so a run killed mid-fetch leaves
// nothing a later run trusts, and a run that finds the entry starts no git process. The
// repository, commit and path come from a suite a pull request can change: they are checked
// here (Check, CheckRepo, CheckCommit, CheckPath), and git runs without the repository's
// hooks, symbolic links, credential helpers or any transport but https and (for a local
// repository) file.
package gitstore
