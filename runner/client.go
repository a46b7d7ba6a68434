package runner

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// maxJSON bounds a JSON response, which is decoded in memory (images come base64-encoded in
// it), below the server's max_output_mb.
const maxJSON = 256 << 20

// client speaks the OpenAI-style image and video API of docs/sglang-compat.md §2 to one server.
type client struct {
	http  *http.Client
	base  string
	model string
	poll  time.Duration
	// dir is where the output files go; maxBytes caps each response body (max_output_mb).
	dir      string
	maxBytes int64
	// job is the last state the server reported of the video job in flight (nil before
	// one), read by heartbeats while the request waits.
	job atomic.Pointer[videoJob]
	// inputs reads the files and URLs a request sends (nil: read each time).
	inputs *inputs
	// tools encode a realtime session's frames (the run's ffmpeg).
	tools media.Tools
}

// reply is what one generation request returned.
type reply struct {
	ID string
	// Files are the output files, written to the client's dir: one per image for images, one
	// MP4 for videos.
	Files []mediaFile
	// Ext is the file extension of the media (png, jpeg, webp, mp4).
	Ext          string
	PeakMemoryMB *float64
	InferenceS   *float64
	// Chunks are a realtime session's chunk_stats, in arrival order (realtime.go).
	Chunks []results.ChunkStats
	// RevisedPrompts are the images' revised_prompt, in order (nil for one without).
	RevisedPrompts []*string
	// Chat is a text case's chat completion (chat.go); nil for media.
	Chat *checks.ChatAnswer
}

// mediaFile is one output file on disk.
type mediaFile struct {
	Path  string
	Bytes int64
}

// saveError is an output that arrived but could not be written to disk: a problem of the
// machine (a full disk), not of the server.
type saveError struct{ err error }

func (e *saveError) Error() string { return "save output: " + e.err.Error() }
func (e *saveError) Unwrap() error { return e.err }

// tooLargeError is a response body past the cap.
type tooLargeError struct {
	Method, URL string
	Limit       int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s %s: response larger than %d MiB (the server's max_output_mb): not read further", e.Method, e.URL, e.Limit>>20)
}

// mediaName is the file name of output k (0-based) with extension ext.
func mediaName(k int, ext string) string {
	if k == 0 {
		return "output." + ext
	}
	return fmt.Sprintf("output-%d.%s", k+1, ext)
}

// httpError is a non-2xx answer from the server.
type httpError struct {
	Method, URL string
	Status      int
	Message     string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.Status, e.Message)
}

// jobFailed is a video job that ended in a status other than completed: failed (the
// server's error message kept), deleted, or a status SGLang does not define.
type jobFailed struct {
	ID, Status, Message string
}

func (e *jobFailed) Error() string {
	return fmt.Sprintf("video job %s ended in status %q: %s", e.ID, e.Status, e.Message)
}

// failedOnServer reports whether the server itself said that the generation failed: a video
// job that ended failed (or deleted, or in an unknown status), or an error answer to the
// generation POST. SGLang writes no performance.log record for such a request
// (gpu_worker._execute_forward_common logs the summary only after a forward that returned),
// so none is waited for. A failed download or poll of a job is not one: the forward may have
// run and written its record.
func failedOnServer(err error) bool {
	var jf *jobFailed
	var he *httpError
	return errors.As(err, &jf) || errors.As(err, &he) && he.Method == http.MethodPost
}

// generate sends one request of a case and waits for its complete output.
func (c *client) generate(ctx context.Context, cs *suite.Case) (reply, error) {
	if cs.Realtime != nil {
		return c.realtime(ctx, cs)
	}
	if cs.Modality == suite.Text {
		return c.chat(ctx, cs)
	}
	if cs.Modality == suite.Image {
		return c.image(ctx, cs)
	}
	return c.video(ctx, cs)
}

// fields are the request fields common to the image and video endpoints.
func (c *client) fields(r suite.Request) map[string]any {
	body := map[string]any{"prompt": r.Prompt}
	if c.model != "" {
		body["model"] = c.model
	}
	if r.Size != "" {
		body["size"] = r.Size
	}
	if r.NegativePrompt != "" {
		body["negative_prompt"] = r.NegativePrompt
	}
	if r.Seed != nil {
		body["seed"] = *r.Seed
	}
	if r.Steps > 0 {
		body["num_inference_steps"] = r.Steps
	}
	if r.GuidanceScale != nil {
		body["guidance_scale"] = *r.GuidanceScale
	}
	return body
}

