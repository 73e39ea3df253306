package gitstore

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/state"
)

func TestOpenLayouts(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		if s.Root() != r.wt {
			t.Errorf("Root = %s, want %s", s.Root(), r.wt)
		}
		if s.GitDir() != r.gitDir {
			t.Errorf("GitDir = %s, want %s", s.GitDir(), r.gitDir)
		}
		if s.CommonDir() != r.common {
			t.Errorf("CommonDir = %s, want %s", s.CommonDir(), r.common)
		}
		if s.StateRef() != r.ref {
			t.Errorf("StateRef = %s, want %s", s.StateRef(), r.ref)
		}
		want := strings.TrimSuffix(r.ref, "state") + "rejected"
		if s.RejectedRef() != want {
			t.Errorf("RejectedRef = %s, want %s", s.RejectedRef(), want)
		}
		if _, err := s.Head(s.StateRef()); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Head of a new ref: %v, want ErrNotFound", err)
		}
	})
}

func TestOpenOutsideRepo(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if !errors.Is(err, state.ErrNotRepo) {
		t.Fatalf("Open outside a repo: %v, want ErrNotRepo", err)
	}
}

// TestOpenStubGitDir: a .git directory git would not take (objects/ and
// refs/ with no HEAD, what a writer left in a repository deleted under it)
// is passed over as git passes it over: outside any repository that is
// ErrNotRepo, and inside one it is the enclosing repository that opens.
func TestOpenStubGitDir(t *testing.T) {
	stub := func(dir string, head string) {
		for _, d := range []string{"objects", "refs", "strata"} {
			if err := os.MkdirAll(filepath.Join(dir, ".git", d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if head != "" {
			writeFile(t, filepath.Join(dir, ".git", "HEAD"), head)
		}
	}
	for _, head := range []string{"", "garbage\n", "ref: heads/main\n"} {
		dir := t.TempDir()
		stub(dir, head)
		if s, err := Open(dir); !errors.Is(err, state.ErrNotRepo) {
			t.Errorf("HEAD %q: Open of a stub .git: %v, want ErrNotRepo", head, err)
			if err == nil {
				s.Close()
			}
		}
	}
	outer := t.TempDir()
	initRepo(t, outer, false)
	inner := filepath.Join(outer, "sub")
	stub(inner, "")
	s, err := Open(inner)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := realPath(t, outer); s.Root() != want {
		t.Errorf("root %s, want the enclosing repository %s", s.Root(), want)
	}
	// A valid HEAD, detached or symbolic, makes a repository.
	for _, head := range []string{"ref: refs/heads/main\n", strings.Repeat("ab", 20) + "\n"} {
		dir := t.TempDir()
		stub(dir, head)
		s, err := Open(dir)
		if err != nil {
			t.Errorf("HEAD %q: %v", head, err)
			continue
		}
		s.Close()
	}
}

func TestRecordReadDelete(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		const p = ".claude/workflow-state.json"
		es := mustRecord(t, s, change(p, `{"phase":"plan"}`, t0))
		if len(es) != 1 || es[0].Action != state.ActionAdd || es[0].Path != p || !es[0].Time.Equal(t0) {
			t.Fatalf("first record: %+v", es)
		}
		head, err := s.Head(s.StateRef())
		if err != nil || head != es[0].Commit {
			t.Fatalf("Head = %s, %v; want %s", head, err, es[0].Commit)
		}
		fsck(t, r.wt)

		es = mustRecord(t, s, change(p, `{"phase":"build"}`, t0.Add(time.Minute)))
		if es[0].Action != state.ActionUpdate {
			t.Fatalf("second record action %s, want update", es[0].Action)
		}
		if _, err := s.Record(change(p, `{"phase":"build"}`, t0.Add(2*time.Minute))); !errors.Is(err, state.ErrUnchanged) {
			t.Fatalf("same content again: %v, want ErrUnchanged", err)
		}
		got, err := s.ReadFile(es[0].Commit, p, anySize)
		if err != nil || string(got) != `{"phase":"build"}` {
			t.Fatalf("ReadFile = %q, %v", got, err)
		}
		// The git CLI sees the same.
		if out := runGit(t, r.wt, "show", s.StateRef()+":"+p); out != `{"phase":"build"}` {
			t.Fatalf("git show = %q", out)
		}
		if out := runGit(t, r.main, "log", "--format=%s|%an <%ae>|%ct", s.StateRef()); out !=
			"update "+p+"|strata <strata@localhost>|"+itoa(t0.Add(time.Minute).Unix())+"\n"+
				"add "+p+"|strata <strata@localhost>|"+itoa(t0.Unix()) {
			t.Fatalf("git log = %q", out)
		}

		es = mustRecord(t, s, deletion(p, t0.Add(3*time.Minute)))
		if es[0].Action != state.ActionDelete {
			t.Fatalf("delete action %s", es[0].Action)
		}
		if _, err := s.ReadFile(es[0].Commit, p, anySize); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("ReadFile after delete: %v, want ErrNotFound", err)
		}
		if _, err := s.Record(deletion(p, t0.Add(4*time.Minute))); !errors.Is(err, state.ErrUnchanged) {
			t.Fatalf("delete of an absent path: %v, want ErrUnchanged", err)
		}
		if _, err := s.Record(deletion("never/was.json", t0)); !errors.Is(err, state.ErrUnchanged) {
			t.Fatalf("delete of a never-recorded path: %v, want ErrUnchanged", err)
		}
		files, err := s.Files(es[0].Commit)
		if err != nil || len(files) != 0 {
			t.Fatalf("Files after deleting the only file = %v, %v", files, err)
		}
		if out := runGit(t, r.wt, "rev-list", "--count", s.StateRef()); out != "3" {
			t.Fatalf("commit count %s, want 3", out)
		}
	})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestRecordMulti(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		mustRecord(t, s, change("PhaseOutputs/s1/phase-01-query.json", "q1", t0))
		chs := []state.Change{
			change(".claude/initiative.json", `{"name":"x"}`, t0.Add(time.Second)),
			change("~/.claude/projects/-repo/memory/MEMORY.md", "# mem\n", t0.Add(3*time.Second)),
			change("PhaseOutputs/s1/phase-02-strategy.json", "q2", t0.Add(2*time.Second)),
			deletion("PhaseOutputs/s1/phase-01-query.json", t0.Add(time.Second)),
			deletion("absent.json", t0.Add(time.Second)),
		}
		chs[1].Class, chs[1].Schema, chs[1].Source = state.ClassMemory, "", state.SourceRecord
		es := mustRecord(t, s, chs...)
		if len(es) != 4 {
			t.Fatalf("entries: %+v", es)
		}
		wantActions := []state.Action{state.ActionAdd, state.ActionAdd, state.ActionAdd, state.ActionDelete}
		for i, e := range es {
			if e.Action != wantActions[i] || e.Path != chs[i].Path || e.Commit != es[0].Commit {
				t.Errorf("entry %d = %+v", i, e)
			}
			if !e.Time.Equal(t0.Add(3 * time.Second)) {
				t.Errorf("entry %d time %s, want the latest change time", i, e.Time)
			}
		}
		msg := runGit(t, r.wt, "log", "-1", "--format=%B", s.StateRef())
		wantHead := "record 4 files\n\nadd .claude/initiative.json\nadd ~/.claude/projects/-repo/memory/MEMORY.md\n" +
			"add PhaseOutputs/s1/phase-02-strategy.json\ndelete PhaseOutputs/s1/phase-01-query.json\n\nStrata-Path: .claude/initiative.json\n"
		if !strings.HasPrefix(msg, wantHead) {
			t.Fatalf("message:\n%s", msg)
		}
		// git's own trailer parser sees one block per path, in order.
		paths := runGit(t, r.wt, "log", "-1", "--format=%(trailers:key=Strata-Path,valueonly)", s.StateRef())
		if strings.TrimSpace(paths) != ".claude/initiative.json\n~/.claude/projects/-repo/memory/MEMORY.md\nPhaseOutputs/s1/phase-02-strategy.json\nPhaseOutputs/s1/phase-01-query.json" {
			t.Fatalf("git trailers: %q", paths)
		}
		if out := runGit(t, r.wt, "show", s.StateRef()+":~/.claude/projects/-repo/memory/MEMORY.md"); out != "# mem" {
			t.Fatalf("git show ~ path = %q", out)
		}
		files, err := s.Files(s.StateRef())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for p := range files {
			names = append(names, p)
		}
		if len(files) != 3 || files[".claude/initiative.json"] == "" || files["~/.claude/projects/-repo/memory/MEMORY.md"] == "" ||
			files["PhaseOutputs/s1/phase-02-strategy.json"] == "" {
			t.Fatalf("Files = %v", files)
		}
		if h := runGit(t, r.wt, "rev-parse", s.StateRef()+":.claude/initiative.json"); h != files[".claude/initiative.json"] {
			t.Fatalf("blob hash %s, git says %s", files[".claude/initiative.json"], h)
		}
		// Log reads the same entries back from the trailers.
		log, err := s.Log(s.StateRef(), LogQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 5 {
			t.Fatalf("log: %+v", log)
		}
		for i, e := range es {
			l := log[i]
			if l.Commit != e.Commit || l.Path != e.Path || l.Action != e.Action || l.Class != e.Class ||
				l.Source != e.Source || l.Schema != e.Schema || !l.Time.Equal(e.Time) {
				t.Errorf("log[%d] = %+v, want %+v", i, l, e)
			}
		}
		if log[4].Path != "PhaseOutputs/s1/phase-01-query.json" || log[4].Action != state.ActionAdd {
			t.Errorf("oldest entry %+v", log[4])
		}
	})
}

