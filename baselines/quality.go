package baselines

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// QualityThresholds is SGLang's floors for the no-reference quality metrics
// (test/server/quality_thresholds.json, read by quality_metrics.py load_quality_thresholds;
// sgl-project/sglang @ 00fcb557 and @ a1c1eca2):
//
//	{"defaults": {"min_clip_score": 15.0}, "cases": {"<id>": {"min_clip_score", "min_clip_iqa", "min_image_reward"}}}
//
// A case's floors are the defaults overlaid by its own entry, key by key; a metric with no
// floor is neither computed nor enforced. Keys starting with "_" are comments. SGLang reads
// the three keys and ignores any other; diffusion-check refuses any other, naming it, so that
// a misspelt floor is not silently off.
type QualityThresholds struct {
	Path     string
	Defaults map[string]float64
	Cases    map[string]map[string]float64
}

// QualityFloors are one case's floors, by metric (checks.QualityMetrics); a metric absent is
// not enforced.
type QualityFloors map[string]float64

// qualityKey is the file's key of a metric's floor.
func qualityKey(metric string) string { return "min_" + metric }

// LoadQualityThresholds reads a quality-thresholds file, reporting every problem at once, each
// as file:line: key: problem.
func LoadQualityThresholds(path string) (*QualityThresholds, error) {
	b, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("quality thresholds: %w", err)
	}
	doc, err := parseJSON(path, b)
	if err != nil {
		return nil, err
	}
	d := &decoder{strictdecode.Problems{File: path}}
	if !d.object(doc, "(top level)") {
		return nil, d.Err()
	}
	q := &QualityThresholds{Path: path, Defaults: map[string]float64{}, Cases: map[string]map[string]float64{}}
	for i, key := range doc.keys {
		v := doc.vals[i]
		switch {
		case strings.HasPrefix(key, "_"):
		case key == "defaults":
			if d.object(v, key) {
				q.Defaults = qualityFloors(d, v, key)
			}
		case key == "cases":
			if !d.object(v, key) {
				continue
			}
			for j, id := range v.keys {
				if !strings.HasPrefix(id, "_") && d.object(v.vals[j], "cases."+id) {
					q.Cases[id] = qualityFloors(d, v.vals[j], "cases."+id)
				}
			}
		default:
			d.Addf(doc.lines[i], key, "unknown key (allowed: defaults, cases, and keys starting with _)")
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return q, nil
}

// qualityFloors reads one object of floors: min_<metric> keys with finite numbers.
func qualityFloors(d *decoder, n *node, at string) map[string]float64 {
	var allowed []string
	for _, m := range checks.QualityMetrics() {
		allowed = append(allowed, qualityKey(m))
	}
	out := map[string]float64{}
	for i, key := range n.keys {
		path := at + "." + key
		v := n.vals[i]
		switch {
		case strings.HasPrefix(key, "_"):
		case !slices.Contains(allowed, key):
			d.Addf(n.lines[i], at, "unknown key %q (allowed: %s, and keys starting with _)", key, strings.Join(allowed, ", "))
		case v.kind == 'z':
			// null: not enforced, as SGLang's _optional_float(None); a case's null lifts a
			// default floor (For).
			out[strings.TrimPrefix(key, "min_")] = math.NaN()
		case v.kind != 'n':
			d.Addf(v.line, path, "want a number or null, got %s", kindName(v))
		default:
			x, err := v.float()
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				d.Addf(v.line, path, "want a finite number, got %s", v.num)
				continue
			}
			out[strings.TrimPrefix(key, "min_")] = x
		}
	}
	return out
}

// For is case id's floors: the defaults overlaid by its entry, key by key, a null lifting a
// floor (load_quality_thresholds: {**defaults, **case}, then None is not enforced).
func (q *QualityThresholds) For(id string) QualityFloors {
	if q == nil {
		return nil
	}
	f := QualityFloors{}
	maps.Copy(f, q.Defaults)
	maps.Copy(f, q.Cases[id])
	maps.DeleteFunc(f, func(_ string, v float64) bool { return math.IsNaN(v) })
	return f
}
