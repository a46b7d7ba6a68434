package pictures

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
)

// Entry is one failing request in the index: its pictures (paths relative to the index's
// folder) and the lines that say what failed.
type Entry struct {
	Case     string
	Index    int
	Of       int
	Lines    []string
	Pictures []string
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; background: #f5f6f8; color: #191919; }
section { background: #fff; border: 1px solid #dee1e6; border-radius: 6px; padding: 1em; margin-bottom: 1.5em; }
h2 { margin: 0 0 .4em 0; font-size: 1.1em; }
ul { margin: .2em 0 .8em 0; }
.pictures { display: flex; flex-wrap: wrap; gap: 1em; }
.pictures img { max-width: 100%; border: 1px solid #dee1e6; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{- if not .Entries}}
<p>No consistency failures.</p>
{{- end}}
{{- range .Entries}}
<section id="{{.Case}}-request-{{.Index}}">
<h2>{{.Case}} — request {{.Index}}/{{.Of}}</h2>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
<div class="pictures">{{range .Pictures}}<a href="{{.}}"><img src="{{.}}" alt="{{.}}"></a>{{end}}</div>
</section>
{{- end}}
</body>
</html>
`))

// WriteIndex writes an HTML page at path that shows every entry's pictures, in the order
// given, side by side with what failed.
func WriteIndex(path, title string, entries []Entry) error {
	var b bytes.Buffer
	if err := indexPage.Execute(&b, struct {
		Title   string
		Entries []Entry
	}{title, entries}); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
