package layers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// testRepo is a git repository with an engine whose clock the test sets.
type testRepo struct {
	t   *testing.T
	dir string
	eng *engine.Engine
	now time.Time
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	r := &testRepo{t: t, dir: dir, now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	return r
}

// open (re)opens the engine, as each CLI run does, after .strata.yaml is written.
func (r *testRepo) open() {
	r.t.Helper()
	eng, err := engine.Open(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	eng.Now = func() time.Time { return r.now }
	r.eng = eng
}

func (r *testRepo) write(rel string, data []byte) {
	r.t.Helper()
	name := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) read(rel string) []byte {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// recordAll records every kept file, as `strata record` does.
func (r *testRepo) recordAll() {
	r.t.Helper()
	all, err := r.eng.AllPaths()
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.eng.Record(all, state.SourceRecord); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) resolve() ([]Resolution, []string) {
	r.t.Helper()
	var notes []string
	res, err := New(r.eng, nil).Resolve(false, func(l string) { notes = append(notes, l) })
	if err != nil {
		r.t.Fatal(err)
	}
	return res, notes
}

// TestResolveRewritesOnlyTheEditedMembers: L3 is newer, so resolve
// rewrites the workflow state from it; only the members whose value the
// entity changes (phase, lastUpdated) get new bytes. CRLF, four-space
// indentation, key order, a nested object, a 20-digit integer, 1.0 and an
// escaped string keep theirs.
func TestResolveRewritesOnlyTheEditedMembers(t *testing.T) {
	r := newTestRepo(t)
	before := "{\r\n    \"type\": \"APEX\",\r\n    \"phase\": \"plan\",\r\n    \"lastUpdated\": \"2026-11-22T10:00:00Z\",\r\n" +
		"    \"zeta\": {\"b\": 1, \"a\": 2},\r\n    \"bigId\": 12345678901234567890,\r\n    \"ratio\": 1.0,\r\n" +
		"    \"note\": \"caf\\u00e9\"\r\n}\r\n"
	r.write(WorkflowStatePath, []byte(before))
	r.open()
	r.recordAll()
	r.now = r.now.Add(5 * time.Second)
	r.write(".claude/memory.jsonl", []byte(`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["type: APEX","phase: implement","updated: 2026-11-22T10:00:05Z"]}`+"\n"))
	r.recordAll()
	res, notes := r.resolve()
	if len(res) == 0 || res[0].Result != "resolved" {
		t.Fatalf("resolutions %+v, notes %q", res, notes)
	}
	want := strings.NewReplacer(`"plan"`, `"implement"`, `10:00:00Z`, `10:00:05Z`).Replace(before)
	if got := string(r.read(WorkflowStatePath)); got != want {
		t.Errorf("workflow state after resolve:\n%q\nwant\n%q", got, want)
	}
}

// TestResolveEscapesFormatCharacters: a value the graph holds with a bidi
// control (escaped there, as JSON.stringify or Python writes it) is
// written into the L1 file as the \u202e escape, as every JSON strata
// prints writes it, not as the raw U+202E that cat and git diff show
// reordered; the file decodes to the same value (attack35b L3).
func TestResolveEscapesFormatCharacters(t *testing.T) {
	r := newTestRepo(t)
	r.write(WorkflowStatePath, []byte("{\n  \"type\": \"APEX\",\n  \"phase\": \"plan\",\n  \"lastUpdated\": \"2026-11-22T10:00:00Z\"\n}\n"))
	r.open()
	r.recordAll()
	r.now = r.now.Add(5 * time.Second)
	r.write(".claude/memory.jsonl", []byte(`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["type: APEX","phase: review \u202egnp.exe\u200b<&>","updated: 2026-11-22T10:00:05Z"]}`+"\n"))
	r.recordAll()
	res, notes := r.resolve()
	if len(res) == 0 || res[0].Result != "resolved" {
		t.Fatalf("resolutions %+v, notes %q", res, notes)
	}
	got := string(r.read(WorkflowStatePath))
	want := "{\n  \"type\": \"APEX\",\n  \"phase\": \"review \\u202egnp.exe\\u200b<&>\",\n  \"lastUpdated\": \"2026-11-22T10:00:05Z\"\n}\n"
	if got != want {
		t.Errorf("workflow state after resolve:\n%q\nwant\n%q", got, want)
	}
}

// TestUpsertKeepsTheEntityLine: the write protocol (record --layers)
// updates the workflow-state entity of a CRLF graph file of a fork server
// (the corpus's ontology-manager lines, with createdAt and version) in
// place: its other members, the user's own observation and the CRLF stay;
// only the phase observation changes.
func TestUpsertKeepsTheEntityLine(t *testing.T) {
	corpus := corpusDir()
	if corpus == "" {
		t.Skip("no shared/corpus beside the repository: skipped")
	}
	real, err := os.ReadFile(filepath.Join(corpus, "mcp-memory", "ontology-manager__memory.jsonl"))
	if err != nil {
		t.Skipf("corpus file: %v: skipped", err)
	}
	var graph []byte
	for _, l := range strings.SplitAfterN(string(real), "\n", 3)[:2] {
		graph = append(graph, strings.TrimSuffix(l, "\n")+"\r\n"...)
	}
	const line = `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["type: APEX","phase: %s","my own note"],"createdAt":"2025-01-01T00:00:00Z","version":7}` + "\r\n"
	before := append(graph, fmt.Sprintf(line, "plan")...)
	r := newTestRepo(t)
	r.write(".claude/memory.jsonl", before)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	r.now = r.now.Add(time.Second)
	outs := r.step(`{"type":"APEX","phase":"implement","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n", state.SourceRecord)
	if _, err := New(r.eng, func(m string) { t.Log(m) }).AfterRecord(outs); err != nil {
		t.Fatal(err)
	}
	want := string(graph) + strings.Replace(fmt.Sprintf(line, "implement"), `"my own note"`, `"updated: 2026-11-22T10:00:00Z","my own note"`, 1)
	if got := string(r.read(".claude/memory.jsonl")); got != want {
		t.Errorf("graph file after record --layers:\n%q\nwant\n%q", got, want)
	}
}