func TestRecordTreeShapes(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		// Names around the "/" sort boundary: git orders a directory as name+"/".
		mustRecord(t, s,
			change("a.json", "1", t0), change("a/x.json", "2", t0), change("a0.json", "3", t0),
			change("a-b/c/d/e.json", "4", t0), change("a b.json", "5", t0))
		fsck(t, r.wt)
		for p, want := range map[string]string{"a.json": "1", "a/x.json": "2", "a0.json": "3", "a-b/c/d/e.json": "4", "a b.json": "5"} {
			if got := runGit(t, r.wt, "show", s.StateRef()+":"+p); got != want {
				t.Errorf("git show %s = %q, want %q", p, got, want)
			}
		}
		// Deleting the last file of a nested directory removes the directory.
		mustRecord(t, s, deletion("a-b/c/d/e.json", t0.Add(time.Second)))
		if out := runGit(t, r.wt, "ls-tree", "--name-only", s.StateRef()); strings.Contains(out, "a-b") {
			t.Fatalf("empty directory kept:\n%s", out)
		}
		// A file cannot become a directory or the reverse.
		if _, err := s.Record(change("a.json/x", "6", t0)); err == nil {
			t.Fatal("recording under a file path succeeded")
		}
		if _, err := s.Record(change("a", "7", t0)); err == nil {
			t.Fatal("recording over a directory succeeded")
		}
		for _, bad := range []string{"", "/abs", "a//b", "./a", "a/../b", ".git/config", "x/.GIT/y", "nul\x00"} {
			if _, err := s.Record(change(bad, "x", t0)); err == nil {
				t.Errorf("path %q accepted", bad)
			}
		}
		// Odd names survive the trailers.
		odd := "PhaseOutcomes/new\nline/\"quoted\" .yaml"
		es := mustRecord(t, s, change(odd, "8", t0.Add(2*time.Second)))
		log, err := s.Log(s.StateRef(), LogQuery{Path: odd})
		if err != nil || len(log) != 1 || log[0].Commit != es[0].Commit {
			t.Fatalf("log of an odd path = %+v, %v", log, err)
		}
		if got, err := s.ReadFile(s.StateRef(), odd, anySize); err != nil || string(got) != "8" {
			t.Fatalf("ReadFile odd = %q, %v", got, err)
		}
		// Last change of a path wins within one Record.
		es = mustRecord(t, s, change("dup.json", "first", t0), change("dup.json", "second", t0))
		if len(es) != 1 {
			t.Fatalf("dup entries %+v", es)
		}
		if got, _ := s.ReadFile(es[0].Commit, "dup.json", anySize); string(got) != "second" {
			t.Fatalf("dup content %q", got)
		}
	})
}

