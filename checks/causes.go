package checks

// CauseStartTimeout is the Cause of a server.alive failure of a server still starting when
// its start_timeout ran out: SGLang's _wait_for_ready raises TimeoutError then, which its
// runner retries.
const CauseStartTimeout = "server start timed out"
