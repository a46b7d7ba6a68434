package report

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// idleLine says, under a lane's table, how long the harness kept the GPU idle between each
// case's requests (idle_ms: no request in flight between the case's first send and its
// last answer); nothing for a lane whose results do not say.
func idleLine(b *strings.Builder, l *results.Result) {
	var parts []string
	for _, c := range l.Cases {
		if c.IdleMs > 0 {
			parts = append(parts, code(c.ID)+" "+fmtMs(c.IdleMs))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "\n_GPU idle between requests, waiting for the harness: %s._\n", strings.Join(parts, ", "))
	}
}