func TestLogFilters(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		if log, err := s.Log(s.StateRef(), LogQuery{}); err != nil || len(log) != 0 {
			t.Fatalf("log of a missing ref = %v, %v", log, err)
		}
		paths := []string{".claude/workflow-state.json", ".claude/initiative.json", "MEMORY.md"}
		for i := 0; i < 30; i++ {
			mustRecord(t, s, change(paths[i%3], itoa(int64(i)), t0.Add(time.Duration(i)*time.Minute)))
		}
		all, err := s.Log(s.StateRef(), LogQuery{})
		if err != nil || len(all) != 30 {
			t.Fatalf("log all: %d, %v", len(all), err)
		}
		for i := 1; i < len(all); i++ {
			if !all[i].Time.Before(all[i-1].Time) {
				t.Fatalf("log not newest first at %d", i)
			}
		}
		byPath, _ := s.Log(s.StateRef(), LogQuery{Path: "MEMORY.md"})
		if len(byPath) != 10 {
			t.Fatalf("log by path: %d", len(byPath))
		}
		for _, e := range byPath {
			if e.Path != "MEMORY.md" {
				t.Fatalf("wrong path %s", e.Path)
			}
		}
		win, _ := s.Log(s.StateRef(), LogQuery{Since: t0.Add(10 * time.Minute), Until: t0.Add(19 * time.Minute)})
		if len(win) != 10 || !win[0].Time.Equal(t0.Add(19*time.Minute)) || !win[9].Time.Equal(t0.Add(10*time.Minute)) {
			t.Fatalf("log window: %+v", win)
		}
		lim, _ := s.Log(s.StateRef(), LogQuery{Path: ".claude/initiative.json", Limit: 2})
		if len(lim) != 2 || !lim[0].Time.Equal(t0.Add(28*time.Minute)) {
			t.Fatalf("log limit: %+v", lim)
		}
		if none, _ := s.Log(s.StateRef(), LogQuery{Path: "nope"}); len(none) != 0 {
			t.Fatalf("log of unknown path: %+v", none)
		}
	})
}

