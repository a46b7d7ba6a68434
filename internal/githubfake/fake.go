package githubfake

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Config says which repository and token the fake accepts.
type Config struct {
	Owner, Repo, Token string
	// PageSize caps the page size of comment lists (GitHub's cap is 100), so that tests can
	// make a few comments span many pages. 0 means 100.
	PageSize int
	// ReadOnly refuses every write with 403, as GitHub does for a fork's token.
	ReadOnly bool
	// NoChecks refuses check run writes with 403, as GitHub does for a job without
	// "permissions: checks: write".
	NoChecks bool
	// NoContents refuses writes of git data (the pictures branch) with 403, as GitHub does
	// for a job without "permissions: contents: write".
	NoContents bool
	// Actor is who the token acts as: the comments the token creates are its, and GraphQL's
	// viewer is it. A User (a personal access token's) is answered by GET /user; a Bot's
	// token is an installation token (a GitHub App's, login <slug>[bot]), which GET /user
	// refuses with 403 "Resource not accessible by integration", as GitHub does. nil is the
	// workflow's GITHUB_TOKEN, the GitHub Actions App's installation token: ActionsBot.
	Actor *User
}

// User is a GitHub account.
type User struct {
	Login string
	ID    int64
	// Type is User or Bot; empty means Bot for a login ending in [bot], else User.
	Type string
}

// ActionsBot is the account of the GitHub Actions app, which writes what a workflow's
// GITHUB_TOKEN writes.
var ActionsBot = User{Login: "github-actions[bot]", ID: 41898282, Type: "Bot"}

// userOf is the account of a login: ActionsBot's, else one with an ID derived from the login.
func userOf(login string) User {
	if login == ActionsBot.Login {
		return ActionsBot
	}
	var id int64 = 5000
	for _, c := range login {
		id = id*31 + int64(c)
		id &= 1<<40 - 1
	}
	return User{Login: login, ID: id}
}

func (u User) kind() string {
	if u.Type != "" {
		return u.Type
	}
	if strings.HasSuffix(u.Login, "[bot]") {
		return "Bot"
	}
	return "User"
}

