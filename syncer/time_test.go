package syncer

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// A machine whose clock reads 2099 (or a peer that writes that
// Strata-Time) no longer wins every concurrent decision: the sync that
// takes its version counts its time as its own clock's now, and says so,
// and from then on it counts as the time of the merge built on it, so an
// edit made after that merge wins the next concurrent decision (attack24
// recheck: the time was taken on trust).
func TestSyncBoundsTimesAheadOfTheClock(t *testing.T) {
	w := newWorld(t, "a", "b", "c")
	a, b, c := w.ms[0], w.ms[1], w.ms[2]
	const notes = ".claude/notes.json"
	a.write(notes, `{"k": "base"}`+"\n")
	a.record()
	a.sync()
	b.sync()
	c.sync()

	b.now = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC) // b's clock is wrong
	b.write(notes, `{"k": "b, in 2099"}`+"\n")
	b.record()
	b.sync()

	a.now = t0.Add(time.Hour)
	a.write(notes, `{"k": "a"}`+"\n")
	a.record()
	rep := a.sync() // b's version is taken, as of now
	if got := a.read(notes); got != `{"k": "b, in 2099"}`+"\n" {
		t.Fatalf("a holds %q, want b's version, taken as now", got)
	}
	if len(rep.Decisions) != 1 || !strings.HasSuffix(rep.Decisions[0].WinnerNote, "is ahead of this machine's clock; taken as now") ||
		!rep.Decisions[0].WinnerTime.Before(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a's decisions = %+v, want b's time taken as now", rep.Decisions)
	}
	msg := git(t, a.dir, "log", "-1", "--format=%B", "refs/strata/state")
	if !strings.Contains(msg, "\n  "+rep.Decisions[0].Winner[:10]+": its time 2099-01-01T00:00:00Z is ahead of this machine's clock; taken as now\n") {
		t.Errorf("the merge's message does not say the time was taken as now:\n%s", msg)
	}

	// c, which never saw b's version, edits notes after a's merge: its
	// edit is the later one
	c.now = a.now.Add(time.Minute)
	c.write(notes, `{"k": "c, after a's merge"}`+"\n")
	c.record()
	rep = c.sync()
	if got := c.read(notes); got != `{"k": "c, after a's merge"}`+"\n" {
		t.Fatalf("c holds %q, want its own later edit (decisions %+v)", got, rep.Decisions)
	}
	if len(rep.Decisions) != 1 || !strings.Contains(rep.Decisions[0].LoserNote, "is ahead of this machine's clock; taken as that of "+git(t, a.dir, "rev-parse", "--short=10", "refs/strata/state")+", built on it") {
		t.Errorf("c's decisions = %+v, want b's time taken as that of a's merge", rep.Decisions)
	}
	a.now = c.now.Add(time.Minute)
	a.sync()
	if got := a.read(notes); got != `{"k": "c, after a's merge"}`+"\n" {
		t.Errorf("a holds %q after c's sync, want c's edit", got)
	}
	w.fsckAll()
}

// A fetched commit whose Strata-Time is not in the form strata writes
// (nine fraction digits, UTC, from 1970 on) is refused with one line naming
// the commit and its path, as an untruthful trailer is: exit 3, nothing
// merged. A well-formed time in 2099 is taken (and bounded).
func TestSyncRefusesMalformedStrataTime(t *testing.T) {
	w, a, b := syncedPair(t)
	const notes = ".claude/notes.json"
	b.write(notes, `{"k": 1}`+"\n")
	b.record()
	b.sync()
	a.sync()
	base := git(t, w.remote, "rev-parse", "refs/strata/state")
	// the remote's tree with notes.json replaced
	withNotes := func(content string) string {
		blob := blobIn(t, w.remote, content)
		ls := git(t, w.remote, "ls-tree", base+":.claude")
		var es []rawEntry
		for _, l := range strings.Split(ls, "\n") {
			f := strings.Fields(l)
			if f[3] == "notes.json" {
				es = append(es, rawEntry{"100644", "notes.json", blob})
				continue
			}
			es = append(es, rawEntry{f[0], f[3], f[2]})
		}
		return writeRawTree(t, w.remote, rawEntry{"40000", ".claude", writeRawTree(t, w.remote, es...)})
	}
	local := git(t, a.dir, "rev-parse", "refs/strata/state")
	for _, v := range []string{"-1", "2099-01-01T00:00:00Z", "2026-11-22T10:00:00.000000000+01:00", "garbage"} {
		c := commitTruthfulAt(t, w.remote, withNotes(`{"k": "`+v+`"}`+"\n"), base, "update .claude/notes.json", v)
		git(t, w.remote, "update-ref", "refs/strata/state", c)
		err := a.syncErr()
		var ue *gitstore.UnsafeTreeError
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Strata-Time %q: sync = %v, want one line of an UnsafeTreeError", v, err)
		}
		if want := "entry .claude/notes.json: its Strata-Time \"" + v + "\" is not a time in strata's form"; !strings.Contains(err.Error(), want) ||
			!strings.HasSuffix(err.Error(), "(nothing merged)") {
			t.Errorf("Strata-Time %q: %q, want %q", v, err, want)
		}
		if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != local {
			t.Errorf("Strata-Time %q: the local state ref moved", v)
		}
		if got := a.read(notes); got != `{"k": 1}`+"\n" {
			t.Errorf("Strata-Time %q: notes became %q", v, got)
		}
	}
	// buried under a commit with a good time, it is refused all the same,
	// naming the commit
	bad := commitTruthfulAt(t, w.remote, withNotes(`{"k": "bad"}`+"\n"), base, "update", "-1")
	good := commitTruthfulAt(t, w.remote, withNotes(`{"k": "good"}`+"\n"), bad, "update", "2026-11-22T10:00:00.000000000Z")
	git(t, w.remote, "update-ref", "refs/strata/state", good)
	err := a.syncErr()
	if err == nil || !strings.Contains(err.Error(), "commit "+bad[:10]+": entry .claude/notes.json: its Strata-Time \"-1\"") {
		t.Errorf("a bad time under a good one: sync = %v", err)
	}

	ahead := commitTruthfulAt(t, w.remote, withNotes(`{"k": "ahead"}`+"\n"), base, "update", "2099-01-01T00:00:00.000000000Z")
	git(t, w.remote, "update-ref", "refs/strata/state", ahead)
	a.sync()
	if got := a.read(notes); got != `{"k": "ahead"}`+"\n" {
		t.Errorf("a well-formed time in 2099 was not taken: notes %q", got)
	}
}

