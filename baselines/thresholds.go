package baselines

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// Thresholds is a consistency-thresholds file in SGLang's format
// (consistency_thresholds/<gpu>.json), read unchanged:
//
//	{"cases": {"<id>": {"clip_threshold", "ssim_threshold", "psnr_threshold", "mean_abs_diff_threshold"}},
//	 "default_ssim_threshold_image": 0.95, "default_ssim_threshold_video": 0.92, ...}
//
// A limit comes from the case's entry, else the file's default for the output kind, else the
// built-in default (SGLang's constants in test/test_utils.py @ a9a355774a79,
// get_consistency_thresholds). diffusion-check adds the audio keys
// default_audio_{spectral_similarity,waveform_correlation,rms_db_diff,duration_diff}_threshold
// and the same names without "default_" in a case entry. Keys starting with "_" are comments.
// Every other key is an error, so a typo cannot silently fall back to a default.
type Thresholds struct {
	// Path is the file read (the GPU's own file when h100.json was merged under it); empty
	// for the built-in defaults.
	Path string
	// Missing, when set, says why no file was read (e.g. no h200.json in the folder).
	Missing  string
	Cases    map[string]map[string]float64
	Defaults map[string]float64 // the file's default_* keys

	// from names the file (base name) each case entry ("cases.<id>") and each default key
	// came from, for the origin of a limit after a merge.
	from map[string]string
}

// Built-in defaults: SGLang's test_utils.py constants, audio ones included.
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

// defaultThresholds returns thresholds without a file: the built-in defaults only.
func defaultThresholds() *Thresholds {
	return &Thresholds{Cases: map[string]map[string]float64{}, Defaults: map[string]float64{}, from: map[string]string{}}
}

// baseThresholdsGPU is the GPU class whose thresholds file every other GPU's file is merged
// on top of, as SGLang's harness does.
const baseThresholdsGPU = "h100"

// ThresholdsFor loads the thresholds of a suite as SGLang's harness does
// (test/test_utils.py @ a9a355774a79, _load_threshold_json and _merge_threshold_metadata):
// path is a folder holding one file per GPU class; h100.json is read, and for any other GPU
// the GPU's own file is merged on top of it (mergeThresholds). A missing file reads as {}.
// path may also be one file, which is then read alone (the suite chose it). An empty path,
// or a folder without either file, gives the built-in defaults (Missing says why). A folder
// with an empty gpu is an error: the file to read is unknown.
func ThresholdsFor(path, gpu string) (*Thresholds, error) {
	if path == "" {
		t := defaultThresholds()
		t.Missing = "the suite names no thresholds"
		return t, nil
	}
	f, err := Find(path, gpu)
	if err != nil {
		return nil, fmt.Errorf("consistency thresholds: %w", err)
	}
	if f == path {
		return LoadThresholds(f)
	}
	base, err := loadOrEmpty(filepath.Join(path, baseThresholdsGPU+".json"))
	if err != nil {
		return nil, err
	}
	t := base
	if filepath.Base(f) != baseThresholdsGPU+".json" {
		own, err := loadOrEmpty(f)
		if err != nil {
			return nil, err
		}
		t = mergeThresholds(base, own)
	}
	if t.Path == "" {
		t.Missing = fmt.Sprintf("no %s and no %s.json in %s", filepath.Base(f), baseThresholdsGPU, path)
	}
	return t, nil
}

// loadOrEmpty reads a thresholds file; a missing one reads as {} (Path empty), as SGLang's
// _load_threshold_json does.
func loadOrEmpty(path string) (*Thresholds, error) {
	t, err := LoadThresholds(path)
	if errors.Is(err, fs.ErrNotExist) {
		return defaultThresholds(), nil
	}
	return t, err
}