// Comment is an issue comment as the fake stores it.
type Comment struct {
	ID    int64
	Issue int
	// User is the author's login; Author the whole account.
	User      string
	Author    User
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Status is a commit status as the fake stores it.
type Status struct {
	SHA, State, Context, Description, TargetURL string
}

// Fault is an injected failure: the next Times requests (default 1) that match Method and
// Path (a prefix; empty matches any) get Code with the given headers and message, after
// Delay. Code 0 with a Delay only slows the request down.
type Fault struct {
	Method string
	Path   string
	Code   int
	// RetryAfter sets the Retry-After header (seconds) when not empty.
	RetryAfter string
	// RateLimitReset, when not zero, sets X-RateLimit-Remaining: 0 and X-RateLimit-Reset to
	// now plus it (a primary rate limit).
	RateLimitReset time.Duration
	Message        string
	Delay          time.Duration
	Times          int
	// used counts the requests the fault was used for: a fault that was never used is a
	// test that did not test what it says (NewT and Unused report it).
	used int
}

// SecondaryRateLimit is the 403 GitHub answers when a client writes too fast.
func SecondaryRateLimit(method, path, retryAfter string) Fault {
	return Fault{Method: method, Path: path, Code: http.StatusForbidden, RetryAfter: retryAfter,
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}
}

// Pull is a pull request of the fake's repository, for the pull requests of a commit
// (GET /repos/{o}/{r}/commits/{sha}/pulls) and the list of pull requests
// (GET /repos/{o}/{r}/pulls?head=OWNER:BRANCH).
type Pull struct {
	Number int
	// HeadSHA and HeadRepo (owner/name) are the head commit and the repository it comes from:
	// a fork's for a pull request from a fork; empty HeadRepo means the fake's repository.
	HeadSHA, HeadRepo string
	// HeadRef is the head branch (in HeadRepo); empty means "pr-NUMBER". BaseRef is the
	// branch of the fake's repository it targets; empty means main.
	HeadRef, BaseRef string
	// Previous are earlier heads of the pull request (before a push or a force-push): GitHub
	// still lists the pull request for them, with its head as it is now.
	Previous []string
	// State is open or closed; empty means open.
	State string
}

func (p Pull) headRepo(base string) string { return cmp.Or(p.HeadRepo, base) }
func (p Pull) headRef() string             { return cmp.Or(p.HeadRef, fmt.Sprintf("pr-%d", p.Number)) }
func (p Pull) state() string               { return cmp.Or(p.State, "open") }

// has says whether sha is the pull request's head, now or before.
func (p Pull) has(sha string) bool { return p.HeadSHA == sha || slices.Contains(p.Previous, sha) }

// Fake is a running fake GitHub.
type Fake struct {
	cfg Config
	srv *httptest.Server // nil for a fake made by NewLocal

	mu       sync.Mutex
	nextID   int64
	clock    time.Time
	comments []*Comment
	statuses []Status
	pulls    []Pull
	// hidden are repositories the token cannot see (HideRepo).
	hidden []string
	// environments are the deployment environments (environments.go).
	environments map[string]Environment
	// pullFiles are the changed files of each pull request.
	pullFiles map[int][]PullFile
	faults    []*Fault
	// lastPage is the highest last page a Link header offered, per path.
	lastPage map[string]int
	requests []string
	problems []string
	// checkRuns are the check runs made; git the repository's git data (git.go).
	checkRuns []*CheckRun
	git       gitData
}

// New starts a fake; Close stops it. Problems lists what it found wrong.
func New(cfg Config) *Fake {
	if cfg.PageSize <= 0 || cfg.PageSize > 100 {
		cfg.PageSize = 100
	}
	f := &Fake{cfg: cfg, nextID: 1000, clock: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// NewLocal makes a fake that serves no port: only its Transport reaches it, in the calling
// process, so that a test inside a testing/synctest bubble (where network I/O would keep
// the fake clock from moving) sees its delays on the bubble's clock. URL is a placeholder
// host that only Transport knows.
func NewLocal(cfg Config) *Fake {
	if cfg.PageSize <= 0 || cfg.PageSize > 100 {
		cfg.PageSize = 100
	}
	return &Fake{cfg: cfg, nextID: 1000, clock: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// localHost is the host of a NewLocal fake's URL.
const localHost = "github.fake"

// Transport sends requests to the fake in this process, without a connection: for a fake
// made by NewLocal (it serves any fake, whatever the request's host).
func (f *Fake) Transport() http.RoundTripper { return local{f} }

type local struct{ f *Fake }

func (l local) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Host = req.URL.Host
	if r.Body == nil {
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.f.serve(rec, r)
	}()
	select {
	case <-done:
	case <-req.Context().Done():
		<-done // serve returns once the request's context is done
		return nil, req.Context().Err()
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// NewT starts a fake that is closed when the test ends, failing the test for every problem.
func NewT(t testing.TB, cfg Config) *Fake {
	t.Helper()
	f := New(cfg)
	t.Cleanup(func() {
		f.Close()
		for _, p := range f.Problems() {
			t.Error("fake GitHub: " + p)
		}
		for _, x := range f.Unused() {
			t.Errorf("fake GitHub: the fault %s was never used: no request matched it", x)
		}
	})
	return f
}

// URL is the fake's base URL; it also serves it with /api/v3/ appended (GHES).
func (f *Fake) URL() string {
	if f.srv == nil {
		return "http://" + localHost
	}
	return f.srv.URL
}

// Close stops the server, waiting for requests in flight.
func (f *Fake) Close() {
	if f.srv == nil {
		return
	}
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Inject queues faults; they are used in order, each for its Times matching requests.
func (f *Fake) Inject(faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range faults {
		x := x
		x.Times = max(x.Times, 1)
		f.faults = append(f.faults, &x)
	}
}

// SetReadOnly makes every later write fail with 403 (or not).
func (f *Fake) SetReadOnly(ro bool) {
	f.mu.Lock()
	f.cfg.ReadOnly = ro
	f.mu.Unlock()
}

// AddComment stores a comment as if login had posted it, returning its ID.
func (f *Fake) AddComment(issue int, login, body string) int64 {
	return f.AddCommentBy(issue, userOf(login), body)
}

// AddCommentBy stores a comment as if u had posted it, returning its ID.
func (f *Fake) AddCommentBy(issue int, u User, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.add(issue, u, body).ID
}

// actor is who the token acts as.
func (f *Fake) actor() User {
	if f.cfg.Actor != nil {
		return *f.cfg.Actor
	}
	return ActionsBot
}

func (f *Fake) add(issue int, u User, body string) *Comment {
	f.nextID++
	f.clock = f.clock.Add(time.Second)
	c := &Comment{ID: f.nextID, Issue: issue, User: u.Login, Author: u, Body: body, CreatedAt: f.clock, UpdatedAt: f.clock}
	f.comments = append(f.comments, c)
	return c
}

// Push moves the head of pull request number to sha, as a push to its branch does; its
// earlier head joins Previous.
func (f *Fake) Push(number int, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.pulls {
		if f.pulls[i].Number == number {
			f.pulls[i].Previous = append(f.pulls[i].Previous, f.pulls[i].HeadSHA)
			f.pulls[i].HeadSHA = sha
			return
		}
	}
	f.problem("Push: no pull request #%d", number)
}

// AddPull stores a pull request of the fake's repository.
func (f *Fake) AddPull(p Pull) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pulls = append(f.pulls, p)
}

// HideRepo makes repo (owner/name, a pull request's head repository) one the token cannot
// see, as a private fork in another account is to this repository's token: asked of it,
// GitHub answers 404, while its pull requests into the fake's repository still name it.
func (f *Fake) HideRepo(repo string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hidden = append(f.hidden, repo)
}

// Comments returns the comments of an issue, oldest first.
func (f *Fake) Comments(issue int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Comment
	for _, c := range f.comments {
		if c.Issue == issue {
			out = append(out, *c)
		}
	}
	return out
}

// Statuses returns every status set, in order.
func (f *Fake) Statuses() []Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.statuses)
}

// Requests returns "METHOD path" of every request served, faults included.
func (f *Fake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// Problems returns what the fake found wrong with the requests it got.
func (f *Fake) Problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.problems)
}

// Pending returns the injected faults not used yet.
func (f *Fake) Pending() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Fault
	for _, x := range f.faults {
		if x.Times > 0 {
			out = append(out, *x)
		}
	}
	return out
}

// Unused returns the injected faults that no request matched (as cli/cli's httpmock Verify
// fails for a stub that was not called): the test expected a request that was never made.
func (f *Fake) Unused() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Fault
	for _, x := range f.faults {
		if x.used == 0 {
			out = append(out, *x)
		}
	}
	return out
}

// String names a fault by what it matches and does, for messages.
func (x Fault) String() string {
	s := fmt.Sprintf("%s %s → %d", cmp.Or(x.Method, "*"), cmp.Or(x.Path, "*"), x.Code)
	if x.Delay > 0 {
		s += " after " + x.Delay.String()
	}
	return s
}

func (f *Fake) problem(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

var (
	listRE     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/([0-9]+)/comments$`)
	commentRE  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/([0-9]+)$`)
	statusRE   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/statuses/([^/]+)$`)
	pullsRE    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/pulls$`)
	pullListRE = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls$`)
	pullRE     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)$`)
	filesRE    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)/files$`)
	shaRE      = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+path)
	fault := f.fault(r.Method, path)
	f.mu.Unlock()

	if fault != nil && answerFault(w, r, fault) {
		return
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.headersOK(r, body) {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if f.route(w, r, path, body) || f.serveGit(w, r, path, body) {
		return
	}
	f.problem("unexpected request %s %s", r.Method, r.URL.Path)
	writeError(w, http.StatusNotFound, "Not Found")
}

// route answers a request of the REST API (and GraphQL) other than git data, and says
// whether it was one. f.mu must be held.
func (f *Fake) route(w http.ResponseWriter, r *http.Request, path string, body []byte) bool {
	var m []string
	switch r.Method {
	case http.MethodGet:
		switch {
		case path == "/user":
			f.user(w)
		case match(listRE, path, &m):
			f.list(w, r, m)
		case match(combinedRE, path, &m):
			f.combined(w, r, m)
		case match(pullsRE, path, &m):
			f.pullsOf(w, r, m)
		case match(pullListRE, path, &m):
			f.pullsList(w, r, m)
		case match(pullRE, path, &m):
			f.pull(w, r, m)
		case match(environmentRE, strings.TrimPrefix(r.URL.EscapedPath(), "/api/v3"), &m):
			f.environment(w, r, m)
		case match(filesRE, path, &m):
			f.filesOf(w, r, m)
		default:
			return false
		}
	case http.MethodPost:
		switch {
		case path == "/graphql" || path == "/api/graphql":
			f.graphql(w, r, body)
		case match(listRE, path, &m):
			f.create(w, r, m, body)
		case match(statusRE, path, &m):
			f.status(w, r, m, body)
		case match(checkRunsRE, path, &m):
			f.checkRun(w, r, m, body)
		default:
			return false
		}
	case http.MethodPatch:
		switch {
		case match(commentRE, path, &m):
			f.edit(w, r, m, body)
		case match(checkRunRE, path, &m):
			f.checkRun(w, r, m, body)
		default:
			return false
		}
	case http.MethodDelete:
		if !match(commentRE, path, &m) {
			return false
		}
		f.delete(w, r, m, body)
	default:
		return false
	}
	return true
}

// answerFault delays the request by fault's delay and, for a fault with a code, answers it
// (with its Retry-After and rate-limit headers); it says whether the request is answered, or
// its client gone, so that nothing else may answer it.
func answerFault(w http.ResponseWriter, r *http.Request, fault *Fault) bool {
	if fault.Delay > 0 {
		select {
		case <-time.After(fault.Delay):
		case <-r.Context().Done():
			return true
		}
	}
	if fault.Code == 0 {
		return false
	}
	if fault.RetryAfter != "" {
		w.Header().Set("Retry-After", fault.RetryAfter)
	}
	if fault.RateLimitReset != 0 {
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(fault.RateLimitReset).Unix(), 10))
	}
	writeError(w, fault.Code, fault.Message)
	return true
}

func match(re *regexp.Regexp, path string, m *[]string) bool {
	*m = re.FindStringSubmatch(path)
	return *m != nil
}

// fault takes the first matching injected fault, if any. f.mu must be held.
func (f *Fake) fault(method, path string) *Fault {
	for _, x := range f.faults {
		if x.Times > 0 && (x.Method == "" || x.Method == method) && strings.HasPrefix(path, x.Path) {
			x.Times--
			x.used++
			return x
		}
	}
	return nil
}

// headersOK checks what every request of a well-behaved go-github client carries.
func (f *Fake) headersOK(r *http.Request, body []byte) bool {
	auth := r.Header.Get("Authorization")
	if auth != "Bearer "+f.cfg.Token && auth != "token "+f.cfg.Token {
		f.problem("%s %s: Authorization %q, want the bearer token", r.Method, r.URL.Path, redact(auth, f.cfg.Token))
		return false
	}
	if a := r.Header.Get("Accept"); !strings.Contains(a, "application/vnd.github") {
		f.problem("%s %s: Accept %q, want application/vnd.github...", r.Method, r.URL.Path, a)
	}
	if r.Header.Get("User-Agent") == "" {
		f.problem("%s %s: no User-Agent (GitHub refuses such requests)", r.Method, r.URL.Path)
	}
	if len(body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		f.problem("%s %s: Content-Type %q with a body, want application/json", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	return true
}

func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "***")
}

// repoOK checks the owner and repository of a path.
func (f *Fake) repoOK(w http.ResponseWriter, r *http.Request, m []string) bool {
	if m[1] != f.cfg.Owner || m[2] != f.cfg.Repo {
		f.problem("%s %s: repository %s/%s, want %s/%s", r.Method, r.URL.Path, m[1], m[2], f.cfg.Owner, f.cfg.Repo)
		writeError(w, http.StatusNotFound, "Not Found")
		return false
	}
	return true
}

// writable refuses writes of a read-only token, as GitHub does.
func (f *Fake) writable(w http.ResponseWriter) bool {
	if f.cfg.ReadOnly {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return false
	}
	return true
}

// decode reads a JSON body strictly into v: an unknown field is a problem.
func (f *Fake) decode(w http.ResponseWriter, r *http.Request, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		f.problem("%s %s: body %s: %v", r.Method, r.URL.Path, body, err)
		writeError(w, http.StatusUnprocessableEntity, "Problems parsing JSON")
		return false
	}
	return true
}

func (f *Fake) list(w http.ResponseWriter, r *http.Request, m []string) {
	if !f.repoOK(w, r, m) {
		return
	}
	issue, _ := strconv.Atoi(m[3])
	var all []*Comment
	for _, c := range f.comments {
		if c.Issue == issue {
			all = append(all, c)
		}
	}
	lo, hi := f.page(w, r, len(all))
	out := []map[string]any{}
	for _, c := range all[lo:hi] {
		out = append(out, f.commentJSON(c))
	}
	writeJSON(w, http.StatusOK, out)
}

// page reads per_page and page as GitHub does (per_page capped at the fake's PageSize), sets
// the Link header of the pages around it, and returns the slice [lo, hi) of n items to send.
func (f *Fake) page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per := f.cfg.PageSize
	if s := q.Get("per_page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			f.problem("GET %s: per_page %q", r.URL.Path, s)
		}
		per = min(max(n, 1), per)
	}
	page := 1
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			f.problem("GET %s: page %q", r.URL.Path, s)
			n = 1
		}
		page = n
	}
	last := max(1, (n+per-1)/per)
	// A page past the last is a problem unless a Link header offered it: another client may
	// have deleted comments between two pages, and GitHub then answers an empty page.
	if f.lastPage == nil {
		f.lastPage = map[string]int{}
	}
	f.lastPage[r.URL.Path] = max(f.lastPage[r.URL.Path], last)
	if page > f.lastPage[r.URL.Path] && n > 0 {
		f.problem("GET %s: page %d past the last page %d", r.URL.Path, page, last)
	}
	lo, hi = min((page-1)*per, n), min(page*per, n)
	link := func(p int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		qq := u.Query()
		qq.Set("page", strconv.Itoa(p))
		qq.Set("per_page", strconv.Itoa(per))
		u.RawQuery = qq.Encode()
		return fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	return lo, hi
}

// MaxPullFiles is how many files GitHub lists for one pull request; the rest are not listed.
const MaxPullFiles = 3000

// PullFile is a file a pull request changes, as GET /repos/{o}/{r}/pulls/{n}/files lists it.
type PullFile struct {
	Filename string
	// PreviousFilename is set for a renamed file.
	PreviousFilename string
	// Status is added, modified, removed, renamed, ...; empty means modified.
	Status string
}

// SetPullFiles sets the files pull request number changes.
func (f *Fake) SetPullFiles(number int, files []PullFile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pullFiles == nil {
		f.pullFiles = map[int][]PullFile{}
	}
	f.pullFiles[number] = slices.Clone(files)
}

// filesOf lists the files of a pull request, paginated, at most MaxPullFiles of them as GitHub.
func (f *Fake) filesOf(w http.ResponseWriter, r *http.Request, m []string) {
	if !f.repoOK(w, r, m) {
		return
	}
	number, _ := strconv.Atoi(m[3])
	files, ok := f.pullFiles[number]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	files = files[:min(len(files), MaxPullFiles)]
	lo, hi := f.page(w, r, len(files))
	out := []map[string]any{}
	for _, pf := range files[lo:hi] {
		j := map[string]any{"filename": pf.Filename, "status": cmp.Or(pf.Status, "modified"), "sha": "0000000000000000000000000000000000000000"}
		if pf.PreviousFilename != "" {
			j["previous_filename"] = pf.PreviousFilename
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
}

// pullsOf lists the pull requests of a commit (one page: the fake holds few) as GitHub does
// (https://docs.github.com/rest/commits/commits#list-pull-requests-associated-with-a-commit):
// only those whose commits are in the repository asked. Asked of the fake's repository, a
// commit that exists only in a fork lists nothing; asked of the fork, it lists the fork's
// pull requests into the fake's repository. GitHub answers so for every project that
// reported it: TooTallNate/nx.js#410 (verified directly: the base answered [], the fork the
// pull request), quarkusio/pt.quarkus.io#389, qualcomm/eld#1883, webpack/webpack#21530. A
// pull request is listed for its earlier heads too, with its head as it is now. A
// repository that is neither the fake's nor the head of one of its pull requests is 404.
func (f *Fake) pullsOf(w http.ResponseWriter, r *http.Request, m []string) {
	base, asked := f.cfg.Owner+"/"+f.cfg.Repo, m[1]+"/"+m[2]
	if asked != base && (slices.Contains(f.hidden, asked) || !slices.ContainsFunc(f.pulls, func(p Pull) bool { return p.headRepo(base) == asked })) {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if !shaRE.MatchString(m[3]) {
		f.problem("GET %s: %q is not a commit SHA", r.URL.Path, m[3])
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+m[3])
		return
	}
	out := []map[string]any{}
	for _, p := range f.pulls {
		if p.has(m[3]) && p.headRepo(base) == asked {
			out = append(out, f.pullJSON(p))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// pull answers GET /repos/{o}/{r}/pulls/{n} as GitHub does
// (https://docs.github.com/rest/pulls/pulls#get-a-pull-request): the pull request with its head
// as it is now, or 404 for a number that is none.
func (f *Fake) pull(w http.ResponseWriter, r *http.Request, m []string) {
	if !f.repoOK(w, r, m) {
		return
	}
	n, _ := strconv.Atoi(m[3])
	for _, p := range f.pulls {
		if p.Number == n {
			writeJSON(w, http.StatusOK, f.pullJSON(p))
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

// pullsList answers GET /repos/{o}/{r}/pulls as GitHub does
// (https://docs.github.com/rest/pulls/pulls#list-pull-requests): state open (the
// default), closed or all; head=OWNER:BRANCH keeps the pull requests from that owner's
// branch, whatever repository of the owner it is in; paginated.
func (f *Fake) pullsList(w http.ResponseWriter, r *http.Request, m []string) {
	if !f.repoOK(w, r, m) {
		return
	}
	q := r.URL.Query()
	state := cmp.Or(q.Get("state"), "open")
	if !slices.Contains([]string{"open", "closed", "all"}, state) {
		f.problem("GET %s: state %q", r.URL.Path, state)
	}
	head := q.Get("head")
	if head != "" && !strings.Contains(head, ":") {
		f.problem("GET %s: head %q, want OWNER:BRANCH (a branch name alone may be another owner's)", r.URL.Path, head)
	}
	base := f.cfg.Owner + "/" + f.cfg.Repo
	var all []Pull
	for _, p := range f.pulls {
		owner, _, _ := strings.Cut(p.headRepo(base), "/")
		if (state == "all" || state == p.state()) && (head == "" || head == owner+":"+p.headRef()) {
			all = append(all, p)
		}
	}
	lo, hi := f.page(w, r, len(all))
	out := []map[string]any{}
	for _, p := range all[lo:hi] {
		out = append(out, f.pullJSON(p))
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) pullJSON(p Pull) map[string]any {
	base := f.cfg.Owner + "/" + f.cfg.Repo
	hr := p.headRepo(base)
	owner, _, _ := strings.Cut(hr, "/")
	return map[string]any{
		"number": p.Number, "state": p.state(),
		"base": map[string]any{"ref": cmp.Or(p.BaseRef, "main"), "label": f.cfg.Owner + ":" + cmp.Or(p.BaseRef, "main"),
			"repo": map[string]any{"full_name": base}},
		"head": map[string]any{"sha": p.HeadSHA, "ref": p.headRef(), "label": owner + ":" + p.headRef(),
			"repo": map[string]any{"full_name": hr, "owner": map[string]any{"login": owner}}},
	}
}

// user answers GET /user: the actor of a personal access token; an installation token (the
// workflow's GITHUB_TOKEN, an App's) is refused, as GitHub refuses it
// (joshjohanning/bulk-github-repo-settings-sync-action#194 shows the refusal).
func (f *Fake) user(w http.ResponseWriter) {
	if a := f.actor(); a.kind() == "Bot" {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	writeJSON(w, http.StatusOK, userJSON(f.actor()))
}

// graphql answers the one GraphQL query diffusion-check sends, `query { viewer { login } }`,
// for every token kind as GitHub does (#194 above: a personal token's user, an App's
// installation token its <slug>[bot]); any other query is a problem. GitHub serves GraphQL
// at /graphql, a GHES server at /api/graphql (not under /api/v3).
func (f *Fake) graphql(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path == "/api/v3/graphql" {
		f.problem("POST %s: GHES serves GraphQL at /api/graphql, not under /api/v3", r.URL.Path)
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	var b struct {
		Query     *string        `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	if b.Query == nil || strings.Join(strings.Fields(*b.Query), " ") != "query { viewer { login } }" {
		f.problem("POST %s: query %q, the fake answers only query { viewer { login } }", r.URL.Path, deref(b.Query))
		writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]string{{"message": "not understood by the fake"}}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"viewer": map[string]any{"login": f.actor().Login}}})
}