func TestAt(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		if _, err := s.At(s.StateRef(), t0); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("At on a missing ref: %v", err)
		}
		var commits []string
		for i := 0; i < 10; i++ {
			es := mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Hour)))
			commits = append(commits, es[0].Commit)
		}
		if _, err := s.At(s.StateRef(), t0.Add(-time.Second)); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("At before the first commit: %v", err)
		}
		for i := 0; i < 10; i++ {
			at := t0.Add(time.Duration(i)*time.Hour + 30*time.Minute)
			got, err := s.At(s.StateRef(), at)
			if err != nil || got != commits[i] {
				t.Fatalf("At(+%dh30m) = %s, %v; want %s", i, got, err, commits[i])
			}
			if got, _ := s.At(s.StateRef(), t0.Add(time.Duration(i)*time.Hour)); got != commits[i] {
				t.Fatalf("At exactly commit %d time = %s", i, got)
			}
			b, err := s.ReadFile(got, "f.json", anySize)
			if err != nil || string(b) != itoa(int64(i)) {
				t.Fatalf("ReadFile at %d = %q, %v", i, b, err)
			}
		}
		// A clock that went backwards: At returns the latest commit whose
		// time is not after t, walking from the head.
		back := mustRecord(t, s, change("f.json", "back", t0.Add(90*time.Minute)))
		got, _ := s.At(s.StateRef(), t0.Add(95*time.Minute))
		if got != back[0].Commit {
			t.Fatalf("At after a backwards clock = %s, want %s", got, back[0].Commit)
		}
		got, _ = s.At(s.StateRef(), t0.Add(85*time.Minute))
		if got != commits[1] {
			t.Fatalf("At before the backwards commit = %s, want %s", got, commits[1])
		}
		got, _ = s.At(s.StateRef(), t0.Add(100*time.Hour))
		if got != back[0].Commit {
			t.Fatalf("At far future = %s, want head", got)
		}
	})
}

// Commit times are whole seconds, Strata-Time trailers are not: a time
// within a second that saw several records is the head as it stood then,
// not the second's last commit (attack18-travel 9), both through the
// index file (a fresh store) and the loaded index.
func TestAtSubSecond(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		base := t0.Add(time.Hour)
		first := mustRecord(t, s, change("f.json", "1", base.Add(80*time.Millisecond)))[0].Commit
		second := mustRecord(t, s, change("f.json", "2", base.Add(800*time.Millisecond)))[0].Commit
		check := func(st *Store) {
			for at, want := range map[time.Time]string{
				base.Add(490 * time.Millisecond): first,
				base.Add(900 * time.Millisecond): second,
				base.Add(800 * time.Millisecond): second,
			} {
				if got, err := st.At(st.StateRef(), at); err != nil || got != want {
					t.Errorf("At(%s) = %s, %v; want %s", at.Format(time.RFC3339Nano), got, err, want)
				}
			}
			if _, err := st.At(st.StateRef(), base.Add(50*time.Millisecond)); !errors.Is(err, state.ErrNotFound) {
				t.Errorf("At before the first record, in its second: %v", err)
			}
		}
		check(s)
		// and log's bounds within that second
		if ents, err := s.Log(s.StateRef(), LogQuery{Until: base.Add(490 * time.Millisecond)}); err != nil || len(ents) == 0 || ents[0].Commit != first {
			t.Errorf("Log until the middle of the second: %v, %v; want %s first", ents, err, first)
		}
		if ents, err := s.Log(s.StateRef(), LogQuery{Since: base.Add(490 * time.Millisecond)}); err != nil || len(ents) != 1 || ents[0].Commit != second {
			t.Errorf("Log since the middle of the second: %v, %v; want %s alone", ents, err, second)
		}
		fresh, err := Open(r.open) // reads the index file s.At wrote
		if err != nil {
			t.Fatal(err)
		}
		check(fresh)
	})
}

func TestResolve(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		var commits []string
		for i := 0; i < 3; i++ {
			commits = append(commits, mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))[0].Commit)
		}
		cases := map[string]string{
			commits[1]:            commits[1],
			commits[1][:10]:       commits[1],
			s.StateRef():          commits[2],
			s.StateRef() + "~2":   commits[0],
			s.StateRef() + "^":    commits[1],
			s.StateRef() + "~1^1": commits[0],
		}
		if r.commits {
			cases["HEAD"] = runGit(t, r.wt, "rev-parse", "HEAD")
			cases["HEAD~1"] = runGit(t, r.wt, "rev-parse", "HEAD~1")
			cases["main"] = runGit(t, r.wt, "rev-parse", "main")
			cases["feature"] = runGit(t, r.wt, "rev-parse", "feature")
		}
		for rev, want := range cases {
			got, err := s.Resolve(rev)
			if err != nil || got != want {
				t.Errorf("Resolve(%s) = %s, %v; want %s", rev, got, err, want)
			}
		}
		for _, rev := range []string{"nope", "refs/strata/nope", s.StateRef() + "~9", strings.Repeat("ab", 20)} {
			if _, err := s.Resolve(rev); !errors.Is(err, state.ErrNotFound) {
				t.Errorf("Resolve(%s): %v, want ErrNotFound", rev, err)
			}
		}
		if _, err := s.ReadFile(commits[0], "nope.json", anySize); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("ReadFile of a missing path: %v", err)
		}
		if r.commits {
			// Files of a user's commit, through the same API.
			b, err := s.ReadFile("HEAD~1", ".claude/workflow-state.json", anySize)
			if err != nil || string(b) != `{"committed":true}` {
				t.Errorf("ReadFile(HEAD~1) = %q, %v", b, err)
			}
		}
	})
}

