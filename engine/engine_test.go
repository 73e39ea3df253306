package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// newRepo makes a git work tree in a temp dir with a default .strata.yaml
// and opens an engine on it whose clock starts at t0 and moves a minute per
// reading.
func newRepo(t testing.TB) *Engine {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	t.Cleanup(gitstore.WaitHousekeeping) // a background repack still writing in dir fails its removal
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, config.FileName), []byte("# defaults\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	e.Now = func() time.Time { now = now.Add(time.Minute); return now }
	return e
}

// withConfig writes yaml as e's .strata.yaml and returns the repository
// opened again with it.
func withConfig(tb testing.TB, e *Engine, yaml string) *Engine {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(e.Config().Root, config.FileName), []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	e, err := Open(e.Config().Root)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// withOwnFiles is withConfig for rules of the user's own that keep files
// git does not track (paths): the user's git configuration keeps them
// (strata.keepPrivate), as only it keeps an untracked file no built-in
// rule matches.
func withOwnFiles(tb testing.TB, e *Engine, yaml string, paths ...string) *Engine {
	tb.Helper()
	for _, p := range paths {
		if out, err := exec.Command("git", "-C", e.Config().Root, "config", "--add", "strata.keepPrivate", p).CombinedOutput(); err != nil {
			tb.Fatalf("git config: %v: %s", err, out)
		}
	}
	return withConfig(tb, e, yaml)
}

func kept(t *testing.T, e *Engine, path string) config.Kept {
	t.Helper()
	k, ok := e.Config().Classify(path)
	if !ok {
		t.Fatalf("%s is not kept", path)
	}
	return k
}

// edit writes a kept file as a user's editor would, bypassing the engine.
func edit(t testing.TB, e *Engine, path, content string) {
	t.Helper()
	name := e.Config().Abs(path)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func onDisk(t *testing.T, e *Engine, path string) string {
	t.Helper()
	data, err := os.ReadFile(e.Config().Abs(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func record(t *testing.T, e *Engine, paths ...string) []Outcome {
	t.Helper()
	ks := make([]config.Kept, len(paths))
	for i, p := range paths {
		ks[i] = kept(t, e, p)
	}
	outs, err := e.Record(ks, state.SourceRecord)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

func TestPutChecksWritesAndRecords(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/notes.json")

	o, err := e.Put(k, "", []byte(`{"a": 1}`+"\n"), state.SourceResolve)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Written || o.Entry == nil || o.Invalid() {
		t.Fatalf("Put = %+v, want written and recorded", o)
	}
	if got := onDisk(t, e, k.Path); got != `{"a": 1}`+"\n" {
		t.Errorf("on disk %q", got)
	}
	ents, err := e.Log(state.LogQuery{Path: k.Path})
	if err != nil || len(ents) != 1 || ents[0].Source != state.SourceResolve {
		t.Fatalf("Log = %+v, %v; want one entry with source resolve", ents, err)
	}
	head, _ := e.Head()

	// An invalid version is refused before anything is written or recorded.
	o, err = e.Put(k, gitstore.BlobHash([]byte(`{"a": 1}`+"\n")), []byte(`{"a": `), state.SourceResolve)
	if err != nil {
		t.Fatal(err)
	}
	if o.Written || !o.Invalid() || o.Entry != nil || o.Rejected != nil {
		t.Fatalf("Put(invalid) = %+v, want refused with problems", o)
	}
	if got := onDisk(t, e, k.Path); got != `{"a": 1}`+"\n" {
		t.Errorf("refused Put changed the file: %q", got)
	}
	if h, _ := e.Head(); h != head {
		t.Errorf("refused Put moved the state ref")
	}
	if rej, _ := e.RejectedLog(state.LogQuery{}); len(rej) != 0 {
		t.Errorf("refused Put quarantined %+v", rej)
	}
}

func TestPutUnkeptPathWritesWithoutRecording(t *testing.T) {
	e := newRepo(t)
	k := config.Kept{Path: "notes/settings.json", Class: state.ClassClaudeJSON, Schema: "json"}
	o, err := e.Put(k, "", []byte("{}\n"), state.SourceRecord)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Written || o.Entry != nil {
		t.Fatalf("Put = %+v, want written, not recorded", o)
	}
	if h, _ := e.Head(); h != "" {
		t.Errorf("a path no rule keeps was recorded (%s)", h)
	}
}

func TestRecordQuarantinesOnceAndIsIdempotent(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", "{}\n")
	if outs := record(t, e, ".claude/a.json"); outs[0].Entry == nil {
		t.Fatalf("first record = %+v", outs[0])
	}
	if outs := record(t, e, ".claude/a.json"); outs[0].Entry != nil {
		t.Fatalf("recording unchanged content made %+v", outs[0].Entry)
	}
	edit(t, e, ".claude/a.json", "{")
	outs := record(t, e, ".claude/a.json")
	if outs[0].Rejected == nil || !outs[0].Invalid() {
		t.Fatalf("invalid record = %+v, want quarantined", outs[0])
	}
	if outs := record(t, e, ".claude/a.json"); outs[0].Rejected != nil {
		t.Errorf("the same invalid version was quarantined twice")
	}
	rec, err := e.Show(".claude/a.json", Point{})
	if err != nil || string(rec) != "{}\n" {
		t.Errorf("head keeps %q, %v; want the last valid version", rec, err)
	}
}

// Recording the same invalid versions of several files again quarantines
// none of them again: each is compared with the newest quarantined version
// of its own path, not with the rejected ref's head (the last of them).
func TestRecordQuarantinesSeveralOnce(t *testing.T) {
	e := newRepo(t)
	paths := []string{".claude/a.json", ".claude/b.json", ".claude/c.json"}
	for _, p := range paths {
		edit(t, e, p, "{")
	}
	for run := 0; run < 2; run++ {
		for i, o := range record(t, e, paths...) {
			if !o.Invalid() || (o.Rejected != nil) != (run == 0) {
				t.Fatalf("run %d, %s: %+v (quarantined %v)", run, paths[i], o, o.Rejected != nil)
			}
		}
	}
	if ents, err := e.store.Log(e.store.RejectedRef(), gitstore.LogQuery{}); err != nil || len(ents) != len(paths) {
		t.Fatalf("%d versions on the rejected ref (%v), want %d", len(ents), err, len(paths))
	}
	edit(t, e, paths[0], "{{") // a new invalid version is quarantined
	if outs := record(t, e, paths...); outs[0].Rejected == nil || outs[1].Rejected != nil || outs[2].Rejected != nil {
		t.Fatalf("after editing %s: %+v", paths[0], outs)
	}
}

func TestRestoreWritesAndRecords(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	first, _ := e.Head()
	edit(t, e, ".claude/a.json", `{"v": 2}`)
	record(t, e, ".claude/a.json")

	outs, err := e.Restore([]config.Kept{kept(t, e, ".claude/a.json")}, Point{Rev: first})
	if err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, e, ".claude/a.json"); got != `{"v": 1}` {
		t.Errorf("restored %q", got)
	}
	if len(outs) != 1 || !outs[0].Written || outs[0].Entry == nil || outs[0].Entry.Source != state.SourceRestore {
		t.Errorf("Restore = %+v", outs)
	}
}

// TestRestoreAllChecksEveryVersionFirst: one version of the point that fails
// its schema stops RestoreAll before any file is written or removed.
func TestRestoreAllChecksEveryVersionFirst(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	edit(t, e, ".claude/b.json", `{"v": 1}`)
	record(t, e, ".claude/a.json", ".claude/b.json")
	// A version that fails its schema now (recorded under other rules, or
	// by an older strata), planted straight into the store.
	ents, err := e.store.Record(state.Change{Path: ".claude/b.json", Content: []byte(`{"v": `),
		Class: state.ClassClaudeJSON, Schema: "json", Source: state.SourceRecord, Time: e.Now()})
	if err != nil {
		t.Fatal(err)
	}
	bad := ents[0].Commit
	edit(t, e, ".claude/a.json", `{"v": 2}`)
	edit(t, e, ".claude/b.json", `{"v": 2}`)
	edit(t, e, ".claude/c.json", `{"v": 2}`)
	record(t, e, ".claude/a.json", ".claude/b.json", ".claude/c.json")
	before, _ := e.Head()

	_, err = e.RestoreAll(Point{Rev: bad})
	var ps state.Problems
	if !errors.As(err, &ps) || !ps.Invalid() || !strings.Contains(ps.Error(), ".claude/b.json") {
		t.Fatalf("RestoreAll = %v, want the problems of b.json", err)
	}
	for _, p := range []string{".claude/a.json", ".claude/b.json", ".claude/c.json"} {
		if got := onDisk(t, e, p); got != `{"v": 2}` {
			t.Errorf("%s changed to %q by a refused restore", p, got)
		}
	}
	if h, _ := e.Head(); h != before {
		t.Errorf("a refused restore moved the state ref")
	}
}

func TestRestoreAllRemovesFilesAbsentThen(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	first, _ := e.Head()
	edit(t, e, ".claude/b.json", `{"v": 1}`)
	record(t, e, ".claude/b.json")

	if _, err := e.RestoreAll(Point{Rev: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.Config().Abs(".claude/b.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b.json, absent at the point, still exists: %v", err)
	}
	files, err := e.store.Files(mustHead(t, e))
	if err != nil || len(files) != 1 || files[".claude/a.json"] == "" {
		t.Errorf("recorded after RestoreAll: %v, %v", files, err)
	}
}

func TestCheckoutSkipsAFileEditedMeanwhile(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, `{"v": 1}`)
	record(t, e, k.Path)
	head := mustHead(t, e)
	files, _ := e.store.Files(head)
	v1 := files[k.Path]

	edit(t, e, k.Path, `{"v": 2}`) // not the version the caller expects
	ok, err := e.checkout(k, v1, "")
	if err != nil || ok {
		t.Fatalf("Checkout over an edit = %v, %v; want skipped", ok, err)
	}
	if got := onDisk(t, e, k.Path); got != `{"v": 2}` {
		t.Errorf("the edit was overwritten: %q", got)
	}
	edit(t, e, k.Path, `{"v": 1}`)
	if ok, err := e.checkout(k, v1, ""); err != nil || !ok {
		t.Fatalf("Checkout = %v, %v; want removed", ok, err)
	}
	if _, err := os.Stat(e.Config().Abs(k.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("not removed: %v", err)
	}
}

// checkout of a file the caller found absent (completing a crashed sync's
// creation) creates it, and the creating write under it never replaces a
// file that is there by the time it runs: it writes nothing.
func TestCheckoutCreatesOnlyWhereNothingIs(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, `{"v": 1}`)
	record(t, e, k.Path)
	files, _ := e.store.Files(mustHead(t, e))
	v1 := files[k.Path]
	if err := os.Remove(e.Config().Abs(k.Path)); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.checkout(k, "", v1); err != nil || !ok {
		t.Fatalf("checkout of an absent file = %v, %v; want written", ok, err)
	}
	if got := onDisk(t, e, k.Path); got != `{"v": 1}` {
		t.Fatalf("not created: %q", got)
	}
	edit(t, e, k.Path, `{"v": "an agent's"}`) // there now, whatever the check saw before
	if ok, err := e.write(k, []byte(`{"v": 1}`), ""); ok || err != nil {
		t.Fatalf("a creating write over a file = %v, %v; want nothing written", ok, err)
	}
	if got := onDisk(t, e, k.Path); got != `{"v": "an agent's"}` {
		t.Errorf("replaced: %q", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(e.Config().Abs(k.Path)))
	for _, d := range ents {
		if strings.HasPrefix(d.Name(), ".strata-tmp-") {
			t.Errorf("left behind %s", d.Name())
		}
	}
}

func TestWriteFileKeepsModeAndLeavesNoTemp(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, "{}")
	if err := os.Chmod(e.Config().Abs(k.Path), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.write(k, []byte(`{"v": 1}`), gitstore.BlobHash([]byte("{}"))); !ok || err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(e.Config().Abs(k.Path))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode after write = %v, %v; want 0600", st.Mode(), err)
	}
	ents, _ := os.ReadDir(filepath.Dir(e.Config().Abs(k.Path)))
	for _, d := range ents {
		if d.Name() != "a.json" {
			t.Errorf("left behind %s", d.Name())
		}
	}
	// A symbolic link is never written through.
	target := filepath.Join(t.TempDir(), "outside.json")
	os.WriteFile(target, []byte("{}"), 0o644)
	os.Remove(e.Config().Abs(k.Path))
	if err := os.Symlink(target, e.Config().Abs(k.Path)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.write(k, []byte(`{"v": 2}`), gitstore.BlobHash([]byte("{}"))); err == nil {
		t.Error("wrote through a symbolic link")
	}
	if data, _ := os.ReadFile(target); !bytes.Equal(data, []byte("{}")) {
		t.Errorf("the link's target changed: %q", data)
	}
}

func mustHead(t *testing.T, e *Engine) string {
	t.Helper()
	h, err := e.Head()
	if err != nil || h == "" {
		t.Fatalf("head %q, %v", h, err)
	}
	return h
}

// twoVersions records {"v": 1}, then {"v": 2}, at .claude/a.json and
// returns the commit that holds the first: a point to restore to.
func twoVersions(t *testing.T, e *Engine) string {
	t.Helper()
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	first := mustHead(t, e)
	edit(t, e, ".claude/a.json", `{"v": 2}`)
	record(t, e, ".claude/a.json")
	return first
}

// Unrecorded lists exactly the kept files Record would act on: edited,
// created, deleted and unreadable ones, not those on disk as recorded.
func TestUnrecorded(t *testing.T) {
	e := newRepo(t)
	same, edited, gone := ".claude/same.json", ".claude/edited.json", ".claude/gone.json"
	created, link := ".claude/new.json", ".claude/link.json"
	for _, p := range []string{same, edited, gone} {
		edit(t, e, p, `{"v": 1}`)
	}
	record(t, e, same, edited, gone)
	edit(t, e, edited, `{"v": 2}`)
	edit(t, e, created, `{"v": 1}`)
	if err := os.Remove(e.Config().Abs(gone)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("same.json", e.Config().Abs(link)); err != nil {
		t.Fatal(err)
	}
	ks, err := e.Unrecorded()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range ks {
		got = append(got, k.Path)
	}
	want := []string{edited, gone, link, created}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Unrecorded = %v, want %v", got, want)
	}
}

// Check looks at the last recorded version only for the classes UsesHistory
// names: for every other class, any previous version (even one the history
// rules would refuse to follow) gives the same problems as none, so the
// hook may skip reading it. Each class is checked with a valid file of its
// own (testdata/example) against the other examples and an archived
// initiative as previous versions.
func TestUsesHistoryIsWhereCheckLooks(t *testing.T) {
	e := newRepo(t)
	examples := map[string]string{ // path in testdata/example -> path it is kept at
		".claude/workflow-state.json":                               ".claude/workflow-state.json",
		".claude/initiative.json":                                   ".claude/initiative.json",
		".claude/interview-state.json":                              ".claude/interview-state.json",
		".claude/delegation-log.json":                               ".claude/delegation-log.json",
		".claude/memory.jsonl":                                      ".claude/memory.jsonl",
		".claude/memory/MEMORY.md":                                  ".claude/memory/MEMORY.md",
		"PhaseOutcomes/auth-refactor/001-plan.yaml":                 "PhaseOutcomes/auth-refactor/001-plan.yaml",
		"PhaseOutputs/2026-11-22_auth-refactor/phase-01-query.json": "PhaseOutputs/2026-11-22_auth-refactor/phase-01-query.json",
		".claude/settings.json":                                     ".claude/settings.json",
	}
	prevs := [][]byte{[]byte(`{"name": "x", "status": "archived", "lastUpdated": "2026-11-22T10:00:00Z"}` + "\n")}
	contents := map[string][]byte{}
	for src, dst := range examples {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "example", src))
		if err != nil {
			data = []byte("{}\n") // a .claude/*.json of no schema
		}
		contents[dst] = data
		prevs = append(prevs, data)
	}
	differs := map[state.Class]bool{}
	for path, data := range contents {
		k := kept(t, e, path)
		f := File{Kept: k, Content: data, Exists: true}
		none := e.Check(f, nil)
		if none.Invalid() {
			t.Fatalf("%s: the example is invalid: %v", path, none)
		}
		for _, prev := range prevs {
			if e.Check(f, prev).Error() != none.Error() {
				differs[k.Class] = true
			}
		}
		if differs[k.Class] && !UsesHistory(k) {
			t.Errorf("%s (%s): Check depends on the previous version, UsesHistory says it does not", path, k.Class)
		}
	}
	if !differs[state.ClassInitiative] || !differs[state.ClassPhaseOutcome] {
		t.Errorf("the history rules were not exercised: %v", differs)
	}
}

// Validate checks the schemas of many files on several goroutines, a
// window at a time: its results are those of Read and Check file by file,
// in the order of the paths, across windows (ended by count, then by
// bytes), with unreadable, missing and invalid files among them.
func TestValidateManyFilesInOrder(t *testing.T) {
	e := newRepo(t)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(e.Config().Root, ".claude")
	check(os.MkdirAll(dir, 0o755))
	var paths []config.Kept
	for i := range 3*validateWindow + 7 {
		p := fmt.Sprintf(".claude/f%03d.json", i)
		name := filepath.Join(e.Config().Root, p)
		switch i % 5 {
		case 0:
			check(os.WriteFile(name, []byte(`{"n": `+strconv.Itoa(i)+`}`), 0o644))
		case 1:
			check(os.WriteFile(name, []byte(`{"n": `+strconv.Itoa(i)+`,}`), 0o644)) // malformed
		case 2:
			check(os.Symlink("f000.json", name)) // not followed
		case 3: // missing, named explicitly
		case 4:
			check(os.WriteFile(name, []byte("[1, 2, 3]\n"), 0o644))
		}
		paths = append(paths, kept(t, e, p))
	}
	ws := kept(t, e, ".claude/workflow-state.json")
	check(os.WriteFile(filepath.Join(e.Config().Root, ws.Path), []byte(`{"type": "NOPE"}`), 0o644))
	paths = append(paths[:100], append([]config.Kept{ws}, paths[100:]...)...)

	var want []Result
	for _, k := range paths {
		r := Result{Kept: k}
		f, p := e.Read(k)
		switch {
		case p != nil:
			r.Problems = state.Problems{*p}
		case !f.Exists:
			r.Problems = state.Problems{{Path: k.Path, Message: "no such file"}}
		default:
			r.Problems = e.Check(f, nil)
		}
		want = append(want, r)
	}
	got, err := e.Validate(paths, true)
	check(err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Validate:\n%v\nfile by file:\n%v", got, want)
	}
	old := validateBytes
	t.Cleanup(func() { validateBytes = old })
	validateBytes = 40 // windows of two or three files: each ends by bytes
	if got, err := e.Validate(paths, true); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Validate in small windows (%v):\n%v\nfile by file:\n%v", err, got, want)
	}
	invalid := 0
	for _, r := range got {
		if r.Problems.Invalid() {
			invalid++
		}
	}
	wantInvalid := 1 // the workflow state
	for i := range 3*validateWindow + 7 {
		if m := i % 5; m >= 1 && m <= 3 { // malformed, symbolic links, missing
			wantInvalid++
		}
	}
	if invalid != wantInvalid {
		t.Fatalf("%d invalid, want %d", invalid, wantInvalid)
	}
}

// Only the L2 file is ever appended in place: a longer version of any other
// kept file (here a JSON one) replaces the file whole, so a crash leaves the
// old version or the new one, never a part of the new one.
func TestPutAppendsInPlaceOnlyToMemory(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/notes.json")
	first := []byte(`{"a": 1}`)
	if _, err := e.Put(k, "", first, state.SourceResolve); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(e.Config().Abs(k.Path))
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.Put(k, gitstore.BlobHash(first), append(first, '\n'), state.SourceResolve)
	if err != nil || !o.Written {
		t.Fatalf("Put = %+v, %v", o, err)
	}
	after, err := os.Stat(e.Config().Abs(k.Path))
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Errorf("%s was appended in place; only MEMORY.md is", k.Path)
	}
}

// A folder link to itself or above (loop -> ., up -> ..) is a link loop,
// not a nested repository: through it the work tree's own .git shows, which
// made the reason "inside another git repository, loop" (attack25 hostile
// observation). Its files are not kept, and no setting keeps them.
func TestLinkAboveIsNotNested(t *testing.T) {
	e := newRepo(t)
	root := e.Config().Root
	if err := os.Symlink(".", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(root, "d", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.json"), []byte(`{"a": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e = withConfig(t, e, "files:\n  - glob: \"loop/*.json\"\n  - glob: \"d/up/*.json\"\n")
	for path, want := range map[string]string{
		"loop/a.json": "under a symbolic link to a folder above it, loop -> ., a link loop",
		"d/up/a.json": "under a symbolic link to a folder above it, d/up -> .., a link loop",
	} {
		if _, ok := e.Config().Classify(path); ok {
			t.Errorf("%s is kept", path)
		}
		p := Private{Path: path, Reason: e.Config().Private(path)}
		if p.Reason != want || p.Nested() || !p.Never() || p.KeepCommand() != "" {
			t.Errorf("%s: reason %q (nested %v, never %v, keep %q), want %q", path, p.Reason, p.Nested(), p.Never(), p.KeepCommand(), want)
		}
	}
	// a nested repository is still one
	sub := filepath.Join(root, "sub")
	if out, err := exec.Command("git", "init", "-q", sub).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	e = withConfig(t, e, "files:\n  - glob: \"sub/*.json\"\n")
	if p := (Private{Path: "sub/a.json", Reason: e.Config().Private("sub/a.json")}); !p.Nested() {
		t.Errorf("sub/a.json: reason %q, want a nested repository", p.Reason)
	}
}

// realRel's answers are remembered by folder for one command's run, and
// forgotten with the folder resolutions they come from (Forget, which a
// watcher calls for each batch): a folder swapped for a link to another
// folder is judged where it now leads after Forget. A folder that does
// not exist yet is not remembered: once made (a sync writing a new
// folder), it is resolved.
func TestRealRelForgotten(t *testing.T) {
	e := newRepo(t)
	root := e.Config().Root
	mk := func(dir string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk(".claude/ctx")
	mk("secret")
	if real, ok := e.RealRel(".claude/ctx/a.json"); ok {
		t.Fatalf("a plain folder leads to %s", real)
	}
	if real, ok := e.RealRel("later/a.json"); ok {
		t.Fatalf("a missing folder leads to %s", real)
	}
	if err := os.Remove(filepath.Join(root, ".claude/ctx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret", filepath.Join(root, ".claude/ctx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("secret", filepath.Join(root, "later")); err != nil {
		t.Fatal(err)
	}
	if real, ok := e.RealRel("later/a.json"); !ok || real != "secret/a.json" {
		t.Errorf("later/a.json, made after its first look: (%q, %v), want secret/a.json", real, ok)
	}
	e.Forget()
	if real, ok := e.RealRel(".claude/ctx/a.json"); !ok || real != "secret/a.json" {
		t.Errorf(".claude/ctx/a.json after Forget: (%q, %v), want secret/a.json", real, ok)
	}
}

// A revision is named in messages ("not recorded at REV") as the user or
// an agent gave it, with control characters quoted: an escape sequence in a
// --rev never reaches the terminal (attack32 LOW).
func TestPointQuotesControlCharacters(t *testing.T) {
	for rev, want := range map[string]string{
		"main~1":         "main~1",
		"x\x1b[2J":       `"x\x1b[2J"`,
		"a\x1b]0;T\x07b": `"a\x1b]0;T\ab"`,
	} {
		if got := (Point{Rev: rev}).String(); got != want {
			t.Errorf("Point{Rev: %q}.String() = %q, want %q", rev, got, want)
		}
	}
}
