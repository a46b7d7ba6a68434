// Package setup holds the tests of the setup action (action.yml, install.sh): the installer
// against a local HTTP server laid out like a GitHub release, and actionlint over the action.
package setup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// release is a local server laid out like GitHub's release downloads:
// <base>/<tag>/<asset>. It counts the requests of each path.
type release struct {
	mu    sync.Mutex
	files map[string][]byte // "/v1.2.3/checksums.txt" → content
	hits  map[string]int
	// drip are the paths served a byte a second, as a hostile mirror may, until the client
	// gives up.
	drip map[string]bool
}

func (r *release) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	path := strings.TrimPrefix(req.URL.Path, "/releases/download")
	r.hits[path]++
	b, ok := r.files[path]
	drip := r.drip[path]
	r.mu.Unlock()
	if !ok {
		http.NotFound(w, req)
		return
	}
	if drip {
		for _, c := range b {
			if _, err := w.Write([]byte{c}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-req.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
		return
	}
	_, _ = w.Write(b)
}

// publish puts a release's archive under dir (a tag's download path, "/v1.2.3") with the
// checksums.txt that lists it, as a release made by .goreleaser.yaml has them.
func (r *release) publish(dir, asset string, tgz []byte) {
	r.files[dir+"/"+asset] = tgz
	r.files[dir+"/checksums.txt"] = fmt.Appendf(nil, "%x  %s\n", sha256.Sum256(tgz), asset)
}

func (r *release) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.hits {
		n += c
	}
	return n
}

// hitsOf is how many requests asked for path, read under the lock the handler writes under.
func (r *release) hitsOf(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits[path]
}

// archive is a release archive as .goreleaser.yaml makes it: the binary, README.md and LICENSE
// at its root, gzipped.
func archive(t *testing.T, binary []byte) []byte {
	t.Helper()
	return tarball(t, member{name: "README.md", kind: tar.TypeReg, data: []byte("# diffusion-check\n")},
		member{name: "LICENSE", kind: tar.TypeReg, data: []byte("Apache License\n")}, member{name: "diffusion-check", kind: tar.TypeReg, data: binary})
}

// built is the binary buildBinary built once for the package's tests.
var built struct {
	once sync.Once
	data []byte
	err  error
}

// buildBinary builds diffusion-check for this machine, as the release would for its platform,
// once for every test of the package.
func buildBinary(t *testing.T) []byte {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "setup-test-")
		if err != nil {
			built.err = err
			return
		}
		defer func() { _ = os.RemoveAll(dir) }()
		out := filepath.Join(dir, "diffusion-check")
		cmd := exec.Command("go", "build", "-o", out, "../cmd/diffusion-check")
		if b, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, b)
			return
		}
		built.data, built.err = os.ReadFile(out)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.data
}

// installer runs install.sh as the action does, with the runner's variables; it returns the
// exit status, the output, and the lines written to GITHUB_PATH and GITHUB_OUTPUT.
type installer struct {
	t                 *testing.T
	cache, base, path string
}

type outcome struct {
	code          int
	output        string
	githubPath    string
	githubOutputs string
}

func (in installer) run(version string, extra ...string) outcome {
	in.t.Helper()
	tmp := in.t.TempDir()
	gp, gout := filepath.Join(tmp, "path"), filepath.Join(tmp, "output")
	cmd := exec.Command("bash", "install.sh")
	cmd.Env = append(os.Environ(),
		"INPUT_VERSION="+version, "INPUT_BASE_URL="+in.base, "INPUT_CHECK_FFMPEG=true",
		"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch(), "RUNNER_TOOL_CACHE="+in.cache, "RUNNER_TEMP="+tmp,
		"GITHUB_PATH="+gp, "GITHUB_OUTPUT="+gout, "PATH="+in.path,
		// What a runner may have set must not decide the outcome: each test says its own.
		"GITHUB_ACTION_PATH=", "INPUT_TOKEN=", "INPUT_VERIFY=", "ATTESTATION_REPO=", "SETUP_GH=", "GITHUB_SERVER_URL=", "SETUP_LIBC=")
	cmd.Env = append(cmd.Env, extra...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		in.t.Fatal(err)
	}
	p, _ := os.ReadFile(gp)
	o, _ := os.ReadFile(gout)
	return outcome{code, string(out), string(p), string(o)}
}

// runnerArch is RUNNER_ARCH for this machine (docs: X64, ARM64, ...).
func runnerArch() string {
	if runtime.GOARCH == "arm64" {
		return "ARM64"
	}
	return "X64"
}

