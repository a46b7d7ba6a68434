package baselines

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// node is a JSON value that keeps what encoding/json forgets and a reviewable diff needs:
// the order of object keys, the literal text of numbers and the line each value starts on.
// Marshal writes it back the way Python's json.dump(indent=4) does, so a file SGLang wrote
// comes back byte for byte.
type node struct {
	kind  byte // 'o' object, 'a' array, 'n' number, 's' string, 'b' bool, 'z' null
	keys  []string
	vals  []*node // object values, in key order; array items
	num   string  // number literal
	str   string  // decoded string
	b     bool
	line  int
	lines []int // object key lines, beside keys
}

// parseJSON decodes data, the contents of file, into a node tree. Duplicate keys are an
// error (a baseline file with two values for one metric is ambiguous), as is anything after
// the top value. The error is a *strictdecode.Error: "file:line: invalid JSON: …".
func parseJSON(file string, data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &jsonParser{file: file, dec: dec, data: data}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, p.invalid(p.line(), "data after the top-level value")
	}
	return n, nil
}

type jsonParser struct {
	file string
	dec  *json.Decoder
	data []byte
	// The decoder only moves forward: lines are counted from where the last count stopped.
	off, lines int
}

// line is the line of the decoder's position: the end of the last token read.
func (p *jsonParser) line() int {
	off := min(int(p.dec.InputOffset()), len(p.data))
	if off > p.off {
		p.lines += bytes.Count(p.data[p.off:off], []byte{'\n'})
		p.off = off
	}
	return 1 + p.lines
}

// failed is the error of a token that could not be read at the decoder's position.
func (p *jsonParser) failed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.invalid(p.line(), "unexpected end of JSON")
	}
	return p.invalid(p.line(), err.Error())
}

// invalid is the error of data that is not JSON, at line.
func (p *jsonParser) invalid(line int, msg string) error {
	return &strictdecode.Error{File: p.file, Line: line, Msg: "invalid JSON: " + msg}
}

func (p *jsonParser) value() (*node, error) {
	tok, err := p.dec.Token()
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, p.invalid(1+bytes.Count(p.data[:min(int(syn.Offset), len(p.data))], []byte{'\n'}), err.Error())
		}
		return nil, p.failed(err)
	}
	return p.fromToken(tok)
}

func (p *jsonParser) fromToken(tok json.Token) (*node, error) {
	n := &node{line: p.line()}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = 'o'
			seen := map[string]int{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.failed(err)
				}
				k := kt.(string)
				line := p.line()
				if first, dup := seen[k]; dup {
					return nil, &strictdecode.Error{File: p.file, Line: line, Msg: fmt.Sprintf("duplicate key %q, first at line %d", k, first)}
				}
				seen[k] = line
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.keys, n.vals, n.lines = append(n.keys, k), append(n.vals, v), append(n.lines, line)
			}
		case '[':
			n.kind = 'a'
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, p.failed(err)
		}
	case json.Number:
		n.kind, n.num = 'n', t.String()
	case string:
		n.kind, n.str = 's', t
	case bool:
		n.kind, n.b = 'b', t
	case nil:
		n.kind = 'z'
	}
	return n, nil
}

// get returns the value of key in an object node, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// lineOf is the line of key in an object node, or of the node itself.
func (n *node) lineOf(key string) int {
	for i, k := range n.keys {
		if k == key {
			return n.lines[i]
		}
	}
	return n.line
}

// set replaces the value of key, or appends key at the end of the object.
func (n *node) set(key string, v *node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys, n.vals, n.lines = append(n.keys, key), append(n.vals, v), append(n.lines, 0)
}

// setSorted sets key, inserting a new key in sorted position when the object's keys are
// sorted (as SGLang keeps its top-level memory maps), else at the end.
func (n *node) setSorted(key string, v *node) {
	if n.get(key) != nil || !sort.StringsAreSorted(n.keys) {
		n.set(key, v)
		return
	}
	i := sort.SearchStrings(n.keys, key)
	n.keys = append(n.keys[:i], append([]string{key}, n.keys[i:]...)...)
	n.vals = append(n.vals[:i], append([]*node{v}, n.vals[i:]...)...)
	n.lines = append(n.lines[:i], append([]int{0}, n.lines[i:]...)...)
}

func objectNode() *node { return &node{kind: 'o'} }

func stringNode(s string) *node { return &node{kind: 's', str: s} }

// numberNode formats v as Python's repr of a float does for the values a baseline holds:
// the shortest text that reads back as v, always with a decimal point.
func numberNode(v float64) *node { return &node{kind: 'n', num: pyFloat(v)} }

func pyFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e16 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	a := math.Abs(v)
	if a >= 1e-4 && a < 1e16 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // Python: 1e-05, Go: 1e-05
	return s
}

// float returns the value of a number node.
func (n *node) float() (float64, error) { return strconv.ParseFloat(n.num, 64) }

// marshal writes the tree as json.dump(obj, f, indent=4) does, plus a final newline.
func (n *node) marshal() []byte {
	var b bytes.Buffer
	n.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *node) write(b *bytes.Buffer, depth int) {
	ind := func(d int) { b.WriteString(strings.Repeat("    ", d)) }
	switch n.kind {
	case 'o':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(",\n")
			}
			ind(depth + 1)
			writePyString(b, k)
			b.WriteString(": ")
			n.vals[i].write(b, depth+1)
		}
		b.WriteByte('\n')
		ind(depth)
		b.WriteByte('}')
	case 'a':
		if len(n.vals) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, v := range n.vals {
			if i > 0 {
				b.WriteString(",\n")
			}
			ind(depth + 1)
			v.write(b, depth+1)
		}
		b.WriteByte('\n')
		ind(depth)
		b.WriteByte(']')
	case 'n':
		b.WriteString(n.num)
	case 's':
		writePyString(b, n.str)
	case 'b':
		b.WriteString(strconv.FormatBool(n.b))
	default:
		b.WriteString("null")
	}
}

// writePyString writes s as Python's json module does with ensure_ascii=True.
func writePyString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e && r < 0x10000 || r == utf8.RuneError:
			fmt.Fprintf(b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// decoder collects the problems of one file, each naming its line and key path.
type decoder struct {
	strictdecode.Problems
}

func kindName(n *node) string {
	switch n.kind {
	case 'o':
		return "an object"
	case 'a':
		return "a list"
	case 'n':
		return "a number"
	case 's':
		return "a string"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// object returns n's pairs when n is an object, else reports the problem.
func (d *decoder) object(n *node, keyPath string) bool {
	if n.kind != 'o' {
		d.Addf(n.line, keyPath, "want an object, got %s", kindName(n))
		return false
	}
	return true
}

// number reads a number node; a negative value is an error for every metric and tolerance.
func (d *decoder) number(n *node, keyPath string) (float64, bool) {
	if n.kind != 'n' {
		d.Addf(n.line, keyPath, "want a number, got %s", kindName(n))
		return 0, false
	}
	v, err := n.float()
	if err != nil || v < 0 {
		d.Addf(n.line, keyPath, "want a number ≥ 0, got %s", n.num)
		return 0, false
	}
	return v, true
}

// optNumber reads an optional number: absent or null is nil, as SGLang's optional_float
// (ScenarioConfig.from_dict) reads None.
func (d *decoder) optNumber(obj *node, key, keyPath string) *float64 {
	n := obj.get(key)
	if n == nil || n.kind == 'z' {
		return nil
	}
	if v, ok := d.number(n, keyPath+"."+key); ok {
		return &v
	}
	return nil
}
