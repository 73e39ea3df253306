package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ours = Entity{Name: "workflow-state", EntityType: "workflow_state", Observations: []string{"type: APEX", "phase: implement"}}

const oursLine = `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["type: APEX","phase: implement"]}`

func TestUpsertLines(t *testing.T) {
	other := `{"type":"entity","name":"x","entityType":"t","observations":["a"]}`
	rel := `{"type":"relation","from":"x","to":"y","relationType":"r"}`
	tests := []struct {
		name, in, want string
		changed        bool
	}{
		{"empty file", "", oursLine + "\n", true},
		{"after the last entity, before relations", other + "\n" + rel + "\n", other + "\n" + oursLine + "\n" + rel + "\n", true},
		{"before the first relation", rel + "\n" + rel + "\n", oursLine + "\n" + rel + "\n" + rel + "\n", true},
		{"no final newline stays so", other, other + "\n" + oursLine, true},
		{"relations only, no final newline", rel, oursLine + "\n" + rel, true},
		{"unparsable lines are kept", "not json\n\n", "not json\n\n" + oursLine + "\n", true},
		{"replaced in place", other + "\n" + `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["phase: old"]}` + "\n" + rel,
			other + "\n" + oursLine + "\n" + rel, true},
		{"same entity, other key order: kept", `{"name":"workflow-state","type":"entity","observations":["type: APEX","phase: implement"],"entityType":"workflow_state","createdAt":"x"}` + "\n",
			`{"name":"workflow-state","type":"entity","observations":["type: APEX","phase: implement"],"entityType":"workflow_state","createdAt":"x"}` + "\n", false},
		{"identical line: unchanged", oursLine, oursLine, false},
		{"a fork's object observations are kept", `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":[{"text":"x","timestamp":1}, "phase: old" ,7,null]}` + "\n",
			`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":[{"text":"x","timestamp":1},"type: APEX","phase: implement",7,null]}` + "\n", true},
		{"later lines of the name kept byte for byte", `{"type":"entity","name":"workflow-state","entityType":"e","observations":["note 1","phase: old"]}` + "\n" + other + "\n" + `{"type":"entity","name":"workflow-state","entityType":"e","observations":["note 2","phase: older"]}`,
			`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["note 1","type: APEX","phase: implement"]}` + "\n" + other + "\n" + `{"type":"entity","name":"workflow-state","entityType":"e","observations":["note 2","phase: older"]}`, true},
		{"the user's observations keep their bytes", `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["caf\u00e9","phase: x"]}`,
			`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["caf\u00e9","type: APEX","phase: implement"]}`, true},
		{"CRLF lines kept, a new line ends in CRLF", other + "\r\n" + rel + "\r\n", other + "\r\n" + oursLine + "\r\n" + rel + "\r\n", true},
		{"CRLF, no final newline", other + "\r\n" + other, other + "\r\n" + other + "\r\n" + oursLine, true},
		{"CRLF of the line kept", `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["phase: plan"]}` + "\r\n",
			oursLine + "\r\n", true},
		{"other members and the user's observations kept",
			`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["my note","type: APEX","phase: plan","updated: x","also mine"],"createdAt":"2025-01-01T00:00:00Z","version":7}` + "\r\n",
			`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["my note","type: APEX","phase: implement","also mine"],"createdAt":"2025-01-01T00:00:00Z","version":7}` + "\r\n", true},
		{"key order and entityType of the line", `{"name":"workflow-state","observations":["note"],"type":"entity","entityType":"old","_savedAt":1}`,
			`{"name":"workflow-state","observations":["type: APEX","phase: implement","note"],"type":"entity","entityType":"workflow_state","_savedAt":1}`, true},
		{"missing entityType added before the closing brace", `{"type":"entity","name":"workflow-state","observations":["type: APEX","phase: implement"]}`,
			`{"type":"entity","name":"workflow-state","observations":["type: APEX","phase: implement"],"entityType":"workflow_state"}`, true},
		{"a Name member is not name", `{"type":"entity","Name":"workflow-state","entityType":"x","observations":[]}` + "\n",
			`{"type":"entity","Name":"workflow-state","entityType":"x","observations":[]}` + "\n" + oursLine + "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := upsertLines([]byte(tt.in), []Entity{ours})
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.changed, changed)
			again, changed, _ := upsertLines(got, []Entity{ours})
			assert.False(t, changed, "idempotent")
			assert.Equal(t, string(got), string(again))
		})
	}
}

