package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

// addSeeds adds the fixtures of testdata/valid with one of exts and, when
// present, the corpus files with those extensions.
func addSeeds(f *testing.F, exts ...string) {
	var files []string
	for _, dir := range []string{filepath.Join("testdata", "valid"), filepath.Join(corpusDir, "*")} {
		matches, _ := filepath.Glob(filepath.Join(dir, "*"))
		files = append(files, matches...)
	}
	for _, file := range files {
		for _, ext := range exts {
			if strings.HasSuffix(file, ext) {
				if data, err := os.ReadFile(file); err == nil {
					f.Add(data)
				}
			}
		}
	}
}

// checkFuzzShape is checkShape without testify's costly formatting.
func checkFuzzShape(t *testing.T, ps state.Problems) {
	t.Helper()
	for _, p := range ps {
		if p.Path == "" || p.Message == "" || p.Line < 0 || p.Col < 0 || strings.Contains(p.Error(), "\n") {
			t.Fatalf("malformed problem %#v", p)
		}
	}
}

func FuzzValidateJSON(f *testing.F) {
	addSeeds(f, ".json")
	for _, s := range []string{"", "{}", `{"a":[1,2,{"b":null}]}`, `{"a":1,}`, `"\ud800"`, "[" + strings.Repeat("[", 1200), `{"type":"APEX","phase":"x","lastUpdated":"2026-01-31T13:20:00Z"}`} {
		f.Add([]byte(s))
	}
	v := newValidator(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzShape(t, v.Validate("f.json", data, "json"))
		wsProblems := v.Validate(".claude/workflow-state.json", data, "workflow-state")
		checkFuzzShape(t, wsProblems)
		checkFuzzShape(t, v.Validate("PhaseOutputs/s/phase-03-search.json", data, "phase-output"))
		checkFuzzShape(t, CheckTransition(".claude/initiative.json", data, data))

		doc, ps := DecodeJSON("f.json", data)
		if ps != nil {
			return
		}
		// What it decodes, encoding/json decodes the same (it is stricter:
		// duplicate keys, bad UTF-8 and deep nesting are refused).
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		require.NoError(t, dec.Decode(&want), "%q", data)
		require.Equal(t, want, doc, "%q", data)
		// A valid document stays valid, and the same, when re-encoded.
		enc, err := json.Marshal(doc)
		require.NoError(t, err)
		again, ps := DecodeJSON("f.json", enc)
		require.Empty(t, ps, "re-encoded %q", enc)
		require.Equal(t, doc, again)
		if !wsProblems.Invalid() {
			require.Empty(t, v.Validate(".claude/workflow-state.json", enc, "workflow-state"), "re-encoded %q", enc)
		}
	})
}

func FuzzDecodeYAML(f *testing.F) {
	addSeeds(f, ".yaml", ".yml")
	for _, s := range []string{"", "a: 1\n", "a: &x [1]\nb: *x\n", "<<: {a: 1}\n", "a: 1\na: 2\n", "---\na\n---\nb\n", billionLaughs, "? [a]\n: b\n", "a: .inf\n", "t: 2026-01-31T13:20:00Z\n"} {
		f.Add([]byte(s))
	}
	v := newValidator(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, ps := DecodeYAML("f.yaml", data)
		checkFuzzShape(t, ps)
		checkFuzzShape(t, v.Validate("PhaseOutcomes/f/001-x.yaml", data, "phase-outcome"))
		checkFuzzShape(t, v.Validate("PhaseOutcomes/f/002-resolution-D-1.yaml", data, "decision-resolution"))
		if ps != nil {
			return
		}
		// Every decoded document is JSON, and survives a round trip.
		enc, err := json.Marshal(doc)
		require.NoError(t, err)
		again, ps := DecodeJSON("f.json", enc)
		require.Empty(t, ps, "re-encoded %q", enc)
		require.Equal(t, doc, again)
	})
}

func FuzzValidateJSONL(f *testing.F) {
	addSeeds(f, ".jsonl")
	for _, s := range []string{"", "\n\n", `{"type":"entity","name":"a","entityType":"t","observations":[]}`, "{\"type\":\"relation\"}\r\n{", "x\ny\n"} {
		f.Add([]byte(s))
	}
	v := newValidator(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		ps := v.Validate(".claude/memory.jsonl", data, "jsonl-mcp")
		checkFuzzShape(t, ps)
		n := bytes.Count(data, []byte("\n")) + 1
		for _, p := range ps {
			if p.Line > n {
				t.Fatalf("problem on line %d of a %d-line file: %s", p.Line, n, p.Error())
			}
		}
		// Each valid line is valid on its own.
		if !ps.Invalid() {
			for _, line := range bytes.Split(data, []byte("\n")) {
				if len(bytes.TrimSpace(line)) > 0 {
					assert.Empty(t, v.Validate("l.json", line, "mcp-memory-line"))
				}
			}
		}
	})
}
