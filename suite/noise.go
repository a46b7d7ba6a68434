package suite

import "github.com/diffusion-check/diffusion-check/internal/strictdecode"

// Noise says what a case does when a perf or memory check fails: how many confirmation
// requests it sends to the same warm server, and how a failure they do not reproduce is
// reported. It is set at the top of the suite, on a server or on a case; the most specific
// level that sets a field wins.
type Noise struct {
	// Confirm is the most confirmation requests sent after a case's Repeat requests when a
	// perf.* or memory.* check failed on one of them; 0 sends none.
	Confirm int
	// OnUnconfirmed is what a failure the confirmation requests did not reproduce becomes:
	// OnUnconfirmedFail (red, labelled) or OnUnconfirmedFlaky (yellow, the lane passes).
	OnUnconfirmed string
	// Retry is SGLang's retry mode (PR #39206): how many times a failed case is run again,
	// from a fresh server start, when its failure may be retried (checks.retryOf); the last
	// attempt's verdict stands. 0 runs no retries; at most MaxRetry.
	Retry int
}

// MaxRetry bounds retry: SGLang's runner retries a failed item at most six times.
const MaxRetry = 6

// The values of on_unconfirmed.
const (
	OnUnconfirmedFail  = "fail"
	OnUnconfirmedFlaky = "flaky"
)

// maxConfirm bounds confirm: each confirmation request costs as much GPU time as a request
// of the case, and past a handful a rerun of the job is the cheaper way to settle a doubt.
const maxConfirm = 10

// noise reads confirm and on_unconfirmed from o, starting from what the enclosing level set.
func (d *decoder) noise(o *object, inherit Noise) Noise {
	n := inherit
	if o.integer("confirm", &n.Confirm) && o.atLeast("confirm", n.Confirm, 0) && n.Confirm > maxConfirm {
		d.Addf(o.lineOf("confirm"), strictdecode.Join(o.field, "confirm"),
			"must be ≤ %d, got %d; each confirmation request costs as much as a request of the case", maxConfirm, n.Confirm)
	}
	d.retry(o, &n)
	if o.str("on_unconfirmed", &n.OnUnconfirmed) {
		switch n.OnUnconfirmed {
		case OnUnconfirmedFail, OnUnconfirmedFlaky:
		default:
			d.Addf(o.lineOf("on_unconfirmed"), strictdecode.Join(o.field, "on_unconfirmed"), "unknown value %q (known: %s, %s)", n.OnUnconfirmed,
				OnUnconfirmedFail, OnUnconfirmedFlaky)
			n.OnUnconfirmed = inherit.OnUnconfirmed
		}
	}
	return n
}

// retry reads retry from o into n (kept from the enclosing level when o does not set it).
func (d *decoder) retry(o *object, n *Noise) {
	if o.integer("retry", &n.Retry) && o.atLeast("retry", n.Retry, 0) && n.Retry > MaxRetry {
		d.Addf(o.lineOf("retry"), strictdecode.Join(o.field, "retry"), "must be ≤ %d (SGLang's most retries of a failed case), got %d", MaxRetry, n.Retry)
	}
}
