// Package strictdecode is the one way diffusion-check reads its configuration and data files
// (suite YAML, known-failures YAML, perf-baseline and threshold JSON): every problem is
// collected instead of stopping at the first, each one an *Error that names the file, the line
// and the field, "suite.yaml:14: cases[2].repeat: must be ≥ 1, got 0", the form editors and CI
// logs link. For YAML it also reads the document itself strictly (one document, no alias
// bombs, duplicate keys refused, the line of a syntax error recovered); the JSON parser that
// keeps a baseline file's key order lives with the files it reads (package baselines) and
// reports through Problems too.
package strictdecode
