package strictdecode

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem in a file. Problems.Err joins every problem found with errors.Join, so
// a caller can print them all at once or pick them out with errors.As.
type Error struct {
	File  string // the file, as given to the loader
	Line  int    // 1-based line of the offending key or value; 0 when unknown
	Field string // e.g. "cases[2].repeat"; empty for problems with the file as a whole
	Msg   string
}

// Error formats the problem as "file:line: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Problems collects the problems of one file. The zero value with File set is ready to use.
type Problems struct {
	File string
	list []*Error
}

// Addf records a problem at line (1-based) and field (a key path, or "" for the file as a
// whole).
func (p *Problems) Addf(line int, field, format string, args ...any) {
	p.list = append(p.list, &Error{File: p.File, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Len is the number of problems recorded so far.
func (p *Problems) Len() int { return len(p.list) }

// Err returns the problems in line order, so that they read like the file, each listed once
// (a YAML anchor reached twice reports its problems once); nil when there are none.
func (p *Problems) Err() error {
	sorted := slices.Clone(p.list)
	slices.SortStableFunc(sorted, func(a, b *Error) int { return a.Line - b.Line })
	var errs []error
	seen := map[Error]bool{}
	for _, e := range sorted {
		if !seen[*e] {
			seen[*e] = true
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}