// mergeThresholds is SGLang's _merge_threshold_metadata (test/test_utils.py @ a9a355774a79):
// the GPU's file (over) on top of h100.json (base). A case entry in over replaces that case's
// whole entry in base (its metrics are not merged one by one); a top-level key of over
// overrides base's. Path is over's file when it has one, else base's.
func mergeThresholds(base, over *Thresholds) *Thresholds {
	m := defaultThresholds()
	m.Path = cmp.Or(over.Path, base.Path)
	for _, t := range []*Thresholds{base, over} {
		for id, limits := range t.Cases {
			m.Cases[id] = limits
			m.from["cases."+id] = t.from["cases."+id]
		}
		for k, v := range t.Defaults {
			m.Defaults[k] = v
			m.from[k] = t.from[k]
		}
	}
	return m
}

// LoadThresholds reads one SGLang consistency-thresholds file. It reports every problem at
// once, each as file:line: key: problem.
func LoadThresholds(path string) (*Thresholds, error) {
	b, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("consistency thresholds: %w", err)
	}
	t, err := parseThresholds(path, b)
	if err != nil {
		return nil, err
	}
	t.Path = path
	return t, nil
}

// parseThresholds decodes the content of a thresholds file; name names it in messages.
func parseThresholds(name string, b []byte) (*Thresholds, error) {
	t, err := decodeThresholds(name, b)
	if err != nil {
		return nil, err
	}
	for id := range t.Cases {
		t.from["cases."+id] = filepath.Base(name)
	}
	for k := range t.Defaults {
		t.from[k] = filepath.Base(name)
	}
	return t, nil
}

func decodeThresholds(name string, b []byte) (*Thresholds, error) {
	doc, err := parseJSON(name, b)
	if err != nil {
		return nil, err
	}
	d := &decoder{strictdecode.Problems{File: name}}
	if !d.object(doc, "(top level)") {
		return nil, d.Err()
	}
	t := defaultThresholds()
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
						d.Addf(entry.lines[k], "cases."+id, "unknown key %q (allowed: %s)", key, strings.Join(caseKeys, ", "))
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
			d.Addf(line, key, "unknown key (allowed: cases, %s, and keys starting with _)", strings.Join(sortedKeys(builtinDefaults), ", "))
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

// thresholdValue reads a threshold: a finite number in its metric's range.
func thresholdValue(d *decoder, n *node, path string) (float64, bool) {
	if n.kind != 'n' {
		d.Addf(n.line, path, "want a number, got %s", kindName(n))
		return 0, false
	}
	v, err := n.float()
	if err != nil {
		d.Addf(n.line, path, "want a number, got %s", n.num)
		return 0, false
	}
	if msg := checkRange(path, v); msg != "" {
		d.Addf(n.line, path, "%s", msg)
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
// were looked up came from: "h100.json: cases.x" when one place gave them all, else each
// place with its metrics.
func (t *Thresholds) resolver(caseID string, defaultKey func(m string) string) (func(m string) float64, func() string) {
	from := map[string][]string{}
	var order []string
	add := func(src, m string) {
		if _, ok := from[src]; !ok {
			order = append(order, src)
		}
		from[src] = append(from[src], m)
	}
	get := func(m string) float64 {
		if v, ok := t.Cases[caseID][m+"_threshold"]; ok {
			add(t.origin("cases."+caseID, "cases."+caseID), m)
			return v
		}
		k := defaultKey(m)
		if v, ok := t.Defaults[k]; ok {
			add(t.origin(k, "file defaults"), m)
			return v
		}
		add("built-in defaults", m)
		return builtinDefaults[k]
	}
	origin := func() string {
		var parts []string
		for _, src := range order {
			s := src
			if len(from) > 1 {
				s += " (" + strings.Join(from[src], ", ") + ")"
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
		if len(from) == 1 && order[0] == "built-in defaults" {
			return filepath.Base(t.Path) + ": built-in defaults"
		}
		return strings.Join(parts, ", ")
	}
	return get, origin
}

// origin is "<file>: what" for a key read from a file, or what alone without a file name.
func (t *Thresholds) origin(key, what string) string {
	if f := t.from[key]; f != "" && t.Path != "" {
		return f + ": " + what
	}
	return what
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