// TestInstall runs the installer against a local release: a first install downloads, verifies
// and caches; a re-run takes the cache without a request; a checksum mismatch, a missing asset,
// a checksums file that does not list the asset and a missing release are refused with a
// message naming them and leave nothing in the cache; an unsupported ffmpeg fails the step
// saying what to install, unless check_ffmpeg is false.
func TestInstall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the installer is tested on linux")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed (scripts/setup installs it)")
	}
	arch := runtime.GOARCH
	asset := func(v string) string {
		return fmt.Sprintf("diffusion-check_%s_linux_%s.tar.gz", strings.TrimPrefix(v, "v"), arch)
	}
	tgz := archive(t, buildBinary(t))
	sum := fmt.Sprintf("%x", sha256.Sum256(tgz))
	other := "arm64"
	if arch == "arm64" {
		other = "amd64"
	}
	rel := &release{hits: map[string]int{}, files: map[string][]byte{
		// The good release; checksums.txt lists an asset that is not there too, as a release
		// whose upload of one archive failed would.
		"/v1.2.3/" + asset("v1.2.3"): tgz,
		"/v1.2.3/checksums.txt":      []byte(fmt.Sprintf("%s  %s\n%064x  diffusion-check_1.2.3_linux_%s.tar.gz\n", sum, asset("v1.2.3"), 1, other)),
		// A release whose archive is not what its checksums file says.
		"/v1.2.4/" + asset("v1.2.4"): tgz,
		"/v1.2.4/checksums.txt":      []byte(fmt.Sprintf("%064x  %s\n", 7, asset("v1.2.4"))),
		// A release whose checksums file does not list the archive.
		"/v1.2.5/" + asset("v1.2.5"): tgz,
		"/v1.2.5/checksums.txt":      []byte(fmt.Sprintf("%s  diffusion-check_1.2.5_darwin_arm64.tar.gz\n", sum)),
	}}
	srv := httptest.NewServer(rel)
	defer srv.Close()
	cache := t.TempDir()
	in := installer{t: t, cache: cache, base: srv.URL + "/releases/download", path: os.Getenv("PATH")}
	entry := filepath.Join(cache, "diffusion-check", "1.2.3", arch)

	first := in.run("v1.2.3")
	if first.code != 0 {
		t.Fatalf("first install: exit %d\n%s", first.code, first.output)
	}
	for _, want := range []string{"installed " + asset("v1.2.3") + " (SHA-256 " + sum + " verified against the release's checksums.txt)",
		"ok: FFmpeg 4.1 or newer"} {
		if !strings.Contains(first.output, want) {
			t.Errorf("first install: output lacks %q:\n%s", want, first.output)
		}
	}
	if first.githubPath != entry+"\n" {
		t.Errorf("GITHUB_PATH = %q, want %q", first.githubPath, entry+"\n")
	}
	if want := "version=v1.2.3\npath=" + entry + "/diffusion-check\ncache_hit=false\n"; first.githubOutputs != want {
		t.Errorf("GITHUB_OUTPUT = %q, want %q", first.githubOutputs, want)
	}
	if _, err := os.Stat(entry + ".complete"); err != nil {
		t.Errorf("no tool-cache marker: %v", err)
	}
	if n := rel.requests(); n != 2 {
		t.Errorf("first install made %d requests, want 2 (checksums.txt and the archive)", n)
	}

	again := in.run("v1.2.3")
	verified := "found in the tool cache (" + entry + "), archive SHA-256 " + sum + " verified against the release's checksums.txt"
	if again.code != 0 || !strings.Contains(again.output, verified) || !strings.Contains(again.githubOutputs, "cache_hit=true") {
		t.Errorf("re-run: exit %d, outputs %q\n%s", again.code, again.githubOutputs, again.output)
	}
	// The re-run asks the release for its sums again (the cache proves nothing), not for the
	// archive.
	if n, archive := rel.requests(), rel.hitsOf("/v1.2.3/"+asset("v1.2.3")); n != 3 || archive != 1 {
		t.Errorf("re-run made %d more requests (the archive asked for %d times in all), want checksums.txt alone", n-2, archive)
	}

	for _, tc := range []struct {
		name, version, want string
		extra               []string
	}{
		{"checksum mismatch", "v1.2.4", "checksum mismatch for " + asset("v1.2.4") + " of v1.2.4: SHA-256 " + sum + ", the release's checksums.txt says " +
			fmt.Sprintf("%064x", 7), nil},
		{"missing asset", "v1.2.3", "release v1.2.3 has no asset diffusion-check_1.2.3_linux_" + other + ".tar.gz",
			[]string{"RUNNER_ARCH=" + map[string]string{"arm64": "ARM64", "amd64": "X64"}[other]}},
		{"not in checksums", "v1.2.5", "release v1.2.5: the release's checksums.txt lists no " + asset("v1.2.5") + "; refusing an unverified binary", nil},
		{"no such release", "v9.9.9", "release v9.9.9: could not download checksums.txt", nil},
		{"not a version", "v1", "version 'v1': want a release tag vX.Y.Z", nil},
		{"windows", "v1.2.3", "runner OS Windows", []string{"RUNNER_OS=Windows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := in.run(tc.version, tc.extra...)
			if got.code == 0 || !strings.Contains(got.output, "::error title=diffusion-check setup::"+tc.want) {
				t.Errorf("exit %d, want a failure saying %q:\n%s", got.code, tc.want, got.output)
			}
			if got.githubPath != "" {
				t.Errorf("GITHUB_PATH written on failure: %q", got.githubPath)
			}
		})
	}
	for _, v := range []string{"1.2.4", "1.2.5", "9.9.9"} {
		if _, err := os.Stat(filepath.Join(cache, "diffusion-check", v)); err == nil {
			t.Errorf("the cache holds %s after a refused install", v)
		}
	}

	// An ffmpeg older than 4.1 first on PATH: doctor refuses it and the step says what to install.
	old := t.TempDir()
	for _, p := range []string{"ffmpeg", "ffprobe"} {
		script := "#!/bin/sh\ncase \"$*\" in *-version*) printf '%b' '" + p +
			" version 3.4.11 Copyright\\nlibavutil      55. 78.100 / 55. 78.100\\n';; *) exit 1;; esac\n"
		if err := os.WriteFile(filepath.Join(old, p), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in.path = old + string(os.PathListSeparator) + os.Getenv("PATH")
	refused := in.run("v1.2.3")
	for _, want := range []string{"ffmpeg 3.4.11", "older than the minimum, FFmpeg 4.1", "apt-get install -y ffmpeg"} {
		if refused.code == 0 || !strings.Contains(refused.output, want) {
			t.Errorf("old ffmpeg: exit %d, want a failure saying %q:\n%s", refused.code, want, refused.output)
		}
	}
	if skipped := in.run("v1.2.3", "INPUT_CHECK_FFMPEG=false"); skipped.code != 0 {
		t.Errorf("check_ffmpeg false: exit %d\n%s", skipped.code, skipped.output)
	}
}

// member is one entry of a hostile archive.
type member struct {
	name, link string
	kind       byte
	data       []byte
}

// tarball is a gzipped tar of the members, in order.
func tarball(t *testing.T, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: m.kind, Linkname: m.link, Mode: 0o755, Size: int64(len(m.data))}
		if m.kind != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if m.kind == tar.TypeReg {
			if _, err := tw.Write(m.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInstallRefusesHostileReleases: a release a hostile mirror or base_url serves, with the
// true checksum, is refused at once with a message naming the asset, and nothing outside the
// install folder is read or changed: a member that is a link (absolute or relative), a hard
// link, a folder, a device or a FIFO, a member twice, an archive or a member over its cap, an
// asset dripped slower than 1 KB/s, a checksums.txt that lists the asset twice. An upper-case
// sum is one (sha256sum -c reads it). A binary planted in the tool cache, or a real install's
// binary replaced later, is never run: the entry is installed again, saying why.
func TestInstallRefusesHostileReleases(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the installer is tested on linux")
	}
	arch := runtime.GOARCH
	asset := func(v string) string {
		return fmt.Sprintf("diffusion-check_%s_linux_%s.tar.gz", strings.TrimPrefix(v, "v"), arch)
	}
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := archive(t, buildBinary(t))
	rel := &release{hits: map[string]int{}, files: map[string][]byte{}, drip: map[string]bool{}}
	add := func(v string, tgz []byte, sums string) {
		rel.publish("/"+v, asset(v), tgz)
		if sums != "" {
			rel.files["/"+v+"/checksums.txt"] = []byte(sums)
		}
	}
	bin := []byte("#!/bin/sh\necho planted\n")
	cases := []struct{ name, version, want string }{
		{"absolute link", "v2.0.1", "diffusion-check in the archive is no regular file (type 'l'"},
		{"relative link", "v2.0.2", "diffusion-check in the archive is no regular file (type 'l'"},
		{"hard link", "v2.0.3", "diffusion-check in the archive is no regular file (type 'h'"},
		{"folder", "v2.0.4", "more than one entry named diffusion-check (or a folder of that name)"},
		{"device", "v2.0.5", "diffusion-check in the archive is no regular file (type 'c'"},
		{"fifo", "v2.0.6", "diffusion-check in the archive is no regular file (type 'p'"},
		{"member twice", "v2.0.7", "more than one entry named diffusion-check"},
		{"duplicate sum", "v2.0.8", "checksums.txt lists " + asset("v2.0.8") + " more than once; refusing an ambiguous sum"},
		{"oversize archive", "v2.0.9", asset("v2.0.9") + " is larger than 4096 bytes; refused"},
		{"oversize member", "v2.0.10", "diffusion-check in the archive is larger than 4096 bytes"},
		{"drip", "v2.0.11", "release v2.0.11 has no asset " + asset("v2.0.11") + " at "},
	}
	add("v2.0.1", tarball(t, member{name: "diffusion-check", kind: tar.TypeSymlink, link: outside}), "")
	add("v2.0.2", tarball(t, member{name: "diffusion-check", kind: tar.TypeSymlink, link: "../../../../" + outside}), "")
	add("v2.0.3", tarball(t, member{name: "README.md", kind: tar.TypeReg, data: []byte("x")},
		member{name: "diffusion-check", kind: tar.TypeLink, link: "README.md"}), "")
	add("v2.0.4", tarball(t, member{name: "diffusion-check/", kind: tar.TypeDir}, member{name: "diffusion-check/x", kind: tar.TypeReg, data: bin}), "")
	add("v2.0.5", tarball(t, member{name: "diffusion-check", kind: tar.TypeChar}), "")
	add("v2.0.6", tarball(t, member{name: "diffusion-check", kind: tar.TypeFifo}), "")
	add("v2.0.7", tarball(t, member{name: "diffusion-check", kind: tar.TypeReg, data: bin},
		member{name: "diffusion-check", kind: tar.TypeSymlink, link: outside}), "")
	sum8 := fmt.Sprintf("%x", sha256.Sum256(good))
	add("v2.0.8", good, fmt.Sprintf("%s  %s\n%064x  %s\n", sum8, asset("v2.0.8"), 9, asset("v2.0.8")))
	add("v2.0.9", good, "")
	add("v2.0.10", good, "")
	add("v2.0.11", good, "")
	rel.drip["/v2.0.11/"+asset("v2.0.11")] = true
	// An upper-case sum is the same sum.
	add("v2.1.0", good, fmt.Sprintf("%X  %s\n", sha256.Sum256(good), asset("v2.1.0")))
	srv := httptest.NewServer(rel)
	defer srv.Close()
	cache := t.TempDir()
	in := installer{t: t, cache: cache, base: srv.URL + "/releases/download", path: os.Getenv("PATH")}
	limits := []string{"INPUT_CHECK_FFMPEG=false", "SETUP_SPEED_TIME=2", "SETUP_MAX_TIME=20", "SETUP_RETRIES=0"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			extra := limits
			switch tc.name {
			case "oversize archive":
				extra = append(slices.Clone(limits), "SETUP_ARCHIVE_CAP=4096")
			case "oversize member":
				extra = append(slices.Clone(limits), "SETUP_MEMBER_CAP=4096")
			}
			got := in.run(tc.version, extra...)
			if got.code == 0 || !strings.Contains(got.output, "::error title=diffusion-check setup::") || !strings.Contains(got.output, tc.want) {
				t.Errorf("exit %d, want a refusal saying %q:\n%s", got.code, tc.want, got.output)
			}
			if got.githubPath != "" {
				t.Errorf("GITHUB_PATH written on a refusal: %q", got.githubPath)
			}
			if _, err := os.Stat(filepath.Join(cache, "diffusion-check", strings.TrimPrefix(tc.version, "v"))); err == nil {
				t.Errorf("the cache holds %s after a refusal", tc.version)
			}
		})
	}
	if st, err := os.Stat(outside); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the file outside was changed: %v %v", st.Mode(), err)
	}

	if got := in.run("v2.1.0", limits...); got.code != 0 || !strings.Contains(got.output, "SHA-256 "+sum8+" verified") {
		t.Fatalf("upper-case sum: exit %d\n%s", got.code, got.output)
	}
	entry := filepath.Join(cache, "diffusion-check", "2.1.0", arch)
	// A real install's binary replaced later, and an entry planted whole: neither is run.
	if err := os.WriteFile(filepath.Join(entry, "diffusion-check"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	got := in.run("v2.1.0", limits...)
	if got.code != 0 || strings.Contains(got.output, "planted") ||
		!strings.Contains(got.output, "is not trusted (its binary is not the release archive's): installing it again") ||
		!strings.Contains(got.githubOutputs, "cache_hit=false") {
		t.Errorf("replaced binary: exit %d\n%s", got.code, got.output)
	}
	planted := filepath.Join(cache, "diffusion-check", "2.0.1", arch)
	if err := os.MkdirAll(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planted, "diffusion-check"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planted+".complete", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got = in.run("v2.0.1", limits...)
	if got.code == 0 || strings.Contains(got.output, "planted") || !strings.Contains(got.output, "is not trusted (the entry holds no release archive)") {
		t.Errorf("planted entry: exit %d\n%s", got.code, got.output)
	}
}
