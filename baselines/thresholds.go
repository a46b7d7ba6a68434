package baselines

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
)

// Thresholds is a consistency-thresholds file in SGLang's format
// (consistency_thresholds/<gpu>.json), read unchanged:
//
//	{"cases": {"<id>": {"clip_threshold", "ssim_threshold", "psnr_threshold", "mean_abs_diff_threshold"}},
//	 "default_ssim_threshold_image": 0.95, "default_ssim_threshold_video": 0.92, ...}
//
// A limit comes from the case's entry, else the file's default for the output kind, else the
// built-in default (SGLang's constants, docs/sglang-compat.md §5). diffusion-check adds the audio keys
// default_audio_{spectral_similarity,waveform_correlation,rms_db_diff,duration_diff}_threshold
// and the same names without "default_" in a case entry. Keys starting with "_" are comments.
// Every other key is an error, so a typo cannot silently fall back to a default.
type Thresholds struct {
	// Path is the file read; empty for the built-in defaults.
	Path string
	// Missing, when set, says why no file was read (e.g. no h200.json in the folder).
	Missing  string
	Cases    map[string]map[string]float64
	Defaults map[string]float64 // the file's default_* keys
}

// Built-in defaults: SGLang's test_utils.py constants and the audio defaults of docs/sglang-compat.md §5.
var builtinDefaults = map[string]float64{
	"default_clip_threshold_image":          0.92,
	"default_clip_threshold_video":          0.90,
	"default_ssim_threshold_image":          0.95,
	"default_psnr_threshold_image":          28.0,
	"default_mean_abs_diff_threshold_image": 8.0,
	"default_ssim_threshold_video":          0.92,
	"default_psnr_threshold_video":          24.0,
	"default_mean_abs_diff_threshold_video": 10.0,

	"default_audio_spectral_similarity_threshold":  0.95,
	"default_audio_waveform_correlation_threshold": 0.90,
	"default_audio_rms_db_diff_threshold":          2.0,
	"default_audio_duration_diff_threshold":        0.1,
}

// The keys of a case entry.
var caseKeys = []string{
	"clip_threshold", "ssim_threshold", "psnr_threshold", "mean_abs_diff_threshold",
	"audio_spectral_similarity_threshold", "audio_waveform_correlation_threshold",
	"audio_rms_db_diff_threshold", "audio_duration_diff_threshold",
}

// DefaultThresholds returns thresholds without a file: the built-in defaults only.
func DefaultThresholds() *Thresholds {
	return &Thresholds{Cases: map[string]map[string]float64{}, Defaults: map[string]float64{}}
}

// ThresholdsFor loads the thresholds of a suite: path is a <gpu>.json file, or a folder
// holding one file per GPU class, of which gpu's is read. An empty path, or a folder without
// a file for gpu, gives the built-in defaults (Missing says why), as SGLang's harness does
// for a missing file. A folder with an empty gpu is an error: the file to read is unknown.
func ThresholdsFor(path, gpu string) (*Thresholds, error) {
	if path == "" {
		t := DefaultThresholds()
		t.Missing = "the suite names no thresholds"
		return t, nil
	}
	f, err := Find(path, gpu)
	if err != nil {
		return nil, fmt.Errorf("consistency thresholds: %w", err)
	}
	t, err := LoadThresholds(f)
	if errors.Is(err, fs.ErrNotExist) && f != path {
		t = DefaultThresholds()
		t.Missing = fmt.Sprintf("no %s in %s", filepath.Base(f), path)
		return t, nil
	}
	return t, err
}

// LoadThresholds reads one SGLang consistency-thresholds file. It reports every problem at
// once, each as file:line: key: problem.
func LoadThresholds(path string) (*Thresholds, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("consistency thresholds: %w", err)
	}
	t, err := ParseThresholds(path, b)
	if err != nil {
		return nil, err
	}
	t.Path = path
	return t, nil
}

