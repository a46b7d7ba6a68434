package results

import "fmt"

// NamePattern is what a case id, a server name and a lane name may be: they become folder
// names and status contexts, and they are shown in PR comments and logs, so no separators,
// no leading dot, no spaces, no markup.
const NamePattern = "[A-Za-z0-9][A-Za-z0-9_.-]*"

// maxNameLen bounds a name, so that one cannot crowd a status context or a heading.
const maxNameLen = 100

// ValidName checks s against NamePattern and maxNameLen.
func ValidName(s string) error {
	if s == "" {
		return fmt.Errorf("empty; want %s", NamePattern)
	}
	if len(s) > maxNameLen {
		return fmt.Errorf("%d bytes, more than %d", len(s), maxNameLen)
	}
	for i, r := range s {
		alnum := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		if !alnum && (i == 0 || r != '_' && r != '.' && r != '-') {
			return fmt.Errorf("%q does not match %s", s, NamePattern)
		}
	}
	return nil
}