// BlobID names the blob ReadFile reads, and reports a missing path, a
// path through a file and a directory as not found.
func TestBlobID(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		c := mustRecord(t, s, change("d/e/f.json", "1", t0), change("top.json", "2", t0))[1].Commit
		for _, p := range []string{"d/e/f.json", "top.json"} {
			data, err := s.ReadFile(c, p, anySize)
			if err != nil {
				t.Fatal(err)
			}
			if id, err := s.BlobID(c, p); err != nil || id != BlobHash(data) {
				t.Fatalf("BlobID(%s) = %s, %v; ReadFile's blob is %s", p, id, err, BlobHash(data))
			}
		}
		for _, p := range []string{"d/e/g.json", "top.json/x", "d/e", "nope/f.json"} {
			if id, err := s.BlobID(c, p); !errors.Is(err, state.ErrNotFound) {
				t.Fatalf("BlobID(%s) = %s, %v; want not found", p, id, err)
			}
		}
	})
}

// rejectOne is RejectEach of one version.
func rejectOne(s *Store, ch state.Change, problems ...string) (state.Entry, error) {
	ents, err := s.RejectEach([]Rejection{{Change: ch, Problems: problems}})
	if err != nil {
		return state.Entry{}, err
	}
	return ents[0], nil
}

func TestReject(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		const p = ".claude/workflow-state.json"
		ok := mustRecord(t, s, change(p, `{"type":"APEX"}`, t0), change("keep.json", "k", t0))
		bad := change(p, `{"type":"NOPE"}`, t0.Add(time.Minute))
		e, err := rejectOne(s, bad, p+`:1:9: /type: value must be one of "APEX"`, "second: problem")
		if err != nil {
			t.Fatal(err)
		}
		if e.Action != state.ActionUpdate || e.Path != p {
			t.Fatalf("reject entry %+v", e)
		}
		// The state head is unchanged.
		if h, _ := s.Head(s.StateRef()); h != ok[0].Commit {
			t.Fatalf("state head moved on reject")
		}
		msg := runGit(t, r.wt, "log", "-1", "--format=%B", s.RejectedRef())
		if !strings.HasPrefix(msg, "reject "+p+"\n\n"+p+`:1:9: /type: value must be one of "APEX"`+"\nsecond: problem\n\nStrata-Path: "+p) {
			t.Fatalf("reject message:\n%s", msg)
		}
		if got := runGit(t, r.wt, "show", s.RejectedRef()+":"+p); got != `{"type":"NOPE"}` {
			t.Fatalf("rejected content %q", got)
		}
		if got := runGit(t, r.wt, "show", s.RejectedRef()+":keep.json"); got != "k" {
			t.Fatalf("rejected snapshot lost keep.json: %q", got)
		}
		e2, err := rejectOne(s, bad, "again")
		if err != nil {
			t.Fatal(err)
		}
		if parent := runGit(t, r.wt, "rev-parse", s.RejectedRef()+"^"); parent != e.Commit {
			t.Fatalf("second rejection's parent %s, want %s", parent, e.Commit)
		}
		log, err := s.Log(s.RejectedRef(), LogQuery{})
		if err != nil || len(log) != 2 || log[0].Commit != e2.Commit {
			t.Fatalf("rejected log %+v, %v", log, err)
		}
		// Rejecting a deletion removes the path from the rejected snapshot.
		d, err := rejectOne(s, deletion("keep.json", t0.Add(2*time.Minute)), "immutable")
		if err != nil || d.Action != state.ActionDelete {
			t.Fatalf("reject delete %+v, %v", d, err)
		}
		if _, err := s.ReadFile(d.Commit, "keep.json", anySize); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("rejected deletion still has the file: %v", err)
		}
	})
}

// RejectEach quarantines many versions in one go: one commit each, in
// order, each on the state head's tree with only its own change, their
// objects in one pack (no loose object), the ref moved once.
func TestRejectEach(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		var valid []state.Change
		for i := 0; i < 50; i++ {
			valid = append(valid, change(fmt.Sprintf("d/f%02d.json", i), "ok", t0))
		}
		mustRecord(t, s, valid...)
		head, _ := s.Head(s.StateRef())
		loose := looseCount(t, r.common)
		var rs []Rejection
		for i := 0; i < 40; i++ {
			p := fmt.Sprintf("d/f%02d.json", i)
			if i%10 == 9 {
				p = fmt.Sprintf("d/new%02d.json", i)
			}
			rs = append(rs, Rejection{Change: change(p, fmt.Sprintf("bad %d", i), t0.Add(time.Minute)), Problems: []string{p + ": bad"}})
		}
		ents, err := s.RejectEach(rs)
		if err != nil || len(ents) != len(rs) {
			t.Fatalf("RejectEach: %d entries, %v", len(ents), err)
		}
		if n := looseCount(t, r.common); n != loose {
			t.Fatalf("%d loose objects written", n-loose)
		}
		if h, _ := s.Head(s.StateRef()); h != head {
			t.Fatal("the state head moved")
		}
		log, err := s.Log(s.RejectedRef(), LogQuery{})
		if err != nil || len(log) != len(rs) {
			t.Fatalf("rejected log of %d, %v", len(log), err)
		}
		for i, e := range ents {
			if log[len(rs)-1-i].Commit != e.Commit || e.Path != rs[i].Change.Path {
				t.Fatalf("rejection %d: entry %+v, log %+v", i, e, log[len(rs)-1-i])
			}
			for j, other := range rs {
				data, err := s.ReadFile(e.Commit, other.Change.Path, anySize)
				want, wantErr := "ok", error(nil)
				switch {
				case j == i:
					want = string(other.Change.Content)
				case j%10 == 9:
					want, wantErr = "", state.ErrNotFound // another rejection's new file
				}
				if string(data) != want || !errors.Is(err, wantErr) {
					t.Fatalf("rejection %d holds %s = %q (%v)", i, other.Change.Path, data, err)
				}
			}
		}
		fsck(t, r.wt)
	})
}

