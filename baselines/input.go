package baselines

import (
	"context"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// maxBaselineBytes bounds every file this package loads (perf baselines, thresholds, known
// failures, spread sidecars): SGLang's largest, h100.json, is under 1 MiB.
const maxBaselineBytes = 32 << 20

// readInput reads a file a pull request can write, as untrusted: a regular file (a symbolic
// link, FIFO or device is refused, not followed or waited on) of at most maxBaselineBytes.
// The loaders take no context: this is one bounded read of a local file.
func readInput(path string) ([]byte, error) {
	return inputfile.Read(context.Background(), path, maxBaselineBytes)
}
