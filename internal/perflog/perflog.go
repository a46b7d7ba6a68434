package perflog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/clock"
	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/results"
)

// requestIDPattern finds a plain request id in a line that does not decode.
var requestIDPattern = regexp.MustCompile(`"request_id"\s*:\s*"([^"\\]+)"`)

// Record is one line of SGLang's performance.log (spec §3). Unknown fields are ignored:
// records evolve between server versions.
type Record struct {
	RequestID       string                    `json:"request_id"`
	Timestamp       string                    `json:"timestamp"`
	Tag             string                    `json:"tag"`
	CommitHash      string                    `json:"commit_hash"`
	Stages          []Stage                   `json:"stages"`
	Steps           []float64                 `json:"steps"`
	TotalDurationMs float64                   `json:"total_duration_ms"`
	MemorySnapshots map[string]MemorySnapshot `json:"memory_snapshots"`
}

// Stage is one stage timing of a perf record.
type Stage struct {
	Name            string  `json:"name"`
	ExecutionTimeMs float64 `json:"execution_time_ms"`
}

// MemorySnapshot is one memory checkpoint of a perf record. Pointers tell "not reported"
// apart from zero.
type MemorySnapshot struct {
	AllocatedMB     *float64 `json:"allocated_mb"`
	ReservedMB      *float64 `json:"reserved_mb"`
	PeakAllocatedMB *float64 `json:"peak_allocated_mb"`
	PeakReservedMB  *float64 `json:"peak_reserved_mb"`
	PeakHostAnonMB  *float64 `json:"peak_host_anon_mb"`
}

// MalformedRecordError is a performance.log line that cannot be read as a record: Problems
// name each field and the value found. RequestID is set when the line names its request,
// which then gets this error instead of "no record".
type MalformedRecordError struct {
	Path      string // the performance.log file, when known
	Line      int    // 1-based line in it, when known
	RequestID string
	Problems  []string
}

// Error says where the record is, whose it is, and what is wrong with it.
func (e *MalformedRecordError) Error() string {
	var where string
	if e.Path != "" {
		where = fmt.Sprintf("%s:%d: ", e.Path, e.Line)
	}
	who := "record"
	if e.RequestID != "" {
		who = fmt.Sprintf("record for request_id %q", e.RequestID)
	}
	return where + "malformed " + who + ": " + strings.Join(e.Problems, "; ")
}

// ParseLine decodes one performance.log line. A line without a request id is an error:
// it cannot be joined to a request. A line whose fields have the wrong type, or values that
// are not finite (Python's json writes NaN and Infinity), is a *MalformedRecordError naming
// every such field and its value, and the request id when the line has one.
func ParseLine(line []byte) (Record, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(quoteNonFinite(line), &top); err != nil || top == nil {
		if err == nil {
			err = errors.New("null")
		}
		return Record{}, &MalformedRecordError{RequestID: requestIDIn(line),
			Problems: []string{fmt.Sprintf("not a JSON object (%v): %s", err, excerpt(line))}}
	}
	var r Record
	d := &recordDecoder{}
	if raw, ok := top["request_id"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &r.RequestID); err != nil {
			d.bad("request_id", raw, "want a string")
		}
	}
	if r.RequestID == "" && len(d.problems) == 0 {
		return Record{}, errors.New("record has no request_id")
	}
	for key, dst := range map[string]*string{"timestamp": &r.Timestamp, "tag": &r.Tag, "commit_hash": &r.CommitHash} {
		// Metadata only: a value of another type is not worth failing a record over.
		if raw, ok := top[key]; ok {
			_ = json.Unmarshal(raw, dst)
		}
	}
	if raw, ok := top["total_duration_ms"]; ok && !isNull(raw) {
		r.TotalDurationMs = d.number("total_duration_ms", raw)
	}
	if raw, ok := top["steps"]; ok && !isNull(raw) {
		for i, v := range d.list("steps", raw) {
			r.Steps = append(r.Steps, d.number(fmt.Sprintf("steps[%d]", i), v))
		}
	}
	if raw, ok := top["stages"]; ok && !isNull(raw) {
		r.Stages = d.stages(raw)
	}
	if raw, ok := top["memory_snapshots"]; ok && !isNull(raw) {
		r.MemorySnapshots = d.memorySnapshots(raw)
	}
	if len(d.problems) > 0 {
		slices.Sort(d.problems)
		return Record{}, &MalformedRecordError{RequestID: r.RequestID, Problems: d.problems}
	}
	return r, nil
}

