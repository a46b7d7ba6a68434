package media

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// A probe of ffmpeg and ffprobe starts five processes (ProbeTools), a tenth of a second or
// more: more than a whole `compare` of two small images. CachedProbe keeps what a probe found
// in a file of the user's cache folder, keyed by each program's path, size and modification
// time, and answers from it while both programs are still those files: one stat
// each. A program replaced, upgraded or touched is probed again. What the file holds is read
// as untrusted (a bounded JSON, checked as Inherit checks a parent's probe), and a file that
// cannot be read or written only costs the probe.

// probeCacheMax bounds the cache file read.
const probeCacheMax = 1 << 20

// programKey is what identifies one program's file.
type programKey struct {
	Path        string
	Size, ModNs int64
}

// probeCache is the cache file's content.
type probeCache struct {
	FFmpeg, FFprobe programKey
	Tools           toolsText
}

// keyOf is the key of the program at path; false when it cannot be read.
func keyOf(path string) (programKey, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return programKey{}, false
	}
	return programKey{Path: path, Size: fi.Size(), ModNs: fi.ModTime().UnixNano()}, true
}

// CachedProbe is ProbeTools answered from file (a path in the user's cache folder; "" keeps
// nothing) while ffmpeg and ffprobe on PATH are the files it probed; otherwise it probes and
// keeps the answer there.
func CachedProbe(ctx context.Context, file string) (Tools, error) {
	ff, okFF := lookKey("ffmpeg")
	fp, okFP := lookKey("ffprobe")
	if file != "" && okFF && okFP {
		if t, ok := readProbeCache(file, ff, fp); ok {
			return t, nil
		}
	}
	t, err := ProbeTools(ctx)
	if err != nil || file == "" {
		return t, err
	}
	// The keys again, now that the probe ran: a program replaced meanwhile is not recorded
	// under the old one's answer.
	if ff2, ok1 := keyOf(t.FFmpeg.Path); ok1 && ff2 == ff {
		if fp2, ok2 := keyOf(t.FFprobe.Path); ok2 && fp2 == fp {
			writeProbeCache(file, probeCache{FFmpeg: ff, FFprobe: fp, Tools: toolsTextOf(t)})
		}
	}
	return t, nil
}

// lookKey finds a program on PATH and returns its key.
func lookKey(name string) (programKey, bool) {
	path, err := exec.LookPath(name)
	if err != nil {
		return programKey{}, false
	}
	return keyOf(path)
}

// readProbeCache is the Tools file holds for programs ff and fp; false when it holds none,
// another program's, or anything toolsText.tools refuses.
func readProbeCache(file string, ff, fp programKey) (Tools, bool) {
	f, err := os.Open(file)
	if err != nil {
		return Tools{}, false
	}
	defer f.Close() //nolint:errcheck // read only
	b, err := io.ReadAll(io.LimitReader(f, probeCacheMax+1))
	if err != nil || len(b) > probeCacheMax {
		return Tools{}, false
	}
	var c probeCache
	if json.Unmarshal(b, &c) != nil || c.FFmpeg != ff || c.FFprobe != fp {
		return Tools{}, false
	}
	return c.Tools.tools(ff.Path, fp.Path)
}

// writeProbeCache replaces file with c at once (a temporary file renamed over it), so that a
// concurrent reader sees the old content or the new, never half; a failure keeps nothing.
func writeProbeCache(file string, c probeCache) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".ffmpeg-probe-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if errors.Join(werr, cerr) != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// toolsTextOf is t in the form MarshalText writes.
func toolsTextOf(t Tools) toolsText {
	return toolsText{FFmpeg: t.FFmpeg, FFprobe: t.FFprobe, Encoders: t.Encoders, Passthrough: t.passthrough}
}
