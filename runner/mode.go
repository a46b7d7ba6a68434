package runner

import "fmt"

// Mode is what a run is for: checking a server, or collecting new baselines or ground truth.
// The zero value is ModeCheck. It is a flag.Value, so --mode accepts only the modes below.
type Mode string

const (
	// ModeCheck enforces every check against the baselines, thresholds and ground truth.
	ModeCheck Mode = "check"
	// ModeBaseline collects measurements for `diffusion-check baseline`: perf and memory
	// checks are recorded (value, limit when a baseline exists) as skips, so a slow or new
	// scenario does not fail the run that measures it.
	ModeBaseline Mode = "baseline"
	// ModeGT writes ground truth from the outputs (request 1 of every case) into the suite's
	// ground_truth folder instead of checking consistency.
	ModeGT Mode = "gt"
)

// String returns the mode's name; the zero value reads as check.
func (m Mode) String() string {
	if m == "" {
		return string(ModeCheck)
	}
	return string(m)
}

// Set accepts check, baseline or gt.
func (m *Mode) Set(s string) error {
	switch Mode(s) {
	case ModeCheck, ModeBaseline, ModeGT:
		*m = Mode(s)
		return nil
	}
	return fmt.Errorf("want check, baseline or gt, got %q", s)
}

// enforces reports whether the run's perf and memory checks can fail it.
func (m Mode) enforces() bool { return m != ModeBaseline && m != ModeGT }

// requiresGroundTruth reports whether a case without ground truth fails the run: a baseline
// run comes before the ground truth (README, "Your first suite"), and a gt run writes it.
func (m Mode) requiresGroundTruth() bool { return m != ModeBaseline && m != ModeGT }