// recordDecoder collects the problems of one record, each naming its field and value.
type recordDecoder struct{ problems []string }

// stages reads a record's "stages" list.
func (d *recordDecoder) stages(raw json.RawMessage) []Stage {
	var out []Stage
	for i, v := range d.list("stages", raw) {
		key := fmt.Sprintf("stages[%d]", i)
		obj := d.object(key, v)
		if obj == nil {
			continue
		}
		var st Stage
		if err := json.Unmarshal(obj["name"], &st.Name); err != nil || st.Name == "" {
			d.bad(key+".name", obj["name"], "want a stage name")
		}
		st.ExecutionTimeMs = d.number(key+".execution_time_ms", obj["execution_time_ms"])
		out = append(out, st)
	}
	return out
}

// memorySnapshots reads a record's "memory_snapshots" object; nil when it reports none.
func (d *recordDecoder) memorySnapshots(raw json.RawMessage) map[string]MemorySnapshot {
	var out map[string]MemorySnapshot
	for name, v := range d.object("memory_snapshots", raw) {
		if isNull(v) {
			continue // not reported
		}
		key := "memory_snapshots." + name
		obj := d.object(key, v)
		if obj == nil {
			continue
		}
		var ms MemorySnapshot
		for field, dst := range map[string]**float64{"allocated_mb": &ms.AllocatedMB, "reserved_mb": &ms.ReservedMB,
			"peak_allocated_mb": &ms.PeakAllocatedMB, "peak_reserved_mb": &ms.PeakReservedMB, "peak_host_anon_mb": &ms.PeakHostAnonMB} {
			if fv, ok := obj[field]; ok && !isNull(fv) {
				x := d.number(key+"."+field, fv)
				*dst = &x
			}
		}
		if out == nil {
			out = map[string]MemorySnapshot{}
		}
		out[name] = ms
	}
	return out
}

func (d *recordDecoder) bad(field string, raw json.RawMessage, want string) {
	if raw == nil {
		d.problems = append(d.problems, field+": missing")
		return
	}
	d.problems = append(d.problems, fmt.Sprintf("%s: %s, got %s", field, want, excerpt(raw)))
}

// number reads a finite number; anything else is a problem (NaN 0 is returned).
func (d *recordDecoder) number(field string, raw json.RawMessage) float64 {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && slices.Contains(nonFinite, s) {
			d.problems = append(d.problems, fmt.Sprintf("%s: %s is not a finite number", field, s))
		} else {
			d.bad(field, raw, "want a number")
		}
		return 0
	}
	return v
}

func (d *recordDecoder) list(field string, raw json.RawMessage) []json.RawMessage {
	var l []json.RawMessage
	if err := json.Unmarshal(raw, &l); err != nil {
		d.bad(field, raw, "want a list")
	}
	return l
}

func (d *recordDecoder) object(field string, raw json.RawMessage) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil || o == nil {
		d.bad(field, raw, "want an object")
		return nil
	}
	return o
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// excerpt is a value as it appears in the line, cut short.
func excerpt(b []byte) string {
	const maxLen = 80
	s := string(bytes.TrimSpace(b))
	if len(s) > maxLen {
		return s[:maxLen] + "…"
	}
	return s
}

// nonFinite are the tokens Python's json module writes for float('nan') and ±float('inf').
var nonFinite = []string{"NaN", "Infinity", "-Infinity"}

// quoteNonFinite turns the bare NaN, Infinity and -Infinity tokens of a line written by
// Python's json module into strings, so that the line decodes and the field holding one can
// be named.
func quoteNonFinite(line []byte) []byte {
	if !bytes.Contains(line, []byte("NaN")) && !bytes.Contains(line, []byte("Infinity")) {
		return line
	}
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		matched := false
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(line[i:], []byte(tok)) {
				out = append(out, '"')
				out = append(out, tok...)
				out = append(out, '"')
				i += len(tok) - 1
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, c)
		}
	}
	return out
}

