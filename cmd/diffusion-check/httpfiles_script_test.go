package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTPFiles serves a folder of the script over HTTP until the script ends, for a suite that
// names a URL (a realtime case's first frame):
//
//	httpfiles DIR [FILE...]
//
// $FILES_URL is the server's base URL (http://127.0.0.1:PORT), and in each FILE the text
// "$FILES_URL" is replaced by it: a script does not expand the files it holds.
func cmdHTTPFiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: httpfiles DIR [FILE...]")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(ts.MkAbs(args[0]))))
	ts.Defer(srv.Close)
	ts.Setenv("FILES_URL", srv.URL)
	for _, f := range args[1:] {
		p := ts.MkAbs(f)
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, bytes.ReplaceAll(b, []byte("$FILES_URL"), []byte(srv.URL)), 0o644))
	}
}