func userJSON(u User) map[string]any {
	return map[string]any{"login": u.Login, "id": u.ID, "type": u.kind()}
}

func (f *Fake) commentJSON(c *Comment) map[string]any {
	return map[string]any{
		"id":         c.ID,
		"body":       c.Body,
		"user":       userJSON(c.Author),
		"created_at": c.CreatedAt.Format(time.RFC3339),
		"updated_at": c.UpdatedAt.Format(time.RFC3339),
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", f.cfg.Owner, f.cfg.Repo, c.Issue, c.ID),
	}
}

type commentBody struct {
	Body *string `json:"body"`
}

func (f *Fake) bodyOK(w http.ResponseWriter, r *http.Request, b commentBody) bool {
	switch {
	case b.Body == nil || *b.Body == "":
		f.problem("%s %s: comment without a body", r.Method, r.URL.Path)
	case utf8.RuneCountInString(*b.Body) > 65536:
		f.problem("%s %s: comment body of %d characters, GitHub's limit is 65536", r.Method, r.URL.Path, utf8.RuneCountInString(*b.Body))
	default:
		return true
	}
	writeError(w, http.StatusUnprocessableEntity, "Validation Failed")
	return false
}

func (f *Fake) create(w http.ResponseWriter, r *http.Request, m []string, body []byte) {
	var b commentBody
	if !f.repoOK(w, r, m) || !f.writable(w) || !f.decode(w, r, body, &b) || !f.bodyOK(w, r, b) {
		return
	}
	issue, _ := strconv.Atoi(m[3])
	c := f.add(issue, f.actor(), *b.Body)
	writeJSON(w, http.StatusCreated, f.commentJSON(c))
}

