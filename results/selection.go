package results

import "slices"

// Selection says how test-impact selection chose the cases of a plan (selection):
// from which changed files, and how many of the cases it kept. A plan made without a list of
// changed files has none, and every case runs.
type Selection struct {
	// Source names where the changed files came from: "--changed-files FILE",
	// "--changed-since REF (merge base 0123abcd)", "pull request #12".
	Source string `json:"source"`
	// ChangedFiles is how many changed paths were read.
	ChangedFiles int `json:"changed_files"`
	// Selected and Of count the cases kept and the cases of the lane(s) planned.
	Selected int `json:"selected"`
	Of       int `json:"of"`
	// All, when set, says why every case runs although there was a source: GitHub lists at
	// most 3,000 files of a pull request; the event is not a pull request.
	All string `json:"all,omitempty"`
}

// Deselected is a case that test-impact selection left out, and why: it did not run, and a
// merge counts it as neither missing nor failed.
type Deselected struct {
	Case   string `json:"case"`
	Lane   string `json:"lane,omitempty"`
	Reason string `json:"reason"`
}

// NothingSelected reports whether r is a run (or a merged lane) in which selection left out
// every case: it checked nothing because no change could affect anything, which passes.
func (r *Result) NothingSelected() bool {
	return len(r.Cases) == 0 && len(r.Errors) == 0 && len(r.Deselected) > 0 &&
		!slices.ContainsFunc(r.Planned, func(p []string) bool { return len(p) > 0 })
}
