package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/diffusion-check/diffusion-check/results"
)

// workspaceUID and workspaceGID own the test workspaces, as the runner's user owns a real one.
const workspaceUID, workspaceGID = 12345, 12346

// ownedWorkspace is a temporary workspace owned by workspaceUID:workspaceGID; the tests that
// use it need root (CI runs them as root), and are skipped otherwise.
func ownedWorkspace(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: chown to another user")
	}
	ws := t.TempDir()
	if err := os.Chown(ws, workspaceUID, workspaceGID); err != nil {
		t.Fatal(err)
	}
	return ws
}

// owners maps every path under dir (relative, symlinks not followed) to its "uid:gid".
func owners(t *testing.T, dir string) map[string][2]uint32 {
	t.Helper()
	got := map[string][2]uint32{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got[rel] = [2]uint32{st.Uid, st.Gid}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ctime is a file's change time.
func ctime(t *testing.T, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Unix())
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGiveBackOwnsWhatTheStepWroteAndNothingElse: every file, folder and symlink root wrote
// in the workspace since the step began becomes the workspace owner's; a root file from before
// the step, another user's file, and whatever a symlink points at outside the workspace (a
// file, a folder and what it holds) keep their owners.
func TestGiveBackOwnsWhatTheStepWroteAndNothingElse(t *testing.T) {
	ws := ownedWorkspace(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret"))
	write(t, filepath.Join(outside, "dir", "inner"))
	write(t, filepath.Join(ws, "earlier-step"))
	// The kernel's file clock ticks coarsely: wait until it has passed the earlier file's
	// change time, so that "since" separates the two steps.
	before := ctime(t, filepath.Join(ws, "earlier-step"))
	probe := filepath.Join(t.TempDir(), "probe")
	for write(t, probe); !ctime(t, probe).After(before); write(t, probe) {
		runtime.Gosched()
	}
	since := before.Add(time.Nanosecond)

	for _, p := range []string{"out/results.json", "out/artifacts/case/request-1/output.png", "gt/case_1gpu.png", "diffusion-check-report.md"} {
		write(t, filepath.Join(ws, p))
	}
	write(t, filepath.Join(ws, "someone-else"))
	if err := os.Lchown(filepath.Join(ws, "someone-else"), 777, 777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "out", "file-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(ws, "out", "dir-link")); err != nil {
		t.Fatal(err)
	}

	n, uid, gid, err := giveBack(ws, since)
	if err != nil {
		t.Fatal(err)
	}
	if uid != workspaceUID || gid != workspaceGID {
		t.Errorf("owner %d:%d, want the workspace's %d:%d", uid, gid, workspaceUID, workspaceGID)
	}
	owner := [2]uint32{workspaceUID, workspaceGID}
	root := [2]uint32{0, 0}
	want := map[string][2]uint32{
		"earlier-step":                 root,
		"someone-else":                 {777, 777},
		"out":                          owner,
		"out/results.json":             owner,
		"out/artifacts":                owner,
		"out/artifacts/case":           owner,
		"out/artifacts/case/request-1": owner,
		"out/artifacts/case/request-1/output.png": owner,
		"out/file-link":             owner,
		"out/dir-link":              owner,
		"gt":                        owner,
		"gt/case_1gpu.png":          owner,
		"diffusion-check-report.md": owner,
	}
	if diff := cmp.Diff(want, owners(t, ws)); diff != "" {
		t.Errorf("owners under the workspace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][2]uint32{"secret": root, "dir": root, "dir/inner": root}, owners(t, outside)); diff != "" {
		t.Errorf("owners outside the workspace changed (-want +got):\n%s", diff)
	}
	if n != 11 {
		t.Errorf("changed %d entries, want 11", n)
	}
}

// TestGiveBackLeavesARootWorkspaceAlone: a workspace root owns needs nothing given back.
func TestGiveBackLeavesARootWorkspaceAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ws := t.TempDir()
	write(t, filepath.Join(ws, "out", "results.json"))
	n, _, _, err := giveBack(ws, time.Time{})
	if err != nil || n != 0 {
		t.Errorf("giveBack = %d, %v; want 0, nil", n, err)
	}
}

// TestActionGivesTheWorkspaceBackOnPassFailureAndCancel runs the container action's
// entrypoint in a workspace another user owns, as a self-hosted runner's is: results,
// artifacts, server logs and ground truth end that user's when the run passes, when a check
// fails, and when the job is cancelled (SIGTERM) mid-request.
func TestActionGivesTheWorkspaceBackOnPassFailureAndCancel(t *testing.T) {
	tests := []struct {
		name   string
		suite  string
		mode   string
		cancel bool
		exit   int
	}{
		{name: "pass, writing ground truth", mode: "gt", exit: 0, suite: `
ground_truth: gt
servers: {ref: {builtin: {step_ms: 1, load_ms: 10}}}
cases:
  - {id: fox, server: ref, modality: image, repeat: 2, request: {prompt: a fox, size: 64x64, seed: 1, steps: 2}}
`},
		{name: "a failed check", mode: "check", exit: 1, suite: `
servers: {ref: {builtin: {step_ms: 1, load_ms: 10, faults: [corrupt-at=1]}}}
cases:
  - {id: fox, server: ref, modality: image, repeat: 2, request: {prompt: a fox, size: 64x64, seed: 1, steps: 2}}
`},
		{name: "cancelled", mode: "check", cancel: true, exit: 3, suite: `
servers: {ref: {builtin: {step_ms: 100, load_ms: 10}}}
cases:
  - {id: slow, server: ref, modality: image, repeat: 3, request: {prompt: a fox, size: 64x64, seed: 1, steps: 10}}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := ownedWorkspace(t)
			if err := os.WriteFile(filepath.Join(ws, "suite.yaml"), []byte(tt.suite), 0o644); err != nil {
				t.Fatal(err)
			}
			// actions/checkout writes the checkout as the runner's user.
			if err := os.Lchown(filepath.Join(ws, "suite.yaml"), workspaceUID, workspaceGID); err != nil {
				t.Fatal(err)
			}
			files := t.TempDir() // $GITHUB_OUTPUT lives outside the workspace, the runner's
			cmd := exec.Command(filepath.Join(binDir, "diffusion-check"), "action")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(),
				"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+ws, "GITHUB_OUTPUT="+filepath.Join(files, "output"),
				"INPUT_COMMAND=run", "INPUT_SUITE=suite.yaml", "INPUT_MODE="+tt.mode, "INPUT_OUT=out")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tt.cancel {
				waitForRequest(t, cmd, filepath.Join(ws, "out"), &stderr)
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			code := 0
			if err := cmd.Wait(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			if code != tt.exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.exit, stderr.String())
			}
			got := owners(t, ws)
			if _, ok := got[filepath.Join("out", results.ResultsFile)]; !ok {
				t.Fatalf("no results.json written; stderr:\n%s", stderr.String())
			}
			if tt.mode == "gt" && got["gt"] == ([2]uint32{}) {
				t.Fatalf("no ground truth written; stderr:\n%s", stderr.String())
			}
			for p, o := range got {
				if o != [2]uint32{workspaceUID, workspaceGID} {
					t.Errorf("%s is owned by %d:%d, want the workspace's %d:%d", p, o[0], o[1], workspaceUID, workspaceGID)
				}
			}
		})
	}
}
