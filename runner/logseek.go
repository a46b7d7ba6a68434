package runner

import "strings"

// logSeek watches the server's log lines written after it was made (logWatch.seek) for
// markers, and for a line that ends the watch as a failure.
type logSeek struct {
	want   []string
	found  []bool
	fail   string // a line holding it is failed
	failed string
	done   chan struct{} // closed once every marker was seen, or a failed line
	ended  bool
}

// seek starts watching the lines to come for want, and for a line holding fail.
func (l *logWatch) seek(fail string, want ...string) *logSeek {
	k := &logSeek{want: want, found: make([]bool, len(want)), fail: fail, done: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seeks = append(l.seeks, k)
	return k
}

// unseek ends the watch k and returns the markers it did not see and its failed line.
func (l *logWatch) unseek(k *logSeek) (missing []string, failed string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, other := range l.seeks {
		if other == k {
			l.seeks = append(l.seeks[:i], l.seeks[i+1:]...)
			break
		}
	}
	for i, w := range k.want {
		if !k.found[i] {
			missing = append(missing, w)
		}
	}
	return missing, k.failed
}

// see watches one line; the caller holds the log's lock.
func (k *logSeek) see(line string) {
	if k.ended {
		return
	}
	if k.fail != "" && strings.Contains(line, k.fail) {
		k.failed = strings.TrimSpace(line)
		k.end()
		return
	}
	all := true
	for i, w := range k.want {
		k.found[i] = k.found[i] || strings.Contains(line, w)
		all = all && k.found[i]
	}
	if all {
		k.end()
	}
}

func (k *logSeek) end() {
	k.ended = true
	close(k.done)
}