// merge adds the case's extra fields, as OpenAI's extra_body does: they win over ours.
func merge(body, extra map[string]any) map[string]any {
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func (c *client) image(ctx context.Context, cs *suite.Case) (reply, error) {
	r := cs.Request
	body := c.fields(r)
	body["n"] = r.N
	body["response_format"] = "b64_json"
	body["output_format"] = r.OutputFormat
	merge(body, r.Extra)
	var resp struct {
		ID   string `json:"id"`
		Data []struct {
			B64JSON       string  `json:"b64_json"`
			RevisedPrompt *string `json:"revised_prompt"`
		} `json:"data"`
		PeakMemoryMB   *float64 `json:"peak_memory_mb"`
		InferenceTimeS *float64 `json:"inference_time_s"`
		Error          any      `json:"error"`
	}
	var err error
	path := "/v1/images/generations"
	if len(r.Images) > 0 {
		path = "/v1/images/edits"
		err = c.multipart(ctx, path, body, "image", r.Images, &resp)
	} else {
		err = c.postJSON(ctx, path, body, &resp)
	}
	if err != nil {
		return reply{}, err
	}
	if resp.Error != nil && len(resp.Data) == 0 {
		// A 2xx that carries an error and no media is a failure with the server's words.
		return reply{ID: resp.ID}, &httpError{Method: http.MethodPost, URL: path, Status: http.StatusOK, Message: errorText(resp.Error)}
	}
	out := reply{ID: resp.ID, Ext: r.OutputFormat, PeakMemoryMB: resp.PeakMemoryMB, InferenceS: resp.InferenceTimeS}
	for i, d := range resp.Data {
		out.RevisedPrompts = append(out.RevisedPrompts, d.RevisedPrompt)
		b, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			return out, fmt.Errorf("response %s: data[%d].b64_json: %w", resp.ID, i, err)
		}
		if len(b) == 0 {
			continue // no media: output.present says so
		}
		p := filepath.Join(c.dir, mediaName(i, r.OutputFormat))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return out, &saveError{err}
		}
		out.Files = append(out.Files, mediaFile{Path: p, Bytes: int64(len(b))})
	}
	return out, nil
}

// videoJob is the job object of /v1/videos (protocol.py VideoResponse). Error is SGLang's
// Optional[Dict[str, Any]], read loosely: a message of another type must not hide the status.
type videoJob struct {
	ID             string   `json:"id"`
	Status         string   `json:"status"`
	Progress       float64  `json:"progress"`
	Error          any      `json:"error"`
	PeakMemoryMB   *float64 `json:"peak_memory_mb"`
	InferenceTimeS *float64 `json:"inference_time_s"`
}

// The video job statuses SGLang sets (video_api.py: create_video "queued",
// _dispatch_job_async "completed" or "failed", delete_video "deleted"); OpenAI's API adds
// "in_progress". Only queued and in_progress are waited on: any other status but completed
// ends the request, so a status the runner does not know is a failure naming it, not a hang.
const (
	jobQueued     = "queued"
	jobInProgress = "in_progress"
	jobCompleted  = "completed"
	jobDeleted    = "deleted"
)

// jobEnded says why a job in a terminal status other than completed ended.
func jobEnded(j videoJob) *jobFailed {
	msg := "no error message"
	switch {
	case j.Error != nil:
		msg = errorText(j.Error)
	case j.Status == jobDeleted:
		msg = "the job was deleted before it completed"
	case j.Status != "failed":
		msg = "a status SGLang's video API does not define (known: queued, in_progress, completed, failed, deleted)"
	}
	return &jobFailed{ID: j.ID, Status: j.Status, Message: msg}
}

// videoFields is fields plus the video request's length: seconds, fps and num_frames, each
// when set.
func (c *client) videoFields(r suite.Request) map[string]any {
	body := c.fields(r)
	if r.Seconds > 0 {
		body["seconds"] = r.Seconds
	}
	if r.FPS > 0 {
		body["fps"] = r.FPS
	}
	if r.NumFrames > 0 {
		body["num_frames"] = r.NumFrames
	}
	return body
}