func TestPackedRefs(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		a := mustRecord(t, s, change("f.json", "1", t0))[0].Commit
		runGit(t, r.wt, "pack-refs", "--all")
		if _, err := os.Stat(filepath.Join(r.common, filepath.FromSlash(s.StateRef()))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("loose ref still there after pack-refs: %v", err)
		}
		if h, err := s.Head(s.StateRef()); err != nil || h != a {
			t.Fatalf("Head from packed-refs = %s, %v", h, err)
		}
		b := mustRecord(t, s, change("f.json", "2", t0.Add(time.Second)))[0].Commit
		if parent := runGit(t, r.wt, "rev-parse", s.StateRef()+"^"); parent != a {
			t.Fatalf("record after pack-refs: parent %s, want %s", parent, a)
		}
		if h := runGit(t, r.wt, "rev-parse", "--verify", s.StateRef()); h != b {
			t.Fatalf("git sees %s, want %s", h, b)
		}
		if r.kind == "worktree" {
			// Visible from the main work tree, where git keeps it.
			if out := runGit(t, r.main, "for-each-ref", "--format=%(refname)", "refs/strata/"); out != s.StateRef() {
				t.Fatalf("main worktree sees %q", out)
			}
		}
	})
}

// TrackingRefs lists a tracking ref git packed (git pack-refs, git gc)
// as it lists a loose one, through the one packed-refs reader, and says
// so when packed-refs cannot be read instead of listing none.
func TestTrackingRefsPacked(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	a := mustRecord(t, s, change("f.json", "1", t0))[0].Commit
	runGit(t, r.wt, "update-ref", TrackingPrefix+"packed/state", a)
	runGit(t, r.wt, "pack-refs", "--all")
	runGit(t, r.wt, "update-ref", TrackingPrefix+"my%20loose/state", a)
	got, err := s.TrackingRefs()
	want := map[string]string{TrackingPrefix + "packed/state": "packed", TrackingPrefix + "my%20loose/state": "my loose"}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("TrackingRefs = %v, %v; want %v", got, err, want)
	}
	packed := filepath.Join(r.common, "packed-refs")
	if err := os.Remove(packed); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(packed, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TrackingRefs(); err == nil {
		t.Fatalf("TrackingRefs with a folder at packed-refs = %v, no error", got)
	}
}

func TestLocked(t *testing.T) {
	old := LockTimeout
	LockTimeout = 200 * time.Millisecond
	defer func() { LockTimeout = old }()
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	mustRecord(t, s, change("f.json", "1", t0))
	lock := filepath.Join(r.common, "refs", "strata", "state.lock")
	writeFile(t, lock, "")
	_, err = s.Record(change("f.json", "2", t0))
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), lock) {
		t.Fatalf("record under a held lock: %v, want ErrLocked naming %s", err, lock)
	}
	os.Remove(lock)
	mustRecord(t, s, change("f.json", "2", t0))
	fsck(t, r.wt)
}

func TestOutsideGC(t *testing.T) {
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		for i := 0; i < 5; i++ {
			mustRecord(t, s, change("d/f.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))
		}
		runGit(t, r.main, "gc", "--quiet", "--prune=now")
		loose, _ := filepath.Glob(filepath.Join(r.common, "objects", "??", "*"))
		if len(loose) != 0 {
			t.Fatalf("gc left %d loose objects", len(loose))
		}
		// Recording what is already there writes nothing.
		if _, err := s.Record(change("d/f.json", "4", t0.Add(time.Minute))); !errors.Is(err, state.ErrUnchanged) {
			t.Fatalf("unchanged after gc: %v", err)
		}
		if loose, _ = filepath.Glob(filepath.Join(r.common, "objects", "??", "*")); len(loose) != 0 {
			t.Fatalf("an unchanged record wrote %d loose objects", len(loose))
		}
		// A new Store and the old one (whose go-git view predates the pack)
		// both keep working.
		mustRecord(t, s, change("d/f.json", "after", t0.Add(time.Minute)), change("e.json", "new", t0.Add(time.Minute)))
		s2, err := Open(r.open)
		if err != nil {
			t.Fatal(err)
		}
		mustRecord(t, s2, change("d/f.json", "after2", t0.Add(2*time.Minute)))
		if b, err := s.ReadFile(s.StateRef()+"~3", "d/f.json", anySize); err != nil || string(b) != "3" {
			t.Fatalf("ReadFile of a packed version = %q, %v", b, err)
		}
		if n := runGit(t, r.wt, "rev-list", "--count", s.StateRef()); n != "7" {
			t.Fatalf("%s commits, want 7", n)
		}
		if _, err := s.Record(change("d/f.json", "after2", t0.Add(3*time.Minute))); !errors.Is(err, state.ErrUnchanged) {
			t.Fatalf("old store does not see the new head: %v", err)
		}
	})
}

