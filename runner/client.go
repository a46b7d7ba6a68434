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
	"sync/atomic"
	"time"

	"github.com/diffusion-check/diffusion-check/runner/suite"
)

// maxMedia bounds a response body; a server that streams without end must not fill the disk.
const maxMedia = 4 << 30

// client speaks the OpenAI-style image and video API of spec §2 to one server.
type client struct {
	http  *http.Client
	base  string
	model string
	poll  time.Duration
	// job is the last state the server reported of the video job in flight (nil before
	// one), read by heartbeats while the request waits.
	job atomic.Pointer[videoJob]
}

// reply is what one generation request returned.
type reply struct {
	ID string
	// Media holds the output files' bytes: one per image for images, one MP4 for videos.
	Media [][]byte
	// Ext is the file extension of the media (png, jpeg, webp, mp4).
	Ext          string
	PeakMemoryMB *float64
	InferenceS   *float64
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

// jobFailed is a video job that ended in status failed or cancelled.
type jobFailed struct {
	ID, Status, Message string
}

func (e *jobFailed) Error() string {
	return fmt.Sprintf("video job %s %s: %s", e.ID, e.Status, e.Message)
}

// generate sends one request of a case and waits for its complete output.
func (c *client) generate(ctx context.Context, cs *suite.Case) (reply, error) {
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
			B64JSON string `json:"b64_json"`
		} `json:"data"`
		PeakMemoryMB   *float64 `json:"peak_memory_mb"`
		InferenceTimeS *float64 `json:"inference_time_s"`
	}
	var err error
	if len(r.Images) > 0 {
		err = c.multipart(ctx, "/v1/images/edits", body, "image", r.Images, &resp)
	} else {
		err = c.postJSON(ctx, "/v1/images/generations", body, &resp)
	}
	if err != nil {
		return reply{}, err
	}
	out := reply{ID: resp.ID, Ext: r.OutputFormat, PeakMemoryMB: resp.PeakMemoryMB, InferenceS: resp.InferenceTimeS}
	for i, d := range resp.Data {
		b, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			return out, fmt.Errorf("response %s: data[%d].b64_json: %w", resp.ID, i, err)
		}
		out.Media = append(out.Media, b)
	}
	return out, nil
}

// videoJob is the job object of /v1/videos.
type videoJob struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	Progress float64 `json:"progress"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	PeakMemoryMB   *float64 `json:"peak_memory_mb"`
	InferenceTimeS *float64 `json:"inference_time_s"`
}

func (c *client) video(ctx context.Context, cs *suite.Case) (reply, error) {
	r := cs.Request
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
		return reply{}, errors.New("POST /v1/videos: response has no job id")
	}
	c.job.Store(new(job))
	tick := time.NewTicker(c.poll)
	defer tick.Stop()
	for job.Status != "completed" {
		switch job.Status {
		case "failed", "cancelled":
			msg := "no error message"
			if job.Error != nil {
				msg = job.Error.Message
			}
			return reply{ID: job.ID}, &jobFailed{ID: job.ID, Status: job.Status, Message: msg}
		}
		select {
		case <-ctx.Done():
			return reply{ID: job.ID}, fmt.Errorf("video job %s still %s (progress %.0f%%): %w", job.ID, job.Status, job.Progress, ctx.Err())
		case <-tick.C:
		}
		id := job.ID
		if err := c.getJSON(ctx, "/v1/videos/"+id, &job); err != nil {
			return reply{ID: id}, err
		}
		c.job.Store(new(job))
	}
	media, err := c.get(ctx, "/v1/videos/"+job.ID+"/content")
	out := reply{ID: job.ID, Ext: "mp4", PeakMemoryMB: job.PeakMemoryMB, InferenceS: job.InferenceTimeS}
	if err != nil {
		return out, err
	}
	out.Media = [][]byte{media}
	return out, nil
}

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
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		w, err := mw.CreateFormFile(fileField, filepath.Base(f))
		if err != nil {
			return err
		}
		w.Write(data)
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

func (c *client) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	return c.body(req)
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
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMedia))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &httpError{Method: req.Method, URL: req.URL.Path, Status: resp.StatusCode, Message: errorMessage(b)}
	}
	return b, nil
}

// errorMessage extracts the message of an OpenAI-style error body, or the body itself.
func errorMessage(b []byte) string {
	var e struct {
		Error  any `json:"error"`
		Detail any `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil {
		switch v := e.Error.(type) {
		case string:
			return v
		case map[string]any:
			if m, ok := v["message"].(string); ok {
				return m
			}
		}
		if e.Detail != nil {
			return fmt.Sprint(e.Detail)
		}
	}
	if len(b) > 300 {
		b = b[:300]
	}
	return strconv.Quote(string(b))
}
