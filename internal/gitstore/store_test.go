package gitstore

import (
	"strings"
	"testing"
)

// TestCheckRepo: https, file:// and local paths pass; every other transport, credentials in a
// URL and what git could take for an option are refused, each saying why.
func TestCheckRepo(t *testing.T) {
	for repo, want := range map[string]string{
		"https://github.com/sgl-project/ci-data-diffusion":     "",
		"https://github.com/sgl-project/ci-data-diffusion.git": "",
		"file:///srv/git/store.git":                            "",
		"/srv/git/store.git":                                   "",
		"stores/gt.git":                                        "",
		"git@github.com:sgl-project/ci-data-diffusion.git":     "is an ssh or remote-helper address",
		"ext::sh -c touch% /tmp/pwned":                         "holds a space or a control character",
		"ext::sh":                                              "is an ssh or remote-helper address",
		"ssh://git@github.com/x/y":                             "ssh:// is not allowed",
		"http://github.com/x/y":                                "http:// is not allowed",
		"git://github.com/x/y":                                 "git:// is not allowed",
		"https://user:token@github.com/x/y":                    `"https://user:xxxxx@github.com/x/y" holds credentials`,
		"http://user:token@github.com/x y":                     `"http://user:xxxxx@github.com/x%20y" holds a space`,
		"https:///x":                                           "names no host",
		"file://host/srv/x.git":                                "a file:// URL names an absolute local path",
		"--upload-pack=touch":                                  "starts with '-'",
		"https://github.com/x\n/y":                             "holds a space or a control character",
	} {
		err := CheckRepo(repo)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckRepo(%q) = %v, want nil", repo, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("CheckRepo(%q) = %v, want an error saying %q", repo, err, want)
		case err != nil && strings.Contains(err.Error(), "token@"):
			t.Errorf("CheckRepo(%q) shows the password: %v", repo, err)
		}
	}
}

// TestCheckCommitAndPath: only the full lower-case SHA pins; a path is folders inside the
// repository, of names a sparse-checkout pattern and a cache entry take as they are.
func TestCheckCommitAndPath(t *testing.T) {
	sha := "15b30030ef980756788ab40072f9223fe21a5526" // SGLang's pin, test_utils.py @ cce0a1244
	for c, want := range map[string]string{
		sha:                  "",
		sha[:12]:             "is a short SHA",
		strings.ToUpper(sha): "in lower case",
		"main":               "is not a commit SHA (a branch or a tag moves)",
		"v1.0.0":             "is not a commit SHA",
		sha + "0":            "is not a commit SHA",
		"":                   "is not a commit SHA",
	} {
		if err := CheckCommit(c); (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckCommit(%q) = %v, want %q", c, err, want)
		}
	}
	for p, want := range map[string]string{
		"":                            "",
		"diffusion-ci/consistency_gt": "",
		".hidden/x..y/...":            "",
		".git":                        "names git's own folder .git",
		"diffusion-ci/.GIT/objects":   "names git's own folder .git",
		"../x":                        "leaves the repository",
		"a/../../x":                   "leaves the repository",
		"/etc":                        "is absolute",
		"a//b":                        "has an empty or \".\" part",
		"./a":                         "has an empty or \".\" part",
		"a/":                          "drop the trailing /",
		`a\b`:                         "separate folders with /",
		"a b":                         "may hold only letters, digits",
		"a*":                          "may hold only letters, digits",
		"a+b":                         "may hold only letters, digits",
	} {
		if err := CheckPath(p); (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckPath(%q) = %v, want %q", p, err, want)
		}
	}
}