func (f *Fake) find(w http.ResponseWriter, r *http.Request, idText string) *Comment {
	id, _ := strconv.ParseInt(idText, 10, 64)
	for _, c := range f.comments {
		if c.ID == id {
			return c
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
	return nil
}

func (f *Fake) edit(w http.ResponseWriter, r *http.Request, m []string, body []byte) {
	var b commentBody
	if !f.repoOK(w, r, m) || !f.writable(w) || !f.decode(w, r, body, &b) || !f.bodyOK(w, r, b) {
		return
	}
	c := f.find(w, r, m[3])
	if c == nil {
		return
	}
	if !f.owns(c) {
		f.problem("PATCH %s: edits comment %d of %s (id %d), not one the token wrote starting with a marker line", r.URL.Path, c.ID, c.User, c.Author.ID)
	}
	f.clock = f.clock.Add(time.Second)
	c.Body, c.UpdatedAt = *b.Body, f.clock
	writeJSON(w, http.StatusOK, f.commentJSON(c))
}

func (f *Fake) delete(w http.ResponseWriter, r *http.Request, m []string, body []byte) {
	if !f.repoOK(w, r, m) || !f.writable(w) {
		return
	}
	if len(body) > 0 {
		f.problem("DELETE %s: unexpected body %s", r.URL.Path, body)
	}
	c := f.find(w, r, m[3])
	if c == nil {
		return
	}
	if !f.owns(c) {
		f.problem("DELETE %s: deletes comment %d of %s (id %d), not one the token wrote starting with a marker line", r.URL.Path, c.ID, c.User, c.Author.ID)
	}
	f.comments = slices.DeleteFunc(f.comments, func(x *Comment) bool { return x == c })
	w.WriteHeader(http.StatusNoContent)
}

// markerLine is the first line of a comment diffusion-check owns.
var markerLine = regexp.MustCompile(`^<!-- diffusion-check:[^ ]+ -->(\n|$)`)

// owns says whether the token may edit or delete c: the token's actor wrote it, and its first
// line is a diffusion-check marker.
func (f *Fake) owns(c *Comment) bool {
	a := f.actor()
	return c.Author.ID == a.ID && c.Author.Login == a.Login && markerLine.MatchString(c.Body)
}

func (f *Fake) status(w http.ResponseWriter, r *http.Request, m []string, body []byte) {
	var b struct {
		State       *string `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     *string `json:"context"`
	}
	if !f.repoOK(w, r, m) || !f.writable(w) || !f.decode(w, r, body, &b) {
		return
	}
	s := Status{SHA: m[3]}
	for _, p := range []struct {
		v   *string
		dst *string
	}{{b.State, &s.State}, {b.TargetURL, &s.TargetURL}, {b.Description, &s.Description}, {b.Context, &s.Context}} {
		if p.v != nil {
			*p.dst = *p.v
		}
	}
	bad := ""
	switch {
	case !shaRE.MatchString(s.SHA):
		bad = fmt.Sprintf("ref %q is not a full commit SHA", s.SHA)
	case !slices.Contains([]string{"pending", "success", "failure", "error"}, s.State):
		bad = fmt.Sprintf("state %q", s.State)
	case s.Context == "":
		bad = "no context"
	case utf8.RuneCountInString(s.Description) > 140:
		bad = fmt.Sprintf("description of %d characters, GitHub's limit is 140", utf8.RuneCountInString(s.Description))
	case s.TargetURL != "" && !strings.HasPrefix(s.TargetURL, "http"):
		bad = fmt.Sprintf("target_url %q", s.TargetURL)
	}
	if bad != "" {
		f.problem("POST %s: %s", r.URL.Path, bad)
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	f.statuses = append(f.statuses, s)
	writeJSON(w, http.StatusCreated, map[string]any{"state": s.State, "context": s.Context, "description": s.Description, "target_url": s.TargetURL})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	// The status is sent already; a failure here is a client that went away.
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}