// ParseThresholds decodes the content of a thresholds file; name names it in messages.
func ParseThresholds(name string, b []byte) (*Thresholds, error) {
	doc, err := parseJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &decoder{file: name}
	if !d.object(doc, "(top level)") {
		return nil, errors.Join(d.errs...)
	}
	t := DefaultThresholds()
	for i, key := range doc.keys {
		v, line := doc.vals[i], doc.lines[i]
		switch {
		case strings.HasPrefix(key, "_"):
		case key == "cases":
			if !d.object(v, "cases") {
				continue
			}
			for j, id := range v.keys {
				entry := v.vals[j]
				if strings.HasPrefix(id, "_") || !d.object(entry, "cases."+id) {
					continue
				}
				limits := map[string]float64{}
				t.Cases[id] = limits
				for k, key := range entry.keys {
					path := "cases." + id + "." + key
					switch {
					case strings.HasPrefix(key, "_"):
					case !slices.Contains(caseKeys, key):
						d.errorf(entry.lines[k], "cases."+id, "unknown key %q (allowed: %s)", key, strings.Join(caseKeys, ", "))
					default:
						if x, ok := thresholdValue(d, entry.vals[k], path); ok {
							limits[key] = x
						}
					}
				}
			}
		case builtinDefaults[key] != 0:
			if x, ok := thresholdValue(d, v, key); ok {
				t.Defaults[key] = x
			}
		default:
			d.errorf(line, key, "unknown key (allowed: cases, %s, and keys starting with _)", strings.Join(sortedKeys(builtinDefaults), ", "))
		}
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return t, nil
}

// thresholdValue reads a threshold: a finite number in its metric's range.
func thresholdValue(d *decoder, n *node, path string) (float64, bool) {
	if n.kind != 'n' {
		d.errorf(n.line, path, "want a number, got %s", kindName(n))
		return 0, false
	}
	v, err := n.float()
	if err != nil {
		d.errorf(n.line, path, "want a number, got %s", n.num)
		return 0, false
	}
	if msg := checkRange(path, v); msg != "" {
		d.errorf(n.line, path, "%s", msg)
		return 0, false
	}
	return v, true
}

// checkRange says what is wrong with a threshold value, or "".
func checkRange(key string, v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "must be a finite number"
	case strings.Contains(key, "clip") || strings.Contains(key, "ssim") || strings.Contains(key, "similarity") || strings.Contains(key, "correlation"):
		if v < -1 || v > 1 {
			return fmt.Sprintf("must be between -1 and 1, got %g", v)
		}
	case strings.Contains(key, "mean_abs_diff"):
		if v < 0 || v > 255 {
			return fmt.Sprintf("must be between 0 and 255, got %g", v)
		}
	case strings.Contains(key, "diff"):
		if v < 0 {
			return fmt.Sprintf("must be ≥ 0, got %g", v)
		}
	}
	return ""
}

// For returns the image (video false) or video limits of a case: per case, else the file's
// default for the kind, else the built-in default.
func (t *Thresholds) For(caseID string, video bool) checks.ConsistencyLimits {
	kind := "image"
	if video {
		kind = "video"
	}
	get, origin := t.resolver(caseID, func(m string) string { return "default_" + m + "_threshold_" + kind })
	return checks.ConsistencyLimits{
		SSIM:        get("ssim"),
		PSNR:        get("psnr"),
		MeanAbsDiff: get("mean_abs_diff"),
		CLIP:        get("clip"),
		Origin:      origin(),
	}
}

// AudioFor returns the audio limits of a case, resolved as For does.
func (t *Thresholds) AudioFor(caseID string) checks.AudioLimits {
	get, origin := t.resolver(caseID, func(m string) string { return "default_" + m + "_threshold" })
	return checks.AudioLimits{
		SpectralSimilarity:  get("audio_spectral_similarity"),
		WaveformCorrelation: get("audio_waveform_correlation"),
		RMSdBDiff:           get("audio_rms_db_diff"),
		DurationDiffS:       get("audio_duration_diff"),
		Origin:              origin(),
	}
}

// resolver returns a lookup of metric m's limit and a description of where the limits that
// were looked up came from.
func (t *Thresholds) resolver(caseID string, defaultKey func(m string) string) (func(m string) float64, func() string) {
	from := map[string][]string{}
	get := func(m string) float64 {
		if v, ok := t.Cases[caseID][m+"_threshold"]; ok {
			from["cases."+caseID] = append(from["cases."+caseID], m)
			return v
		}
		k := defaultKey(m)
		if v, ok := t.Defaults[k]; ok {
			from["file defaults"] = append(from["file defaults"], m)
			return v
		}
		from["built-in defaults"] = append(from["built-in defaults"], m)
		return builtinDefaults[k]
	}
	origin := func() string {
		var parts []string
		for _, src := range []string{"cases." + caseID, "file defaults", "built-in defaults"} {
			ms := from[src]
			if len(ms) == 0 {
				continue
			}
			s := src
			if len(from) > 1 {
				s += " (" + strings.Join(ms, ", ") + ")"
			}
			parts = append(parts, s)
		}
		if t.Path == "" {
			why := "no thresholds file"
			if t.Missing != "" {
				why = t.Missing
			}
			return strings.Join(parts, ", ") + " (" + why + ")"
		}
		return filepath.Base(t.Path) + ": " + strings.Join(parts, ", ")
	}
	return get, origin
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