// A fetched commit whose header git fsck fails on (no author line, a
// committer ident it refuses, two authors) is refused with one line naming
// git's verdict, nothing merged: taken, this machine would push it on, and
// every remote that checks what it receives (receive.fsckObjects, as the
// big hosts set it) would refuse its state from then on (attack35 M1).
// git's own check of the fetch refuses it and keeps none of its objects,
// so git fsck stays clean (L1); a commit already in the object store, which
// that check never sees, is refused by strata's check of the fetched
// history. A remote ref naming a blob is refused the same way (exit 3, not
// "not found", L2).
func TestSyncRefusesCommitGitFsckFails(t *testing.T) {
	w, a, b := syncedPair(t)
	const notes = ".claude/notes.json"
	b.write(notes, `{"k": 1}`+"\n")
	b.record()
	b.sync()
	a.sync()
	b.write(notes, `{"k": 2}`+"\n")
	b.record()
	good := git(t, b.dir, "rev-parse", "refs/strata/state")
	raw := git(t, b.dir, "cat-file", "commit", good) + "\n"
	line := func(key string) string {
		l := raw[strings.Index(raw, "\n"+key+" ")+1:]
		return l[:strings.Index(l, "\n")+1]
	}
	author, committer := line("author"), line("committer")
	// the good commit's objects on the remote, under no shared ref yet
	git(t, b.dir, "push", "-q", w.remote, good+":refs/held/good")
	literal := func(dir, s string) string {
		cmd := exec.Command("git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, gitEnv(dir), strings.NewReader(s)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	local := git(t, a.dir, "rev-parse", "refs/strata/state")
	unmoved := func(name string) {
		t.Helper()
		if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != local {
			t.Errorf("%s: the local state ref moved", name)
		}
		if got := a.read(notes); got != `{"k": 1}`+"\n" {
			t.Errorf("%s: notes became %q", name, got)
		}
	}
	cases := []struct{ name, raw, want string }{
		{"no author", strings.Replace(raw, author, "", 1), "missingAuthor"},
		{"two authors", strings.Replace(raw, author, author+author, 1), "multipleAuthors"},
		{"zero-padded date", strings.Replace(raw, committer, "committer x <x@x> 01 +0000\n", 1), "zeroPaddedDate"},
		{"bad zone", strings.Replace(raw, committer, "committer x <x@x> 1 0000\n", 1), "badTimezone"},
	}
	for _, tc := range cases {
		bad := literal(w.remote, tc.raw)
		for _, head := range []string{bad, commitTruthful(t, w.remote, git(t, w.remote, "rev-parse", good+"^{tree}"), bad, "on top")} {
			git(t, w.remote, "update-ref", "refs/strata/state", head)
			err := a.syncErr()
			var fe *gitstore.FsckRefusedError
			if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), bad+": "+tc.want+": ") {
				t.Fatalf("%s: sync = %v, want one line of a FsckRefusedError naming %s and %q", tc.name, err, bad, tc.want)
			}
			unmoved(tc.name)
			cmd := exec.Command("git", "cat-file", "-e", bad)
			cmd.Dir, cmd.Env = a.dir, gitEnv(a.dir)
			if cmd.Run() == nil {
				t.Errorf("%s: the refused commit was kept in the object store", tc.name)
			}
		}
	}
	fsck(t, a.dir)

	// already in the object store (a plain git fetch brought it), the
	// commit is refused by strata's check of the history
	for _, tc := range cases {
		bad := literal(a.dir, tc.raw)
		literal(w.remote, tc.raw)
		git(t, a.dir, "fetch", "-q", w.remote, "refs/held/good:refs/held/good")
		git(t, w.remote, "update-ref", "refs/strata/state", bad)
		err := a.syncErr()
		var ue *gitstore.UnsafeTreeError
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "(git fsck: "+tc.want+": ") {
			t.Fatalf("%s, already here: sync = %v, want one line of an UnsafeTreeError with %q", tc.name, err, tc.want)
		}
		unmoved(tc.name + ", already here")
	}

	blob := blobIn(t, w.remote, "not a commit\n")
	git(t, w.remote, "update-ref", "refs/strata/state", blob)
	err := a.syncErr()
	var ue *gitstore.UnsafeTreeError
	if !errors.As(err, &ue) || errors.Is(err, state.ErrNotFound) || !strings.Contains(err.Error(), "is a blob, not a commit") {
		t.Errorf("a ref naming a blob: sync = %v, want an UnsafeTreeError (exit 3)", err)
	}
	unmoved("a blob")

	// the same commit, well formed, is taken
	git(t, w.remote, "update-ref", "refs/strata/state", good)
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err != nil {
		t.Fatal(err)
	}
	if got := a.read(notes); got != `{"k": 2}`+"\n" {
		t.Errorf("the well-formed commit was not taken: notes %q", got)
	}
}