// TestUpsertRefusesObservationsNotArray: a first line of the name whose
// observations are not an array is neither replaced nor written to; the
// other entities are, and the error names the line and column.
func TestUpsertRefusesObservationsNotArray(t *testing.T) {
	for _, v := range []string{`"notarray"`, `{"text":"x"}`, `null`, `3`} {
		bad := `{"type":"entity","name":"workflow-state","entityType":"t","observations":` + v + `}`
		in := `{"type":"entity","name":"x","entityType":"t","observations":[]}` + "\n" + bad + "\n"
		other := Entity{Name: "initiative-checkpoint", EntityType: "initiative", Observations: []string{"status: created"}}
		out, changed, err := upsertLines([]byte(in), []Entity{ours, other})
		var oe *ObservationsError
		require.ErrorAs(t, err, &oe, v)
		assert.Equal(t, 2, oe.Line)
		assert.Equal(t, len(bad)-len(v), oe.Col)
		assert.True(t, changed)
		assert.Equal(t, in+renderEntityString(other)+"\n", string(out), "the other entity written after it, the line kept")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	in := `{"type":"entity","name":"workflow-state","entityType":"t","observations":"notarray"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(in), 0o644))
	changed, err := Upsert(path, []Entity{ours})
	assert.False(t, changed)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, path+`:1:74: /observations: value must be an array, got a string: entity "workflow-state" not written (strata replaces no observations it cannot keep; make it an array)`, err.Error())
	data, _ := os.ReadFile(path)
	assert.Equal(t, in, string(data))
}

// TestEntityReadsTheLineUpsertEdits: the first line of the name, its string
// observations only when it holds a fork's objects too.
func TestEntityReadsTheLineUpsertEdits(t *testing.T) {
	g := Parse([]byte(`{"type":"entity","name":"workflow-state","entityType":"t","observations":[{"text":"x"},"phase: a","updated: 1"]}` + "\n" +
		`{"type":"entity","name":"workflow-state","entityType":"t","observations":["phase: b"]}` + "\n"))
	e, ok := g.Entity("workflow-state")
	require.True(t, ok)
	assert.Equal(t, []string{"phase: a", "updated: 1"}, e.Observations)
	assert.Len(t, g.Entities, 1, "Entities lists the well-formed lines only")
}

func renderEntityString(e Entity) string { return string(renderEntity(e)) }

func TestRenderMatchesJSONStringify(t *testing.T) {
	// Expected bytes are what node's JSON.stringify writes (checked against
	// node in TestRenderAgainstNode when node is installed).
	tests := map[string]string{
		"plain":              `"plain"`,
		"a\"b\\c":            `"a\"b\\c"`,
		"\b\t\n\f\r":         `"\b\t\n\f\r"`,
		"\x00\x01\x1f\x7f":   `"\u0000\u0001\u001f` + "\x7f" + `"`,
		"<a>&</a>":           `"<a>&</a>"`,
		"\u2028\u2029":       "\"\u2028\u2029\"",
		"é中文🙂":               `"é中文🙂"`,
		"bad \xff utf8":      "\"bad \uFFFD utf8\"",
		"/slash":             `"/slash"`,
		"\u00e9\u0301 mixed": "\"\u00e9\u0301 mixed\"",
	}
	for in, want := range tests {
		assert.Equal(t, want, string(appendJSString(nil, in)), "%q", in)
		var back string
		require.NoError(t, json.Unmarshal(appendJSString(nil, in), &back))
	}
}

func TestParse(t *testing.T) {
	g := Parse([]byte("garbage\n" + oursLine + "\n\n" +
		`{"type":"relation","from":"a","to":"b","relationType":"r"}` + "\n" +
		`{"type":"entity","name":"f","entityType":"t","observations":[{"text":"x"}]}` + "\n" +
		`{"type":"entity","name":"workflow-state","entityType":"dup","observations":[]}`))
	require.Len(t, g.Entities, 2)
	assert.Equal(t, 2, g.Skipped)
	e, ok := g.Entity("workflow-state")
	require.True(t, ok)
	assert.Equal(t, ours, e, "the first of a name, as the server finds it")
	assert.Equal(t, []Relation{{"a", "b", "r"}}, g.Relations)

	e = Entity{Observations: []string{"phase: a", "updated: 2026-11-22T10:00:00Z", "phase: b", "updated: bad"}}
	v, _ := e.Value("phase")
	assert.Equal(t, "b", v)
	_, ok = e.Updated()
	assert.False(t, ok, "the last updated: wins, and it does not parse")
	e.Observations = e.Observations[:3]
	u, ok := e.Updated()
	require.True(t, ok)
	assert.Equal(t, "2026-11-22T10:00:00Z", u.UTC().Format("2006-01-02T15:04:05Z07:00"))
}

// corpusFiles are the real graph files of ../shared/corpus/mcp-memory.
func corpusFiles(t testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "mcp-memory", "*"))
	if len(files) == 0 {
		t.Skip("no corpus at ../shared/corpus/mcp-memory")
	}
	return files
}

// TestCorpusRoundTrip: on every real file, upserting our entities and then
// removing them gives back the exact bytes, and every other line is kept.
func TestCorpusRoundTrip(t *testing.T) {
	for _, f := range corpusFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			orig, err := os.ReadFile(f)
			require.NoError(t, err)
			ents := []Entity{ours, {Name: "initiative-checkpoint", EntityType: "initiative", Observations: []string{"status: in_progress", "note: \"quoted\" <tag> \u2028"}}}
			out, changed, _ := upsertLines(orig, ents)
			require.True(t, changed)
			checkPreserved(t, orig, out, map[string]bool{"workflow-state": true, "initiative-checkpoint": true})
			g := Parse(out)
			for _, e := range ents {
				got, ok := g.Entity(e.Name)
				require.True(t, ok)
				assert.Equal(t, e, got)
			}
			back, changed := removeLines(out, []string{"workflow-state", "initiative-checkpoint"}, nil)
			require.True(t, changed)
			assert.Equal(t, string(orig), string(back))

			// through the file protocol too
			path := filepath.Join(t.TempDir(), "memory.jsonl")
			require.NoError(t, os.WriteFile(path, orig, 0o640))
			settle = 0
			if notGraph(orig) != nil {
				// a file the server cannot load (ictserve's is a note that
				// the graph moved): never written into
				_, err = Upsert(path, ents)
				require.ErrorIs(t, err, ErrUnavailable)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, string(orig), string(got))
				return
			}
			changed, err = Upsert(path, ents)
			require.NoError(t, err)
			require.True(t, changed)
			changed, err = Remove(path, "workflow-state", "initiative-checkpoint")
			require.NoError(t, err)
			require.True(t, changed)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(orig), string(got))
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "the file keeps its mode")
		})
	}
}

// checkPreserved asserts that out holds every line of orig that is not an
// entity line of the given names, byte for byte and in order (the last one,
// when it had no newline and a line now follows it, may have taken the
// "\r" of the file's CRLF endings with its newline), and that every other
// line of out is valid JSON.
func checkPreserved(t testing.TB, orig, out []byte, names map[string]bool) {
	t.Helper()
	var want [][]byte
	unended := -1 // want's index of orig's last line when it has no newline
	for _, l := range splitLines(orig) {
		if p := parseLine(l.text); p.kind == "entity" && p.named && names[p.name] {
			continue
		}
		if !l.nl {
			unended = len(want)
		}
		want = append(want, l.text)
	}
	i := 0
	for _, l := range splitLines(out) {
		if i < len(want) && (bytes.Equal(l.text, want[i]) || i == unended && bytes.Equal(l.text, append(want[i][:len(want[i]):len(want[i])], '\r'))) {
			i++
			continue
		}
		if !json.Valid(l.text) {
			t.Fatalf("wrote a line JSON.parse rejects: %q", l.text)
		}
		// a line of one of the names: edited, added, or (a later line of
		// the name, which upsert leaves) kept
		if p := parseLine(l.text); p.kind != "entity" || !p.named || !names[p.name] {
			t.Fatalf("changed or added a line that is not ours: %q", l.text)
		}
	}
	if i != len(want) {
		t.Fatalf("lost line %d of the original: %q", i, want[i])
	}
}

func FuzzUpsert(f *testing.F) {
	f.Add([]byte(""), "workflow-state", "phase: x")
	f.Add([]byte(oursLine), "workflow-state", "phase: y")
	f.Add([]byte("{\"type\":\"entity\",\"name\":\"a\"}\r\n\n{"), "a", "\x00\u2028")
	f.Add([]byte(`{"type":"relation","from":"a","to":"b","relationType":"r"}`), "n", "")
	f.Add([]byte(`{"type":"entity","name":"n","entityType":"t","observations":["o"]}`+"\n"+`{"type":"entity","name":"n"}`), "n", "o")
	if files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "mcp-memory", "*")); len(files) > 0 {
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data, "workflow-state", "type: APEX")
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, name, obs string) {
		if !utf8.ValidString(name) || !utf8.ValidString(obs) {
			t.Skip() // the server reads UTF-8; such a name could not be looked up again
		}
		e := Entity{Name: name, EntityType: "t", Observations: []string{obs}}
		out, _, err := upsertLines(data, []Entity{e})
		checkPreserved(t, data, out, map[string]bool{name: true})
		// of the name's lines only the first is edited: the others stay
		first := -1
		var others [][]byte
		for i, l := range splitLines(data) {
			if p := parseLine(l.text); p.kind == "entity" && p.named && p.name == name {
				if first < 0 {
					first = i
					continue
				}
				others = append(others, bytes.TrimSuffix(l.text, []byte("\r")))
			}
		}
		k := 0
		for _, l := range splitLines(out) {
			if k < len(others) && bytes.Equal(bytes.TrimSuffix(l.text, []byte("\r")), others[k]) {
				k++
			}
		}
		if k < len(others) {
			t.Fatalf("a later line of %q was changed or dropped: %q", name, others[k])
		}
		var oe *ObservationsError
		if errors.As(err, &oe) {
			if !bytes.Equal(out, data) || oe.Line != first+1 {
				t.Fatalf("refused %v, yet wrote %q", err, out)
			}
			return
		}
		require.NoError(t, err)
		got, ok := Parse(out).Entity(name)
		if !ok || !Same(stateNone, got, e) || got.EntityType != "t" || !slices.Contains(got.Observations, obs) {
			t.Fatalf("entity not found as written: %+v", got)
		}
		// any other observation is one the entity had before: the user's
		// own, which the upsert keeps in place
		var before Entity
		if first >= 0 {
			if p := parseLine(splitLines(data)[first].text); p.own != nil {
				before = *p.own
			}
		}
		for _, o := range got.Observations {
			if o != obs && !slices.Contains(before.Observations, o) {
				t.Fatalf("observation %q came from nowhere: %+v", o, got)
			}
		}
		if again, changed, _ := upsertLines(out, []Entity{e}); changed || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent")
		}
		hadName := false
		for _, l := range splitLines(data) {
			if p := parseLine(l.text); p.kind == "entity" && p.named && p.name == name {
				hadName = true
			}
		}
		if !hadName {
			back, _ := removeLines(out, []string{name}, nil)
			if !bytes.Equal(back, data) {
				t.Fatalf("remove did not undo upsert:\n%q\n%q", data, back)
			}
		}
	})
}

const stateNone = "" // a class with no catalogue: Same compares nothing

// Remove takes out only the first line of a name, strata's (the one Upsert
// edits): a later line of the same name is the memory server's and keeps
// its bytes, as do relations (attack22-verify V-8).
func TestRemoveKeepsTheServersLaterLine(t *testing.T) {
	data := []byte(`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["phase: plan","mine"]}` + "\r\n" +
		`{"type":"entity","name":"Alice","entityType":"person","observations":[]}` + "\r\n" +
		`{"type":"entity","name":"workflow-state","entityType":"note","observations":["second line, server-made"]}` + "\r\n" +
		`{"type":"relation","from":"Alice","to":"workflow-state","relationType":"owns"}` + "\r\n")
	want := data[bytes.IndexByte(data, '\n')+1:]
	got, changed := removeLines(data, []string{"workflow-state"}, nil)
	require.True(t, changed)
	require.Equal(t, string(want), string(got))
	got, changed = removeLines(data, []string{"nobody"}, nil)
	require.False(t, changed)
	require.Equal(t, string(data), string(got))
}

// Through the file protocol, which applies an edit again until the file
// holds it, a clear still takes out only strata's line: the memory
// server's later line of the name stays (attack22-journal J-9).
func TestRemoveThroughTheProtocolKeepsTheServersLine(t *testing.T) {
	settle = 0
	data := `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["phase: plan"]}` + "\n" +
		`{"type":"entity","name":"workflow-state","entityType":"note","observations":["second line, server-made"]}` + "\n"
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	changed, err := UpsertRemove(path, nil, []string{"workflow-state"})
	require.NoError(t, err)
	require.True(t, changed)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data[strings.IndexByte(data, '\n')+1:], string(got))
}

// A graph file that starts with a byte order mark is not written: the
// memory server cannot load it (Node keeps the mark, JSON.parse fails on
// it), and strata cannot tell its first entity line (attack22-final F-1).
func TestUpsertRefusesAByteOrderMark(t *testing.T) {
	settle = 0
	data := "\xEF\xBB\xBF" + `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["phase: plan"]}` + "\n" +
		`{"type":"entity","name":"workflow-state","entityType":"note","observations":["server line"]}` + "\n"
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	_, err := UpsertRemove(path, []Entity{{Name: "workflow-state", EntityType: "workflow_state", Observations: []string{"phase: implement"}}}, nil)
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "byte order mark")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data, string(got))
}