func TestGCTrigger(t *testing.T) {
	old := GCInterval
	GCInterval = 3
	defer func() { GCInterval = old }()
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	before, packs := gcStarted.Load(), repackStarted.Load()
	for i := 0; i < 7; i++ {
		mustRecord(t, s, change("f.json", itoa(int64(i)), t0))
		WaitHousekeeping() // each gc done before the next record: see TestHousekeepingOneAtATime
	}
	if n := gcStarted.Load() - before; n != 2 {
		t.Fatalf("gc started %d times for 7 records at interval 3, want 2", n)
	}
	// gc --auto does nothing below its thresholds: the interval's repack
	// follows each gc
	if n := repackStarted.Load() - packs; n != 2 {
		t.Fatalf("repack started %d times after 2 gc runs, want 2", n)
	}
	b, _ := os.ReadFile(filepath.Join(r.common, "strata", "gc-count"))
	if len(b) != 1 {
		t.Fatalf("counter holds %d, want 1", len(b))
	}
}

// housekeepingRepo opens a new repository with a repack turn every pack and
// a gc turn every gc records, for the length of the test.
func housekeepingRepo(t *testing.T, pack, gc int) (*testRepo, *Store) {
	t.Helper()
	oldP, oldG := PackInterval, GCInterval
	PackInterval, GCInterval = pack, gc
	t.Cleanup(func() { PackInterval, GCInterval = oldP, oldG })
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

// While a background repack or gc that strata started runs (it holds
// housekeepingLock, here held by a descriptor of the test's own, as
// another process's child would), no other is started: a repack's turn is
// skipped, a gc's is kept (the count stays past the interval) and taken by
// the first record after the lock goes.
func TestHousekeepingOneAtATime(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock(2): background runs are not kept apart there")
	}
	r, s := housekeepingRepo(t, 2, 5)
	held := tryLock(housekeepingLock(r.common), gitperm.Umask)
	if held == nil {
		t.Fatal("cannot take the lock")
	}
	if tryLock(housekeepingLock(r.common), gitperm.Umask) != nil {
		t.Fatal("the lock was taken twice")
	}
	packs, gcs := repackStarted.Load(), gcStarted.Load()
	for i := 0; i < 6; i++ { // past two repack turns and the gc's
		mustRecord(t, s, change("f.json", itoa(int64(i)), t0))
	}
	if n, m := repackStarted.Load()-packs, gcStarted.Load()-gcs; n != 0 || m != 0 {
		t.Fatalf("with the lock held: %d repacks and %d gc started", n, m)
	}
	if b, _ := os.ReadFile(filepath.Join(r.common, "strata", "gc-count")); len(b) != 6 {
		t.Fatalf("counter holds %d, want 6 (the gc's turn kept)", len(b))
	}
	held.Close()
	mustRecord(t, s, change("f.json", "after", t0))
	if m := gcStarted.Load() - gcs; m != 1 {
		t.Fatalf("after the lock went: gc started %d times, want 1", m)
	}
	// the gc now holds the lock through its inherited descriptor, until it
	// exits
	WaitHousekeeping()
	if l := tryLock(housekeepingLock(r.common), gitperm.Umask); l == nil {
		t.Fatal("the lock is still held after the gc exited")
	} else {
		l.Close()
	}
}

// A turn that comes due while a run holds the lock is taken when that run
// exits, not dropped: records past three repack intervals in quick
// succession (faster than git starts) end with three repacks run, one after
// the other, and nothing loose.
func TestHousekeepingOwedTurnTaken(t *testing.T) {
	r, s := housekeepingRepo(t, 4, 1000)
	packs := repackStarted.Load()
	for i := 0; i < 12; i++ {
		mustRecord(t, s, change("f.json", itoa(int64(i)), t0))
	}
	WaitHousekeeping()
	if n := repackStarted.Load() - packs; n < 2 || n > 3 {
		// 3 when each turn came with the lock free, 2 when the second
		// and third came due while the first ran (one owed turn)
		t.Fatalf("%d repacks for 3 intervals", n)
	}
	if n := looseCount(t, r.common); n > 0 {
		t.Fatalf("%d loose objects left: the last turn was dropped", n)
	}
	fsck(t, r.main)
}

func TestTrailersRoundTrip(t *testing.T) {
	ps := []pending{
		{ch: state.Change{Path: "a b.json", Class: state.ClassInitiative, Source: state.SourceHook, Schema: "initiative"}, action: state.ActionAdd},
		{ch: state.Change{Path: "x\ny", Class: state.ClassMemory, Source: state.SourceRecord}, action: state.ActionUpdate},
		{ch: state.Change{Path: `"q"`, Class: state.ClassGraph, Source: state.SourceSync, Schema: "json"}, action: state.ActionDelete},
		{ch: state.Change{Path: " lead", Class: state.ClassGraph}, action: state.ActionDelete},
	}
	got := parseTrailers(recordMessage(ps, time.Now()))
	if len(got) != len(ps) {
		t.Fatalf("parsed %d blocks: %+v", len(got), got)
	}
	for i, p := range ps {
		want := state.Entry{Path: p.ch.Path, Action: p.action, Class: p.ch.Class, Source: p.ch.Source, Schema: p.ch.Schema}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("block %d = %+v, want %+v", i, got[i], want)
		}
	}
	// Only the last paragraph holds trailers; unknown keys are ignored.
	msg := "update x\n\nStrata-Path: not-a-trailer\n\nStrata-Path: x\nStrata-Action: update\nSigned-off-by: a\nStrata-Future: y\n"
	if got := parseTrailers(msg); len(got) != 1 || got[0].Path != "x" || got[0].Action != state.ActionUpdate {
		t.Fatalf("parse = %+v", got)
	}
}