func (c *client) video(ctx context.Context, cs *suite.Case) (reply, error) {
	r := cs.Request
	body := c.videoFields(r)
	merge(body, r.Extra)
	var job videoJob
	var err error
	if r.InputReference != "" {
		err = c.multipart(ctx, "/v1/videos", body, "input_reference", []string{r.InputReference}, &job)
	} else {
		err = c.postJSON(ctx, "/v1/videos", body, &job)
	}
	if err != nil {
		return reply{}, err
	}
	if job.ID == "" {
		if job.Error != nil {
			// A 2xx that carries an error and no job is a failure with the server's words.
			return reply{}, &httpError{Method: http.MethodPost, URL: "/v1/videos", Status: http.StatusOK, Message: errorText(job.Error)}
		}
		return reply{}, errors.New("POST /v1/videos: response has no job id")
	}
	c.job.Store(new(job))
	tick := time.NewTicker(c.poll)
	defer tick.Stop()
	for job.Status != jobCompleted {
		if job.Status != jobQueued && job.Status != jobInProgress {
			return reply{ID: job.ID}, jobEnded(job)
		}
		select {
		case <-ctx.Done():
			return reply{ID: job.ID}, fmt.Errorf("video job %s still %s (progress %.0f%%): %w", job.ID, job.Status, job.Progress, ctx.Err())
		case <-tick.C:
		}
		id := job.ID
		job = videoJob{}
		if err := c.getJSON(ctx, "/v1/videos/"+id, &job); err != nil {
			return reply{ID: id}, err
		}
		if job.ID == "" {
			job.ID = id
		}
		c.job.Store(new(job))
	}
	out := reply{ID: job.ID, Ext: "mp4", PeakMemoryMB: job.PeakMemoryMB, InferenceS: job.InferenceTimeS}
	f, err := c.download(ctx, "/v1/videos/"+job.ID+"/content", filepath.Join(c.dir, mediaName(0, "mp4")))
	if err != nil {
		return out, err
	}
	if f.Bytes > 0 {
		out.Files = []mediaFile{f}
	}
	return out, nil
}

// download streams the body of a GET to the file path, never holding more than a buffer of
// it in memory, and stops at the cap. The request's context (request_timeout) bounds the
// whole body, not only the headers. A partial file is removed.
func (c *client) download(ctx context.Context, path, dst string) (f mediaFile, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return f, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return f, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return f, &httpError{Method: req.Method, URL: req.URL.Path, Status: resp.StatusCode, Message: errorMessage(b)}
	}
	out, err := os.Create(dst)
	if err != nil {
		return f, &saveError{err}
	}
	defer func() {
		if cerr := out.Close(); cerr != nil && err == nil {
			err = &saveError{cerr}
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	n, err := io.Copy(fileWriter{out}, &limitedBody{r: resp.Body, left: c.limit()})
	var wf *writeFailure
	switch {
	case errors.As(err, &wf):
		return f, &saveError{wf.err}
	case errors.Is(err, errTooLarge):
		return f, &tooLargeError{Method: req.Method, URL: req.URL.Path, Limit: c.limit()}
	case err != nil:
		return f, fmt.Errorf("%s %s: read response after %d bytes: %w", req.Method, req.URL.Path, n, err)
	}
	return mediaFile{Path: dst, Bytes: n}, nil
}

// limit is the cap on one response body.
func (c *client) limit() int64 {
	if c.maxBytes > 0 {
		return c.maxBytes
	}
	return int64(suite.DefaultMaxOutputMB) << 20
}

var errTooLarge = errors.New("response too large")

// limitedBody reads at most left bytes and fails with errTooLarge past them (io.LimitReader
// would end quietly, and a cut file would pass as a whole one).
type limitedBody struct {
	r    io.Reader
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err // io.EOF: the body ended at the cap
	}
	n, err := l.r.Read(p[:min(int64(len(p)), l.left)])
	l.left -= int64(n)
	return n, err
}

// readChunk is the piece readCapped reads a body in.
const readChunk = 1 << 20

// readCapped reads all of r (a limitedBody) into memory holding no more than what it read
// (plus one chunk): the pieces are fixed-size chunks, never a buffer that doubles, so an
// endless body stopped at the cap has cost the cap, not 2–4 times it (io.ReadAll's growth and
// the garbage of its earlier buffers); a body that ends is joined once, into a slice of its
// exact size. size is the Content-Length, when known (-1 otherwise), to read into one slice.
func readCapped(r io.Reader, size int64) ([]byte, error) {
	if size >= 0 && size < readChunk {
		return io.ReadAll(r)
	}
	var chunks [][]byte
	total := 0
	for {
		c := make([]byte, readChunk)
		n, err := io.ReadFull(r, c)
		if n > 0 {
			chunks = append(chunks, c[:n])
			total += n
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, total)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil // each chunk can go once copied
	}
	return out, nil
}

