// Package fault parses the fault specs of the reference server ("crash-at=2",
// "slow-after=1:3", ...). It is the one place that decides what a valid spec is, so that
// `diffusion-check serve --fault` (internal/refserver) and a suite's builtin server
// (runner/suite) accept the same ones, and checking a suite does not pull in the server.
package fault

import (
	"fmt"
	"strconv"
	"strings"
)

// Set is the misbehaviours the reference server is told to show. Request numbers K count
// every generation request the server process receives, from 1, across cases. The zero value
// is a healthy server.
type Set struct {
	DriftAfter      int     // outputs of requests > K drift from the deterministic output
	VideoDriftAfter int     // only the pictures of requests > K drift
	AudioDriftAfter int     // only the audio track of requests > K drifts
	DriftAt         int     // only the output of request K drifts (a one-off leak)
	Offset          int     // every output's pixel values are this many levels higher (another GPU class)
	SlowAfter       int     // requests > K are slower ...
	SlowFactor      float64 // ... by this factor
	SlowAt          int     // only request K is slower (a one-off, as noise on a shared runner) ...
	SlowAtFactor    float64 // ... by this factor
	MemGrowMiB      float64 // each request's runtime peak is this much higher than the previous one's
	CrashAt         int     // the process dies during request K
	HangAt          int     // request K never completes
	CorruptAt       int     // request K returns truncated media
	EmptyAt         int     // request K returns empty media
	SlowChunk       int     // chunk K of every realtime session (1-based) is slower ...
	SlowChunkFactor float64 // ... by this factor
	CloseChunk      int     // the server closes every realtime session before sending chunk K
	NoPerfRecord    bool    // no performance.log records are written
	FailStartup     bool    // the server exits with an error before it is ready

	specs []string
}

// Set adds one fault spec such as "crash-at=2" or "slow-after=1:3". It makes *Set a
// flag.Value, so --fault can be repeated.
func (f *Set) Set(spec string) error {
	name, arg, hasArg := strings.Cut(strings.TrimSpace(spec), "=")
	count := func(dst *int) error {
		k, err := strconv.Atoi(arg)
		if !hasArg || err != nil || k < 1 {
			return fmt.Errorf("fault %q: want %s=K with a request number K ≥ 1", spec, name)
		}
		*dst = k
		return nil
	}
	flag := func(dst *bool) error {
		if hasArg {
			return fmt.Errorf("fault %q: %s takes no value", spec, name)
		}
		*dst = true
		return nil
	}
	var err error
	switch name {
	case "drift-after":
		err = count(&f.DriftAfter)
	case "video-drift-after":
		err = count(&f.VideoDriftAfter)
	case "audio-drift-after":
		err = count(&f.AudioDriftAfter)
	case "drift-at":
		err = count(&f.DriftAt)
	case "offset":
		err = levels(spec, arg, hasArg, &f.Offset)
	case "crash-at":
		err = count(&f.CrashAt)
	case "hang-at":
		err = count(&f.HangAt)
	case "corrupt-at":
		err = count(&f.CorruptAt)
	case "empty-at":
		err = count(&f.EmptyAt)
	case "no-perf-record":
		err = flag(&f.NoPerfRecord)
	case "fail-startup":
		err = flag(&f.FailStartup)
	case "close-chunk":
		err = count(&f.CloseChunk)
	case "slow-after", "slow-at", "slow-chunk":
		k, factor, ok := strings.Cut(arg, ":")
		kn, err1 := strconv.Atoi(k)
		fv, err2 := strconv.ParseFloat(factor, 64)
		if !hasArg || !ok || err1 != nil || err2 != nil || kn < 1 || !(fv > 0) {
			return fmt.Errorf("fault %q: want %s=K:FACTOR with K ≥ 1 and FACTOR > 0", spec, name)
		}
		switch name {
		case "slow-at":
			f.SlowAt, f.SlowAtFactor = kn, fv
		case "slow-chunk":
			f.SlowChunk, f.SlowChunkFactor = kn, fv
		default:
			f.SlowAfter, f.SlowFactor = kn, fv
		}
	case "mem-grow":
		v, perr := strconv.ParseFloat(arg, 64)
		if !hasArg || perr != nil || !(v > 0) {
			return fmt.Errorf("fault %q: want mem-grow=MiB with MiB > 0", spec)
		}
		f.MemGrowMiB = v
	default:
		return fmt.Errorf("unknown fault %q (known: %s)", spec, strings.Join(Known(), ", "))
	}
	if err != nil {
		return err
	}
	f.specs = append(f.specs, strings.TrimSpace(spec))
	return nil
}

// levels reads the LEVELS of offset=LEVELS: a whole number of 8-bit levels from 1 to 255.
func levels(spec, arg string, hasArg bool, dst *int) error {
	v, err := strconv.Atoi(arg)
	if !hasArg || err != nil || v < 1 || v > 255 {
		return fmt.Errorf("fault %q: want offset=LEVELS with 1 ≤ LEVELS ≤ 255", spec)
	}
	*dst = v
	return nil
}

// Known lists the fault specs Set accepts, in the form `serve --fault` help and the
// unknown-fault error show them. TestKnownMatchesSet keeps it equal to Set's switch.
func Known() []string {
	return []string{"drift-after=K", "video-drift-after=K", "audio-drift-after=K", "drift-at=K", "offset=LEVELS", "slow-after=K:FACTOR",
		"slow-at=K:FACTOR", "slow-chunk=K:FACTOR", "close-chunk=K", "mem-grow=MiB", "crash-at=K", "hang-at=K", "corrupt-at=K", "empty-at=K",
		"no-perf-record", "fail-startup"}
}

// String lists the specs that were set, comma-separated.
func (f *Set) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.specs, ",")
}

// Specs returns the specs that were set, in order, e.g. to pass them on as --fault flags.
func (f *Set) Specs() []string { return append([]string(nil), f.specs...) }
