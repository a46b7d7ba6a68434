// Package fetch reads an http(s) URL that may be hostile (a suite's realtime first frame, a
// request's material URI at the reference server): http and https only, every redirect again
// http(s) and at most a few, one timeout for the whole fetch under the caller's context, a
// body cap, and a non-2xx answer an error. It is the one way the tool fetches such a URL, as
// internal/inputfile is the one way it opens such a file.
package fetch
