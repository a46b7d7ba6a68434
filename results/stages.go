package results

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Stage is the time one pipeline stage took in one request.
type Stage struct {
	Name string
	Ms   float64
}

// Stages keeps the order in which the server reported its stages (the pipeline order), which a
// JSON object decoded into a Go map would lose. It is written as a JSON object in that order.
type Stages []Stage

// MarshalJSON writes the stages as one JSON object, keys in pipeline order.
func (s Stages) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, st := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(st.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(st.Ms)
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", st.Name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of stage name → milliseconds, keeping the key order.
func (s *Stages) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*s = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("stages: want a JSON object, got %v", tok)
	}
	var out Stages
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var ms float64
		if err := dec.Decode(&ms); err != nil {
			return fmt.Errorf("stage %q: %w", name, err)
		}
		out = append(out, Stage{Name: name, Ms: ms})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*s = out
	return nil
}

// Get returns the time of the named stage and whether it was reported.
func (s Stages) Get(name string) (float64, bool) {
	for _, st := range s {
		if st.Name == name {
			return st.Ms, true
		}
	}
	return 0, false
}