// requestIDIn finds the request id of a line that is not valid JSON (cut short, say), so that
// its request learns that its record is malformed rather than missing.
func requestIDIn(line []byte) string {
	m := requestIDPattern.FindSubmatch(line)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// StageTimes converts the record's stage list, keeping the pipeline order. A stage reported
// twice (a pipeline that loops) is summed.
func (r Record) StageTimes() results.Stages {
	var out results.Stages
	idx := map[string]int{}
	for _, s := range r.Stages {
		if i, ok := idx[s.Name]; ok {
			out[i].Ms += s.ExecutionTimeMs
			continue
		}
		idx[s.Name] = len(out)
		out = append(out, results.Stage{Name: s.Name, Ms: s.ExecutionTimeMs})
	}
	return out
}

// Impossible names every value of the record that no measurement can have: a negative
// time or memory figure ("steps[3] = -1.5"). Non-finite numbers never get here: the record
// is malformed (ParseLine).
func (r Record) Impossible() []string {
	var out []string
	bad := func(field string, v float64) {
		if v < 0 {
			out = append(out, fmt.Sprintf("%s = %s", field, strconv.FormatFloat(v, 'g', -1, 64)))
		}
	}
	bad("total_duration_ms", r.TotalDurationMs)
	for i, v := range r.Steps {
		bad(fmt.Sprintf("steps[%d]", i), v)
	}
	for i, st := range r.Stages {
		bad(fmt.Sprintf("stages[%d] (%s).execution_time_ms", i, st.Name), st.ExecutionTimeMs)
	}
	for _, name := range slices.Sorted(maps.Keys(r.MemorySnapshots)) {
		m := r.MemorySnapshots[name]
		for _, f := range []struct {
			key string
			v   *float64
		}{{"allocated_mb", m.AllocatedMB}, {"reserved_mb", m.ReservedMB}, {"peak_allocated_mb", m.PeakAllocatedMB},
			{"peak_reserved_mb", m.PeakReservedMB}, {"peak_host_anon_mb", m.PeakHostAnonMB}} {
			if f.v != nil {
				bad("memory_snapshots."+name+"."+f.key, *f.v)
			}
		}
	}
	return out
}

// Peaks returns the server-reported peaks of one snapshot, labelled by source.
func (r Record) Peaks(snapshot string) map[string]float64 {
	s, ok := r.MemorySnapshots[snapshot]
	if !ok {
		return nil
	}
	out := map[string]float64{}
	if v := s.PeakReservedMB; v != nil {
		out[checks.SourceServerReserved] = *v
	}
	if v := s.PeakAllocatedMB; v != nil {
		out[checks.SourceServerAllocated] = *v
	}
	if v := s.PeakHostAnonMB; v != nil {
		out[checks.SourceServerHostAnon] = *v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// maxLine bounds one performance.log line: a record is a few KiB; a line that never
// ends must not grow without bound in memory.
const maxLine = 16 << 20

// keepBytes and keepRecords bound what a Log holds of records no request has claimed yet: the
// newest ones, as read, undecoded. A request's record is written just before its response
// is sent and claimed just after it arrives, so only the records written in between must be
// kept; a busy log of other requests (another client of the server) is dropped as it is read
// beyond these, and memory stays bounded however long the log grows (about 20 MB with the
// index). 8 MiB holds about 60,000 records of the usual 130 bytes.
const (
	keepBytes   = 8 << 20
	keepRecords = 1 << 16
)

// maxIDLen bounds the request id of a kept record: SGLang's are uuid4s (36 characters), "<id>:<i>"
// for the outputs of an expanded request.
const maxIDLen = 256

// fingerprintBytes is how much of the start and of the end of what was read is kept, to
// notice a file rewritten in place (truncated and written again to the same size or larger:
// its size and identity alone do not tell).
const fingerprintBytes = 4 << 10

// recordStart begins every performance.log record: SGLang writes
// json.dumps(dataclasses.asdict(RequestPerfRecord(...))) (perf_logger.log_request_summary),
// whose first field is request_id. Inside a JSON string a quote is escaped, so the sequence
// can only start an object: a line is split where it occurs again, so that a record cut
// short (a server killed mid-write) does not hide the record written after it.
var recordStart = []byte(`{"request_id"`)

// Log follows a performance.log file as the server appends to it and hands each request its
// record. It reads only complete lines, so a record being written is never half-read; a line
// longer than maxLine is skipped with a note; a file that was truncated, rewritten or
// replaced (log rotation) is read again from its start. A record joins one request only.
//
// Memory is bounded: a line read is indexed by its request id, found without decoding it,
// and kept as read among the newest keepBytes (keepRecords) of unclaimed records; older ones
// are dropped. A record is decoded once, when a request claims it.
type Log struct {
	path string

	mu       sync.Mutex
	fi       os.FileInfo // the file read last, to notice that it was replaced
	offset   int64
	head     []byte // the first fingerprintBytes read from the file
	tail     []byte // the last fingerprintBytes read, ending at offset
	part     []byte
	buf      []byte
	skipping bool // inside a line past maxLine: drop up to its end
	lines    int  // lines read so far (complete or skipped), for the malformed-record error

	// kept holds the records read last, oldest first, kept[i] being record number first+i;
	// byID finds the number of the newest unclaimed record of an id among them, outputs that
	// of the lowest-numbered output ("<id>:0") of a request, for records written per output.
	kept      []keptRecord
	first     uint64
	keptBytes int
	byID      map[string]uint64
	outputs   map[string]uint64
	dropped   int    // records dropped unclaimed, to keep memory bounded
	spare     []byte // the line of the record dropped last, for the next one
	maxKeep   int    // keepBytes, lowered by tests
	maxKeepN  int    // keepRecords, lowered by tests
	// joined holds the request ids whose record was handed to a request.
	joined map[string]bool
	bad    []string // other lines that could not be parsed or were skipped, for the failure detail
}

// keptRecord is one record line as read (nil once claimed), with where it was.
type keptRecord struct {
	id   string
	line []byte
	no   int // 1-based line number
}

// New is a follower of the performance.log at path; the file need not exist yet.
func New(path string) *Log {
	return &Log{path: path, byID: map[string]uint64{}, outputs: map[string]uint64{},
		joined: map[string]bool{}, maxKeep: keepBytes, maxKeepN: keepRecords}
}

// poll reads whatever was appended since the last call, until ctx ends.
func (p *Log) poll(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The server writes the file, and a pull request's code may be the server: a FIFO or a
	// link in its place is refused, not waited on or followed.
	f, err := inputfile.Open(ctx, p.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if p.fi != nil && (!os.SameFile(p.fi, fi) || fi.Size() < p.offset || !p.sameContent(f)) {
		// Rotated (another file now), truncated, or rewritten: what it holds now starts at
		// byte 0. Records already kept stay; the ones read again are the same records.
		p.offset, p.part, p.skipping, p.lines, p.head, p.tail = 0, nil, false, 0, nil, nil
	}
	p.fi = fi
	if _, err := f.Seek(p.offset, io.SeekStart); err != nil {
		return err
	}
	if p.buf == nil {
		p.buf = make([]byte, 256<<10)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Read(p.buf)
		if n > 0 {
			p.offset += int64(n)
			p.remember(p.buf[:n])
			p.feed(p.buf[:n])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// remember keeps the fingerprint of what was read: its first and its last fingerprintBytes.
func (p *Log) remember(data []byte) {
	if k := min(fingerprintBytes-len(p.head), len(data)); k > 0 {
		p.head = append(p.head, data[:k]...)
	}
	if len(data) >= fingerprintBytes {
		p.tail = append(p.tail[:0], data[len(data)-fingerprintBytes:]...)
		return
	}
	p.tail = append(p.tail, data...)
	if extra := len(p.tail) - fingerprintBytes; extra > 0 {
		p.tail = append(p.tail[:0], p.tail[extra:]...)
	}
}

// sameContent reports whether the file still holds, where they were read, the bytes of the
// fingerprint; a read error counts as a change (the file is then read again from 0).
func (p *Log) sameContent(f *os.File) bool {
	same := func(want []byte, at int64) bool {
		got := make([]byte, len(want))
		n, err := f.ReadAt(got, at)
		return n == len(want) && (err == nil || errors.Is(err, io.EOF)) && bytes.Equal(got, want)
	}
	return same(p.head, 0) && same(p.tail, p.offset-int64(len(p.tail)))
}

// feed splits data into lines, keeping an unfinished one for the next call.
func (p *Log) feed(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !p.skipping {
				p.part = append(p.part, data...)
				if len(p.part) > maxLine {
					p.note(fmt.Sprintf("a line longer than %d MiB ending after byte %d was skipped", maxLine>>20, p.offset))
					p.part, p.skipping = nil, true
				}
			}
			return
		}
		p.lines++
		switch {
		case p.skipping:
			p.skipping = false
		case len(p.part) > 0:
			p.part = append(p.part, data[:i]...)
			p.line(p.part)
		default:
			p.line(data[:i])
		}
		p.part = p.part[:0]
		data = data[i+1:]
	}
}

// line reads one line: the records that start in it (one, or a record cut short with the
// next one written on the same line), each kept under its request id, undecoded.
func (p *Log) line(b []byte) {
	line := bytes.TrimSpace(b)
	for len(line) > 0 {
		next := bytes.Index(line[1:], recordStart)
		if next < 0 {
			p.keep(line)
			return
		}
		p.keep(bytes.TrimSpace(line[:next+1]))
		line = line[next+1:]
	}
}

// keep indexes one record by its request id, read without decoding the record (a foreign
// one is never decoded), and drops the oldest kept records beyond the bounds.
func (p *Log) keep(line []byte) {
	id, ok := idOf(line)
	if !ok {
		// Not in SGLang's shape: only a decode can tell. Rare, so worth it.
		rec, err := ParseLine(line)
		var me *MalformedRecordError
		switch {
		case err == nil:
			id = rec.RequestID
		case errors.As(err, &me) && me.RequestID != "":
			id = me.RequestID
		default:
			p.note(fmt.Sprintf("%.120s: %v", line, err))
			return
		}
	}
	if len(id) > maxIDLen {
		p.note(fmt.Sprintf("line %d: a request_id of %d bytes, longer than any request's (%.40s…)", p.lines, len(id), id))
		return
	}
	n := p.first + uint64(len(p.kept))
	// The line of the record dropped last holds this one when it fits (and is not much
	// larger): in the steady state of a busy log, one in and one out, no allocation.
	buf := p.spare
	p.spare = nil
	if cap(buf) < len(line) || cap(buf) > 4*len(line)+256 {
		buf = make([]byte, 0, len(line))
	}
	p.kept = append(p.kept, keptRecord{id: id, line: append(buf[:0], line...), no: p.lines})
	p.keptBytes += len(line)
	p.byID[id] = n
	if parent, i, ok := outputOf(id); ok {
		if prev, seen := p.outputs[parent]; !seen || outputIndex(p.kept[prev-p.first].id) >= i {
			p.outputs[parent] = n
		}
	}
	// The newest record always stays; older ones go beyond the bounds. Slicing the front
	// off lets append copy only the live records when it next grows the array.
	for len(p.kept) > 1 && (p.keptBytes > p.maxKeep || len(p.kept) > p.maxKeepN) {
		if l := p.kept[0].line; l != nil {
			p.dropped++
			p.spare = l
		}
		p.forget(p.first)
		p.kept[0] = keptRecord{}
		p.kept = p.kept[1:]
		p.first++
	}
}

// forget takes record number n out of the index and its bytes out of memory (claimed, or
// dropped unclaimed).
func (p *Log) forget(n uint64) {
	r := &p.kept[n-p.first]
	p.keptBytes -= len(r.line)
	r.line = nil
	if m, ok := p.byID[r.id]; ok && m == n {
		delete(p.byID, r.id)
	}
	if parent, _, ok := outputOf(r.id); ok {
		if m, ok := p.outputs[parent]; ok && m == n {
			delete(p.outputs, parent)
		}
	}
}

// idOf reads the request id at the start of a record as SGLang writes it
// ({"request_id": "…", …}) without decoding the rest; false when the line starts otherwise
// or the id holds an escape (then a decode reads it).
func idOf(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, recordStart)
	if !ok {
		return "", false
	}
	rest = bytes.TrimLeft(rest, " \t")
	if rest, ok = bytes.CutPrefix(rest, []byte(":")); !ok {
		return "", false
	}
	rest = bytes.TrimLeft(rest, " \t")
	if rest, ok = bytes.CutPrefix(rest, []byte(`"`)); !ok {
		return "", false
	}
	end := bytes.IndexAny(rest, `"\`)
	if end <= 0 || rest[end] != '"' {
		return "", false
	}
	return string(rest[:end]), true
}

// outputOf splits the id of one output of a request expanded into several: SGLang's
// entrypoints/utils.expand_request_outputs names them "<id>:<i>" (MiniMax-H3 with n > 1).
func outputOf(id string) (parent string, i uint64, ok bool) {
	c := strings.LastIndexByte(id, ':')
	if c <= 0 || c == len(id)-1 {
		return "", 0, false
	}
	for _, d := range id[c+1:] {
		if d < '0' || d > '9' {
			return "", 0, false
		}
	}
	i, err := strconv.ParseUint(id[c+1:], 10, 64)
	if err != nil {
		i = math.MaxUint64 // a huge i sorts last
	}
	return id[:c], i, true
}

// outputIndex is the i of a record id "<id>:<i>".
func outputIndex(recordID string) uint64 {
	_, i, _ := outputOf(recordID)
	return i
}

func (p *Log) note(s string) {
	if len(p.bad) < 5 {
		p.bad = append(p.bad, s)
	}
}

// find returns the number of the kept record of request id: the record named id, else the
// record of its lowest-numbered output ("<id>:0"). Called with mu held.
func (p *Log) find(id string) (uint64, bool) {
	if n, ok := p.byID[id]; ok {
		return n, true
	}
	n, ok := p.outputs[id]
	return n, ok
}

// decode reads a claimed record, once; a malformed one is the request's error.
func (p *Log) decode(n uint64) (Record, error) {
	r := &p.kept[n-p.first]
	rec, err := ParseLine(r.line)
	var me *MalformedRecordError
	if errors.As(err, &me) {
		me.Path, me.Line = p.path, r.no
		if me.RequestID == "" {
			me.RequestID = r.id
		}
		return Record{}, me
	}
	return rec, err
}

// cutShort describes the unfinished line that holds the start of request id's record, or ""
// when none does: a server that wrote half its record and never the rest.
func (p *Log) cutShort(id string) string {
	got, ok := idOf(bytes.TrimSpace(p.part))
	if !ok {
		got = requestIDIn(p.part)
	}
	if got == "" || (got != id && !strings.HasPrefix(got, id+":")) {
		return ""
	}
	return fmt.Sprintf("its record was cut short: %s:%d holds %d bytes of it and no end of line (%s)", p.path, p.lines+1, len(p.part), excerpt(p.part))
}

// errNoRecord is returned when no record for a request appeared in time.
var errNoRecord = errors.New("no performance.log record")

// errRecordCut is returned for a request whose record was begun but never finished.
var errRecordCut = errors.New("performance.log record cut short")

// errRecordJoined is returned for a request whose id already had its record joined to an
// earlier request: SGLang gives every request a fresh uuid4 (sampling_params.
// generate_request_id), so a repeat is a server that reuses ids, and joining would judge this
// request on the other one's timings.
var errRecordJoined = errors.New("an earlier request with the same id already claimed its performance.log record")

// Wait returns the record of a request, polling the file until it appears or timeout passes.
// A record is handed out once: a second request with the same id gets errRecordJoined.
func (p *Log) Wait(ctx context.Context, id string, timeout time.Duration) (Record, error) {
	deadline := time.Now().Add(timeout)
	for {
		if err := p.poll(ctx); err != nil {
			if ctx.Err() != nil {
				return Record{}, ctx.Err()
			}
			return Record{}, fmt.Errorf("read %s: %w", p.path, err)
		}
		p.mu.Lock()
		joined := p.joined[id]
		n, found := p.find(id)
		var rec Record
		var err error
		if found && !joined {
			// Claimed under the lock: of two requests with one id in flight, one joins.
			p.joined[id] = true
			rec, err = p.decode(n)
			p.forget(n)
		}
		bad, dropped, cut := p.bad, p.dropped, p.cutShort(id)
		p.mu.Unlock()
		switch {
		case joined:
			return Record{}, fmt.Errorf("request_id %q: %w; ids must be unique to tell requests apart", id, errRecordJoined)
		case found:
			return rec, err
		}
		if time.Now().After(deadline) {
			if cut != "" {
				return Record{}, fmt.Errorf("%w for request_id %q: %s", errRecordCut, id, cut)
			}
			var unreadable, gone string
			if len(bad) > 0 {
				unreadable = fmt.Sprintf(" (%d unreadable lines, first: %s)", len(bad), bad[0])
			}
			if dropped > 0 {
				gone = fmt.Sprintf("; %d older records of other requests were dropped unread, only the newest %d MiB being kept", dropped, p.maxKeep>>20)
			}
			return Record{}, fmt.Errorf("%w for request_id %q within %s in %s%s%s", errNoRecord, id, timeout, p.path, unreadable, gone)
		}
		if err := clock.Sleep(ctx, 25*time.Millisecond); err != nil {
			return Record{}, err
		}
	}
}
