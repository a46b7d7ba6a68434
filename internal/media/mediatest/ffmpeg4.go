package mediatest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// static4 are the static FFmpeg 4.x builds that FFmpeg4 installs: the npm packages
// @ffmpeg-installer/linux-x64 and @ffprobe-installer/linux-x64 4.1.0 (johnvansickle.com's static
// builds from git, libavutil 56.24 and 56.28: between FFmpeg 4.1 and 4.2). The SHA-256 of each
// tarball is pinned, so that a package changed on the registry is noticed, not tested.
var static4 = []struct {
	pkg, program, sha256 string
}{
	{"@ffmpeg-installer/linux-x64@4.1.0", "ffmpeg", "b836abe532912ae6c3388dbe713952af293a3d005fc9e4d34d52f14da99dda71"},
	{"@ffprobe-installer/linux-x64@4.1.0", "ffprobe", "c34e7c4910b6a01327de11aaa1b5cede6a41a90f94fc31598b58252e74ebdfb5"},
}

// FFmpeg4 returns a folder holding static ffmpeg and ffprobe 4.x, to go first on PATH. They are
// fetched once with `npm pack` from the npm registry into the user cache
// ($XDG_CACHE_HOME/diffusion-check/ffmpeg-4.1.0, by default ~/.cache/...); the test is skipped,
// saying why, on a machine that is not linux/amd64 (the only build the packages hold), without
// npm, or when the registry cannot be reached.
func FFmpeg4(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("static FFmpeg 4.x: the npm packages hold linux/amd64 builds only, this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("static FFmpeg 4.x: no cache folder: %v", err)
	}
	dir := filepath.Join(cache, "diffusion-check", "ffmpeg-4.1.0")
	for _, s := range static4 {
		if _, err := os.Stat(filepath.Join(dir, s.program)); err == nil {
			continue
		}
		if err := fetchStatic(t, dir, s.pkg, s.program, s.sha256); err != nil {
			var skip skipError
			if errors.As(err, &skip) {
				t.Skipf("static FFmpeg 4.x not available, test skipped: %v", err)
			}
			t.Fatalf("static FFmpeg 4.x: %v", err)
		}
	}
	return dir
}

// skipError marks a fetch that failed for want of npm or the registry, not because of what it
// fetched.
type skipError struct{ err error }

func (e skipError) Error() string { return e.err.Error() }
func (e skipError) Unwrap() error { return e.err }

// fetchStatic packs pkg with npm, checks the tarball's SHA-256 and installs its program into
// dir; the rename at the end makes it appear whole, so that test processes fetching at once
// never run half a binary.
func fetchStatic(t testing.TB, dir, pkg, program, sum string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return skipError{fmt.Errorf("npm not installed (apt-get install npm): %w", err)}
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "pack", "--silent", "--pack-destination", tmp, pkg)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return skipError{fmt.Errorf("npm pack %s (is the npm registry reachable?): %w: %s", pkg, err, lastLines(out))}
	}
	tgz, err := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if err != nil || len(tgz) != 1 {
		return fmt.Errorf("npm pack %s: want one tarball in %s, got %v", pkg, tmp, tgz)
	}
	data, err := os.ReadFile(tgz[0])
	if err != nil {
		return err
	}
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
		return fmt.Errorf("npm pack %s: tarball SHA-256 %x, want %s (the package changed on the registry?)", pkg, got, sum)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+program+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := untarOne(tgz[0], "package/"+program, f); err != nil {
		_ = f.Close() // removed on the way out; the untar error is the one to report
		return fmt.Errorf("%s from %s: %w", program, pkg, err)
	}
	if err := f.Chmod(0o755); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, program))
}

// untarOne copies the file name of the gzipped tarball path into w.
func untarOne(path, name string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return fmt.Errorf("%s not in the tarball: %w", name, err)
		}
		if h.Name == name && h.Typeflag == tar.TypeReg {
			_, err = io.Copy(w, tr)
			return err
		}
	}
}

func lastLines(b []byte) string {
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}