// A Strata-Class an older strata wrote from a .strata.yaml class that is
// not a name (before config refused one, attack35b L1) still reads, as
// written: the check is of configuration, not of history.
func TestTrailersOldClassStillReads(t *testing.T) {
	for _, class := range []string{"ok\x1b]0;t\a\x1b[2J", "a b", "caf\u00e9", "a\u202eb"} {
		msg := "record\n\nStrata-Path: x\nStrata-Action: add\nStrata-Class: " + class + "\nStrata-Source: record\nStrata-Schema: json\n"
		got := parseTrailers(msg)
		if len(got) != 1 || got[0].Class != state.Class(class) || got[0].Source != state.SourceRecord || got[0].Schema != "json" {
			t.Errorf("class %q: parse = %+v", class, got)
		}
	}
}

func TestFsync(t *testing.T) {
	Fsync = true
	defer func() { Fsync = false }()
	r := newTestRepo(t, "plain")
	snap := r.snapshot(t)
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		mustRecord(t, s, change("a/b.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))
	}
	if n := runGit(t, r.wt, "rev-list", "--count", s.StateRef()); n != "3" {
		t.Fatalf("%s commits", n)
	}
	r.checkInvariants(t, snap)
}

// TestReadsAfterOutsideGC reads through a Store that has its view of the
// packs, lets an outside git gc pack and remove every loose object, and
// reads again: the objects are found in the new pack.
func TestReadsAfterOutsideGC(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runGit(t, r.main, "gc", "--quiet") // a first pack, so the Store holds a pack list
	if _, err := s.Resolve("HEAD~1"); err != nil {
		t.Fatal(err)
	}
	var commits []string
	for i := 0; i < 3; i++ {
		commits = append(commits, mustRecord(t, s, change("f.json", itoa(int64(i)), t0.Add(time.Duration(i)*time.Second)))[0].Commit)
	}
	runGit(t, r.main, "gc", "--quiet", "--prune=now")
	got, err := s.Resolve(s.StateRef() + "~2")
	if err != nil || got != commits[0] {
		t.Fatalf("Resolve after gc = %s, %v; want %s", got, err, commits[0])
	}
	if b, err := s.ReadFile(s.StateRef()+"~1", "f.json", anySize); err != nil || string(b) != "1" {
		t.Fatalf("ReadFile after gc = %q, %v", b, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHeadOddRefs(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	mustRecord(t, s, change("f.json", "1", t0))
	for _, ref := range []string{"refs/strata", "refs/strata/state/below", "refs/nope"} {
		if _, err := s.Head(ref); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Head(%s): %v, want ErrNotFound", ref, err)
		}
	}
	// A symbolic ref is followed.
	writeFile(t, filepath.Join(r.common, "refs", "sym"), "ref: "+s.StateRef()+"\n")
	want, _ := s.Head(s.StateRef())
	if got, err := s.Head("refs/sym"); err != nil || got != want {
		t.Errorf("Head(symbolic) = %s, %v; want %s", got, err, want)
	}
}

// The decoded-tree cache is bounded by the bytes its trees hold, not only
// by their count: a walk over many versions of a large directory keeps at
// most maxTreeBytes of them, and every version still reads back right.
func TestTreeCacheBoundedByBytes(t *testing.T) {
	old := maxTreeBytes
	t.Cleanup(func() { maxTreeBytes = old }) // after forEachRepo's parallel subtests
	maxTreeBytes = 64 << 10
	forEachRepo(t, func(t *testing.T, r *testRepo, s *Store) {
		var chs []state.Change
		for i := range 400 {
			chs = append(chs, change(fmt.Sprintf("d/file-%03d.json", i), "0", t0))
		}
		mustRecord(t, s, chs...)
		var commits []string
		for v := 1; v <= 30; v++ {
			commits = append(commits, mustRecord(t, s, change("d/file-000.json", itoa(int64(v)), t0.Add(time.Duration(v)*time.Minute)))[0].Commit)
		}
		for i, c := range commits {
			data, err := s.ReadFile(c, "d/file-000.json", anySize)
			if err != nil || string(data) != itoa(int64(i+1)) {
				t.Fatalf("version %d: %q, %v", i+1, data, err)
			}
			held := 0
			for _, e := range s.trees {
				held += treeCost(e)
			}
			if held != s.treeBytes || held > maxTreeBytes {
				t.Fatalf("after version %d the cache holds %d bytes (counted %d), bound %d", i+1, held, s.treeBytes, maxTreeBytes)
			}
		}
	})
}
