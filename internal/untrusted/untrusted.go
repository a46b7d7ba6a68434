package untrusted

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Hidden reports the characters that Visible shows as escapes: every control character but
// the line break and the tab, the bidirectional formatting characters (a "Trojan source":
// U+202A–202E embeddings and overrides, U+2066–2069 isolates, U+200E/200F marks, U+061C), and
// U+2028/U+2029, which some viewers break a line at.
func Hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// Escape is the visible form of one character: "\x1b" below U+0080, "\u202e" above.
func Escape(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// Visible is s with every Hidden character, and every byte that is not UTF-8, shown as an
// escape ("\x00", "\u202e", "\xff"); everything else, line breaks included, as it is.
func Visible(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || Hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Hidden(r):
			b.WriteString(Escape(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Writer passes what is written to it on to a log (stdout or stderr of a command that may
// run in GitHub Actions) so that no line of it runs as a workflow command, and no character
// of it hides: Hidden characters and bytes that are not UTF-8 are shown as escapes (Visible),
// "##[" (the runner obeys the older syntax anywhere in a line) is written "##\u005b" (which
// reads as what it is, and decodes to "[" inside a JSON string, so JSON output stays valid
// JSON of the same value), and a line
// whose first character after blanks is ":" (the runner trims leading white space, then
// reads "::cmd::") gets a backslash before it. The program's own workflow commands go to
// Raw. It works on the stream, whatever the writes' boundaries, and is safe for concurrent
// use. https://github.com/actions/runner/blob/main/src/Runner.Common/ActionCommand.cs
// (TryParseV2 trims and needs "::" first; TryParse finds "##[" anywhere).
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	atStart bool   // only blanks since the last line break
	hashes  int    // '#' written just before, in a row
	carry   []byte // the start of a character split across writes
	buf     []byte
}

// NewWriter is a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, atStart: true} }

// Raw is the stream under w, for the program's own workflow commands; w itself when it is
// not a *Writer.
func Raw(w io.Writer) io.Writer {
	if u, ok := w.(*Writer); ok {
		return u.w
	}
	return w
}

// Write writes p shown safely; it reports len(p) written when the stream took all of it.
func (u *Writer) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.buf = u.buf[:0]
	data := p
	if len(u.carry) > 0 {
		data = append(u.carry, p...)
		u.carry = nil
	}
	for i := 0; i < len(data); {
		if !u.atStart {
			// Printable ASCII other than '#' and '[' passes as it is: the common case, in bulk.
			j := i
			for j < len(data) && data[j] >= 0x20 && data[j] < 0x7f && data[j] != '#' && data[j] != '[' {
				j++
			}
			if j > i {
				u.buf = append(u.buf, data[i:j]...)
				u.hashes = 0
				i = j
				continue
			}
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 && !utf8.FullRune(data[i:]) {
			u.carry = append([]byte(nil), data[i:]...) // finished by the next write
			break
		}
		u.rune(r, n, data[i:i+n])
		i += n
	}
	if _, err := u.w.Write(u.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// rune appends one character (or one byte that is not UTF-8) to u.buf, shown safely.
func (u *Writer) rune(r rune, n int, raw []byte) {
	switch {
	case r == '\n':
		u.buf = append(u.buf, '\n')
		u.atStart, u.hashes = true, 0
		return
	case r == utf8.RuneError && n == 1:
		u.buf = fmt.Appendf(u.buf, `\x%02x`, raw[0])
	case Hidden(r):
		u.buf = append(u.buf, Escape(r)...)
	case ignorable(r):
		// .NET compares culture-sensitively: a zero-width character between "#", "#" and
		// "[", or before "::", does not keep the runner from reading a command.
		u.buf = append(u.buf, raw...)
		return
	case u.atStart && unicode.IsSpace(r):
		u.buf = append(u.buf, raw...)
		return // still at the start
	case u.atStart && r == ':':
		u.buf = append(u.buf, '\\', ':')
	case r == '[' && u.hashes >= 2:
		u.buf = append(u.buf, `\u005b`...)
	default:
		u.buf = append(u.buf, raw...)
	}
	u.atStart = false
	if r == '#' {
		u.hashes++
	} else {
		u.hashes = 0
	}
}

// ignorable reports the default-ignorable characters (format characters such as U+200B,
// variation selectors): a culture-sensitive comparison skips them.
func ignorable(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}
