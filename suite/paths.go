package suite

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// paths reads the `paths:` of a server or case: globs over repository paths for test-impact
// selection (selection). Each is checked here, so that a typo fails when the suite is
// read rather than silently selecting nothing in every pull request.
func (d *decoder) paths(o *object) []string {
	v, field, ok := o.get("paths")
	if !ok {
		return nil
	}
	globs, ok := d.strings(v, field)
	if !ok {
		return nil
	}
	positive := false
	for i, g := range globs {
		f := fmt.Sprintf("%s[%d]", field, i)
		line := strictdecode.Deref(v).Content[i].Line
		if msg := globProblem(g); msg != "" {
			d.Addf(line, f, "%s", msg)
			continue
		}
		positive = positive || !strings.HasPrefix(g, "!")
	}
	if len(globs) > 0 && !positive {
		d.Addf(v.Line, field, "only negations (\"!...\"): they can take paths out, but nothing puts any in; add the globs that select")
	}
	return globs
}

// globProblem says what is wrong with one glob of `paths:`, or "" when it is fine. Globs are
// matched against repository-relative, slash-separated paths, so an absolute path, "./", ".."
// or a backslash separator could never match anything.
func globProblem(g string) string {
	p := strings.TrimPrefix(g, "!")
	switch {
	case p == "":
		return "empty glob"
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("%q: globs are relative to the repository root already; drop the leading \"/\"", g)
	case p == "." || strings.HasPrefix(p, "./") || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Sprintf("%q: repository paths have no \".\" or \"..\" parts; write the path from the repository root", g)
	case strings.HasSuffix(p, "/"):
		return fmt.Sprintf("%q: a changed path is a file; write %q for everything under the folder", g, g+"**")
	case !doublestar.ValidatePattern(p):
		return fmt.Sprintf("%q: not a valid glob (an unclosed [ or {, or a trailing \\)", g)
	}
	return ""
}
