// Package selection is test-impact selection: from the paths a change touched, it decides
// which cases of a suite the change can affect, and says for every other case why it was
// left out. It is pure apart from reading the suite's own data files (baselines, thresholds)
// that changed: the changed paths come from the caller (a file, git, GitHub's API), never
// from here.
package selection