// fileWriter wraps the errors of the file side of io.Copy, to tell a full disk apart from a
// broken response.
type fileWriter struct{ f *os.File }

func (w fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = &writeFailure{err}
	}
	return n, err
}

// writeFailure is an error of writing the output file.
type writeFailure struct{ err error }

func (w *writeFailure) Error() string { return w.err.Error() }

func (c *client) postJSON(ctx context.Context, path string, body map[string]any, into any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, into)
}

// maxInputBytes bounds an input a case sends (an input_reference, an image to edit, a realtime
// first frame: a file, or a URL's body), read as untrusted input: a pull request names it.
const maxInputBytes = 64 << 20

// multipart posts the fields plus files under fileField ("image", "image[]" for several,
// "input_reference"); non-string fields are sent as their JSON text.
func (c *client) multipart(ctx context.Context, path string, fields map[string]any, fileField string, files []string, into any) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := fields[k]
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("encode field %s: %w", k, err)
			}
			s = string(b)
		}
		if err := mw.WriteField(k, s); err != nil {
			return err
		}
	}
	if fileField == "image" && len(files) > 1 {
		fileField = "image[]"
	}
	for _, f := range files {
		data, name, err := c.inputs.read(ctx, f)
		if err != nil {
			return err
		}
		w, err := mw.CreateFormFile(fileField, name)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if err := mw.Close(); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, &buf)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.do(req, into)
}

func (c *client) getJSON(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	return c.do(req, into)
}

func (c *client) do(req *http.Request, into any) error {
	b, err := c.body(req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s %s: decode response: %w (body: %.200q)", req.Method, req.URL.Path, err, b)
	}
	return nil
}

// body sends a request and returns the body of a 2xx answer; anything else is an *httpError.
func (c *client) body(req *http.Request) ([]byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	limit := min(c.limit(), maxJSON)
	b, err := readCapped(&limitedBody{r: resp.Body, left: limit}, resp.ContentLength)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, &tooLargeError{Method: req.Method, URL: req.URL.Path, Limit: limit}
	case err != nil:
		return nil, fmt.Errorf("%s %s: read response: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &httpError{Method: req.Method, URL: req.URL.Path, Status: resp.StatusCode, Message: errorMessage(b)}
	}
	return b, nil
}

// errorMessage extracts the message of an error body: FastAPI's {"detail": "..."} (an
// HTTPException) or {"detail": [{"loc": [...], "msg": "..."}, ...]} (a 422 from request
// validation), or OpenAI's {"error": {"message": "..."}}; else the body itself, quoted.
func errorMessage(b []byte) string {
	var e struct {
		Error  any `json:"error"`
		Detail any `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil {
		if e.Error != nil {
			return errorText(e.Error)
		}
		if e.Detail != nil {
			return errorText(e.Detail)
		}
	}
	return quoted(b)
}

// maxMessage bounds a server's error message in a failure detail.
const maxMessage = 300

func quoted(b []byte) string {
	if len(b) > maxMessage {
		b = b[:maxMessage]
	}
	return strconv.Quote(string(b))
}

// maxErrorText bounds the server's words in a failure detail: a server can answer with an
// error of any size.
const maxErrorText = 2000

// errorText is the text of an error value, at most maxErrorText bytes: a string as it is, an
// object's "message" (or "msg"), FastAPI's validation list as "loc: msg" items joined by
// "; ", anything else as its JSON.
func errorText(v any) string {
	s := errorValue(v)
	if len(s) > maxErrorText {
		s = strings.ToValidUTF8(s[:maxErrorText], "") + "…"
	}
	return s
}

func errorValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		for _, k := range []string{"message", "msg"} {
			if m, ok := v[k].(string); ok {
				if loc, ok := v["loc"].([]any); ok && len(loc) > 0 {
					return fmt.Sprintf("%s: %s", joinLoc(loc), m)
				}
				return m
			}
		}
	case []any:
		parts := make([]string, 0, len(v))
		for _, item := range v {
			parts = append(parts, errorValue(item))
		}
		return strings.Join(parts, "; ")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return quoted(b)
}

// joinLoc writes a pydantic error location (["body", "seconds"]) as body.seconds.
func joinLoc(loc []any) string {
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}
