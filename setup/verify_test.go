package setup

import (
	"crypto/sha256"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestInstallVerify: how the installer verifies an archive beyond its SHA-256 (the verify
// input). With a GitHub CLI (a fake here, which records its arguments and token) and a token,
// auto runs `gh attestation verify <archive> --repo <the action's repository>` and says so; a
// failed verification refuses the binary. Without gh, or without a token, auto falls back to
// the checksum and says why; attestation then fails; checksum never calls gh. A checksums.txt
// in the action's own folder that lists the asset is the sum used, and the release's is not
// fetched: an archive that is not the pinned bits is refused even when the release's sums agree
// with it.
func TestInstallVerify(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the installer is tested on linux")
	}
	asset := fmt.Sprintf("diffusion-check_1.3.0_linux_%s.tar.gz", runtime.GOARCH)
	other := fmt.Sprintf("diffusion-check_1.3.1_linux_%s.tar.gz", runtime.GOARCH)
	tgz := archive(t, buildBinary(t))
	sum := fmt.Sprintf("%x", sha256.Sum256(tgz)) // what the action's own checksums.txt pins
	rel := &release{hits: map[string]int{}, files: map[string][]byte{}}
	rel.publish("/v1.3.0", asset, tgz)
	rel.publish("/v1.3.1", other, tgz)
	srv := httptest.NewServer(rel)
	defer srv.Close()

	bin := t.TempDir()
	record := filepath.Join(bin, "calls")
	gh := filepath.Join(bin, "gh")
	script := "#!/bin/sh\necho \"$* token=$GH_TOKEN\" >>" + record + "\n" +
		"if [ -n \"$FAKE_GH_FAIL\" ]; then echo 'X Verification failed: no attestation matched' >&2; exit 1; fi\n" +
		"echo 'Loaded digest sha256:...'; echo '✓ Verification succeeded!'\n"
	if err := os.WriteFile(gh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := func() string {
		b, _ := os.ReadFile(record)
		_ = os.Remove(record)
		return string(b)
	}
	in := installer{t: t, base: srv.URL, path: os.Getenv("PATH")}
	base := []string{"INPUT_CHECK_FFMPEG=false", "ATTESTATION_REPO=acme/diffusion-check"}
	for _, tc := range []struct {
		name     string
		env      []string
		fails    bool
		want     string
		ghCalled bool
	}{
		{"auto with gh and a token", []string{"SETUP_GH=" + gh, "INPUT_TOKEN=t0k"}, false,
			"verified by attestation (gh attestation verify " + asset + " --repo acme/diffusion-check) and checksum", true},
		{"auto without gh", []string{"SETUP_GH=" + filepath.Join(bin, "no-gh"), "INPUT_TOKEN=t0k"}, false,
			"verified by checksum only (gh is not on PATH, so gh attestation verify did not run", false},
		{"auto without a token", []string{"SETUP_GH=" + gh}, false, "verified by checksum only (no token was given", false},
		{"attestation without gh", []string{"INPUT_VERIFY=attestation", "SETUP_GH=" + filepath.Join(bin, "no-gh"), "INPUT_TOKEN=t0k"}, true,
			"verify: attestation needs the GitHub CLI (gh) on PATH", false},
		{"attestation without a token", []string{"INPUT_VERIFY=attestation", "SETUP_GH=" + gh}, true, "verify: attestation needs a token", false},
		{"checksum", []string{"INPUT_VERIFY=checksum", "SETUP_GH=" + gh, "INPUT_TOKEN=t0k"}, false,
			"verified by checksum (verify: checksum); no attestation checked", false},
		{"a failed attestation", []string{"SETUP_GH=" + gh, "INPUT_TOKEN=t0k", "FAKE_GH_FAIL=1"}, true,
			"gh attestation verify --repo acme/diffusion-check failed; the binary is refused: X Verification failed", true},
		{"an unknown mode", []string{"INPUT_VERIFY=maybe"}, true, "verify 'maybe': want auto, attestation or checksum", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.cache = t.TempDir()
			got := in.run("v1.3.0", append(append([]string{}, base...), tc.env...)...)
			if (got.code != 0) != tc.fails || !strings.Contains(got.output, tc.want) {
				t.Errorf("exit %d, want failure %t saying %q:\n%s", got.code, tc.fails, tc.want, got.output)
			}
			c := calls()
			entry := filepath.Join(in.cache, "diffusion-check", "1.3.0", runtime.GOARCH, asset)
			if want := "attestation verify " + entry + " --repo acme/diffusion-check token=t0k\n"; tc.ghCalled && c != want {
				t.Errorf("gh called with %q, want %q", c, want)
			} else if !tc.ghCalled && c != "" {
				t.Errorf("gh called with %q, want no call", c)
			}
		})
	}

	// The sums of the action's own commit: the release's checksums.txt is not asked for, and
	// bits other than the pinned ones are refused.
	action := t.TempDir()
	pin := func(s string) {
		if err := os.WriteFile(filepath.Join(action, "checksums.txt"), []byte(s+"  "+asset+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pin(sum)
	in.cache = t.TempDir()
	before := rel.hitsOf("/v1.3.0/checksums.txt")
	got := in.run("v1.3.0", "INPUT_CHECK_FFMPEG=false", "GITHUB_ACTION_PATH="+action, "INPUT_VERIFY=checksum")
	if got.code != 0 || !strings.Contains(got.output, "verified against the checksums.txt this action's commit carries ("+action+"/checksums.txt)") ||
		rel.hitsOf("/v1.3.0/checksums.txt") != before {
		t.Errorf("pinned sums: exit %d, %d requests for the release's checksums.txt:\n%s", got.code, rel.hitsOf("/v1.3.0/checksums.txt")-before, got.output)
	}
	pin(fmt.Sprintf("%064x", 9))
	in.cache = t.TempDir()
	got = in.run("v1.3.0", "INPUT_CHECK_FFMPEG=false", "GITHUB_ACTION_PATH="+action, "INPUT_VERIFY=checksum")
	if got.code == 0 || !strings.Contains(got.output, "the checksums.txt this action's commit carries ("+action+"/checksums.txt) says "+fmt.Sprintf("%064x", 9)) {
		t.Errorf("other bits than the pinned: exit %d:\n%s", got.code, got.output)
	}
	// Another version than the pinned one: its release's sums.
	in.cache = t.TempDir()
	if got := in.run("v1.3.1", "INPUT_CHECK_FFMPEG=false", "GITHUB_ACTION_PATH="+action, "INPUT_VERIFY=checksum"); got.code != 0 ||
		!strings.Contains(got.output, "verified against the release's checksums.txt") {
		t.Errorf("another version: exit %d:\n%s", got.code, got.output)
	}
}

// TestInstallRefusesOtherLibcs: on musl, or a glibc older than 2.34, the installer says what it
// found and what the binaries need before it downloads anything, instead of a loader error.
func TestInstallRefusesOtherLibcs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the installer is tested on linux")
	}
	rel := &release{hits: map[string]int{}, files: map[string][]byte{}}
	srv := httptest.NewServer(rel)
	defer srv.Close()
	in := installer{t: t, base: srv.URL, path: os.Getenv("PATH"), cache: t.TempDir()}
	for libc, want := range map[string]string{
		"musl":        "this runner's C library is musl (Alpine?), and diffusion-check's Linux binaries need glibc 2.34 or newer",
		"glibc 2.31":  "this runner has glibc 2.31, and diffusion-check's Linux binaries need glibc 2.34 or newer",
		"glibc 1.99":  "this runner has glibc 1.99",
		"glibc 2.33b": "this runner has glibc 2.33b",
	} {
		got := in.run("v1.3.0", "SETUP_LIBC="+libc)
		if got.code == 0 || !strings.Contains(got.output, want) {
			t.Errorf("%s: exit %d, want a refusal saying %q:\n%s", libc, got.code, want, got.output)
		}
	}
	if n := rel.requests(); n != 0 {
		t.Errorf("%d requests before the refusals, want none", n)
	}
	// glibc 2.34 and newer go on to the download (here: no such release).
	for _, libc := range []string{"glibc 2.34", "glibc 2.39", "glibc 3.0"} {
		got := in.run("v1.3.0", "SETUP_LIBC="+libc)
		if strings.Contains(got.output, "need glibc 2.34") || !strings.Contains(got.output, "could not download checksums.txt") {
			t.Errorf("%s: refused, or not tried:\n%s", libc, got.output)
		}
	}
}

// TestInstallFromTheActionsRepository: without base_url, a fork's setup action installs the
// fork's releases from the runner's GitHub, and verifies the fork's attestations: the
// repository is read from the folder the runner checked the action out into.
func TestInstallFromTheActionsRepository(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the installer is tested on linux")
	}
	asset := fmt.Sprintf("diffusion-check_1.3.0_linux_%s.tar.gz", runtime.GOARCH)
	rel := &release{hits: map[string]int{}, files: map[string][]byte{}}
	rel.publish("/acme/dc-fork/releases/download/v1.3.0", asset, archive(t, buildBinary(t)))
	srv := httptest.NewServer(rel)
	defer srv.Close()
	bin := t.TempDir()
	record := filepath.Join(bin, "calls")
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\necho \"$*\" >"+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := installer{t: t, path: os.Getenv("PATH"), cache: t.TempDir()}
	got := in.run("v1.3.0", "INPUT_CHECK_FFMPEG=false", "GITHUB_SERVER_URL="+srv.URL, "GITHUB_ACTION_PATH=/home/runner/work/_actions/acme/dc-fork/v1.3.0/setup",
		"SETUP_GH="+filepath.Join(bin, "gh"), "INPUT_TOKEN=t")
	if got.code != 0 || !strings.Contains(got.output, "--repo acme/dc-fork") {
		t.Fatalf("exit %d:\n%s", got.code, got.output)
	}
	if c, _ := os.ReadFile(record); !strings.HasSuffix(strings.TrimSpace(string(c)), "--repo acme/dc-fork") {
		t.Errorf("gh called with %q, want the fork's repository", c)
	}
}