// A peer whose clock is ten minutes behind pushes a commit on top of this
// machine's head: taken by a fast-forward, that commit (dated before this
// machine's own last version) would be what `show --at` and `restore --at` answer for
// a moment before the sync, and a date of 1970 would hide every version
// recorded here. The sync writes a merge commit instead, dated by this
// machine's clock, its own head first: a moment before the sync still
// reads its own version, a moment after the peer's (attack35 M2). A peer
// whose clock is right, or seconds off, is fast-forwarded to as before.
func TestSyncMergesBackdatedPeerCommit(t *testing.T) {
	w, a, b := syncedPair(t)
	const notes = ".claude/notes.json"
	b.now = t0.Add(time.Hour)
	b.write(notes, `{"v": "b's own"}`+"\n")
	b.record()
	b.sync()
	own := git(t, b.dir, "rev-parse", "refs/strata/state")
	// a's clock is ten minutes behind b's
	a.now = b.now.Add(-10 * time.Minute)
	a.sync()
	a.write(notes, `{"v": "a's"}`+"\n")
	a.record()
	a.sync()
	b.now = b.now.Add(time.Minute)
	rep := b.sync()
	if got := b.read(notes); got != `{"v": "a's"}`+"\n" {
		t.Fatalf("b holds %q after the sync, want a's later edit", got)
	}
	head := git(t, b.dir, "rev-parse", "refs/strata/state")
	if parents := strings.Fields(git(t, b.dir, "log", "-1", "--format=%P", head)); len(parents) != 2 || parents[0] != own {
		t.Fatalf("b's head %s has parents %v (result %s), want a merge with b's own head %s first", head, parents, rep.Result, own)
	}
	before, err := b.eng.Show(notes, engine.Point{At: b.now.Add(-30 * time.Second)})
	if err != nil || string(before) != `{"v": "b's own"}`+"\n" {
		t.Errorf("show --at a moment before the sync = %q, %v; want b's own version", before, err)
	}
	after, err := b.eng.Show(notes, engine.Point{At: b.now.Add(time.Minute)})
	if err != nil || string(after) != `{"v": "a's"}`+"\n" {
		t.Errorf("show --at after the sync = %q, %v; want a's version", after, err)
	}
	// a takes b's merge by a fast-forward: its time is after a's head
	a.sync()
	if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != head {
		t.Errorf("a is at %s, want b's merge %s", got, head)
	}
	// a peer whose clock is right is fast-forwarded to
	a.now = b.now.Add(time.Hour)
	a.write(notes, `{"v": "a's, later"}`+"\n")
	a.record()
	a.sync()
	aHead := git(t, a.dir, "rev-parse", "refs/strata/state")
	b.now = a.now.Add(time.Minute)
	b.sync()
	if got := git(t, b.dir, "rev-parse", "refs/strata/state"); got != aHead {
		t.Errorf("b is at %s, want a fast-forward to a's %s", got, aHead)
	}
	w.fsckAll()
}
