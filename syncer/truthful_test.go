package syncer

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

// commitTruthful writes, in the repository at dir, a commit of tree with
// parent (none when ""), whose message has subject and one trailer block
// per path the tree changes from the parent's, as git diff-tree gives them:
// the commit a peer running strata would write for that change.
func commitTruthful(tb testing.TB, dir, tree, parent, subject string) string {
	tb.Helper()
	return commitTruthfulAt(tb, dir, tree, parent, subject, "2026-11-22T10:00:00.000000000Z")
}

// commitTruthfulAt is commitTruthful with the Strata-Time value at.
func commitTruthfulAt(tb testing.TB, dir, tree, parent, subject, at string) string {
	tb.Helper()
	from := "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree
	if parent != "" {
		from = git(tb, dir, "rev-parse", parent+"^{tree}")
	}
	out := git(tb, dir, "diff-tree", "-r", "-z", "--no-renames", "--name-status", from, tree)
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	f := strings.Split(strings.Trim(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		action := map[string]string{"A": "add", "D": "delete"}[f[i]]
		if action == "" {
			action = "update"
		}
		b.WriteString("Strata-Path: " + trailerPath(f[i+1]) + "\nStrata-Action: " + action + "\nStrata-Class: x\nStrata-Source: record\nStrata-Schema: \n")
	}
	b.WriteString("Strata-Time: " + at + "\n")
	args := []string{"commit-tree", tree, "-m", b.String()}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return git(tb, dir, args...)
}

// trailerPath quotes p as strata's trailers do (docs/format.md).
func trailerPath(p string) string {
	q := p == "" || p[0] == '"' || p != strings.TrimSpace(p) || !utf8.ValidString(p)
	for i := 0; i < len(p); i++ {
		q = q || p[i] < 0x20 || p[i] == 0x7f
	}
	if q {
		return strconv.Quote(p)
	}
	return p
}

// syncErr runs a sync and returns its error, ticking the machine's clock.
func (m *machine) syncErr() error {
	m.tb.Helper()
	_, err := Sync(context.Background(), m.eng, Options{Cwd: m.dir})
	m.now = m.now.Add(time.Second)
	return err
}

// noRefusal fails when err is sync's refusal of the remote's state.
func noRefusal(tb testing.TB, who string, err error) {
	tb.Helper()
	var ue *gitstore.UnsafeTreeError
	if errors.As(err, &ue) {
		tb.Fatalf("%s: sync refused a history strata wrote: %v", who, err)
	}
}

// Every kind of commit strata writes on the state ref passes the check of
// fetched trailers: init, records of several files (add, update, delete),
// the watcher's commit per file, restore of a deleted file, the TTL's
// expiry, forget's rewrites (a merge among them), sync's merges (decided,
// kept local, a path both sides added), and the one-parent commit of a
// machine with no history that kept its own version. Each is fetched by a
// machine that has all the rest, and the whole history by fresh ones.
func TestSyncTakesEveryHistoryStrataWrites(t *testing.T) {
	w := newWorld(t, "a", "b", "c", "d")
	a, b, c, d := w.ms[0], w.ms[1], w.ms[2], w.ms[3]
	kept := func(m *machine, p string) config.Kept {
		k, ok := m.eng.Config().Classify(p)
		if !ok {
			t.Fatalf("%s not kept", p)
		}
		return k
	}
	const notes, other = ".claude/notes.json", ".claude/other.json"
	a.write(wsPath, `{"type":"APEX","phase":"plan","lastUpdated":"2026-11-01T10:00:00Z"}`+"\n")
	a.write(notes, `{"k": 1}`+"\n")
	if _, err := a.eng.Init(); err != nil { // init
		t.Fatal(err)
	}
	a.write(notes, `{"k": 2}`+"\n")
	a.write(other, `{"o": 1}`+"\n")
	a.record() // one commit: an update and an add
	if err := os.Remove(filepath.Join(a.dir, notes)); err != nil {
		t.Fatal(err)
	}
	a.record() // a deletion
	if _, err := a.eng.Restore([]config.Kept{kept(a, notes)}, engine.Point{}); err != nil {
		t.Fatal(err) // restore of the deleted file
	}
	a.write(notes, `{"k": 3}`+"\n")
	a.write(other, `{"o": 2}`+"\n")
	if _, err := a.eng.Record([]config.Kept{kept(a, notes), kept(a, other)}, state.SourceWatch); err != nil {
		t.Fatal(err) // the watcher's batch: one commit per file
	}
	if x, _, err := layers.New(a.eng, nil).Expire(state.SourceRecord); err != nil || x == nil {
		t.Fatalf("expire = %+v, %v; want the workflow state expired", x, err)
	}
	noRefusal(t, "a", a.syncErr())
	noRefusal(t, "b", b.syncErr()) // a fresh machine: the whole history

	// merges: both sides change other files, then the same one
	a.write(notes, `{"k": 4}`+"\n")
	a.record()
	b.write(other, `{"o": 3}`+"\n")
	b.write(".claude/both.json", `{"b": 1}`+"\n")
	b.record()
	noRefusal(t, "a", a.syncErr())
	a.write(".claude/both.json", `{"a": 1}`+"\n")
	a.record()
	noRefusal(t, "a", a.syncErr())
	noRefusal(t, "b", b.syncErr()) // merges a's work: kept both or decided
	noRefusal(t, "a", a.syncErr()) // fast-forwards to b's merge
	a.write(initPath, initiative("in_progress"))
	a.record()
	noRefusal(t, "a", a.syncErr())
	noRefusal(t, "b", b.syncErr())
	a.write(initPath, initiative("completed"))
	a.record()
	b.now = a.now.Add(time.Minute)
	b.write(initPath, initiative("blocked")) // later, but refused by the status machine
	b.record()
	noRefusal(t, "b", b.syncErr())
	noRefusal(t, "a", a.syncErr()) // kept local
	noRefusal(t, "b", b.syncErr())

	// forget: a merges b's edit into a secret it never pushed, then forgets it
	b.write(other, `{"o": 4}`+"\n")
	b.record()
	noRefusal(t, "b", b.syncErr())
	a.now = b.now.Add(time.Minute)
	a.write(other, `{"o": "SECRET"}`+"\n")
	a.write(notes, `{"k": 5}`+"\n")
	a.record()
	r, err := a.eng.ResolveRemote(context.Background(), "origin", a.dir)
	if err != nil {
		t.Fatal(err)
	}
	fetched, err := a.eng.Fetch(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.eng.MergeState(fetched, "merge origin", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eng.ForgetUnpublished(context.Background(), []string{other}, false, ""); err != nil {
		t.Fatal(err)
	}
	noRefusal(t, "a", a.syncErr())
	noRefusal(t, "b", b.syncErr())

	// a machine with no history does not take a version over its max_size,
	// and keeps it in the shared state (attack25 recheck N3): it takes the
	// remote's head as it is, writing no commit, and leaves its disk alone
	if err := os.WriteFile(filepath.Join(c.dir, config.FileName), []byte("max_size: 2KB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.eng, err = engine.Open(c.dir); err != nil {
		t.Fatal(err)
	}
	c.eng.Now = func() time.Time { return c.now }
	a.write(".claude/delegation-log.json", `{"entries": [], "note": "`+strings.Repeat("x", 4096)+`"}`+"\n")
	a.record()
	noRefusal(t, "a", a.syncErr())
	noRefusal(t, "c", c.syncErr())
	if got, want := git(t, c.dir, "rev-parse", "refs/strata/state"), git(t, w.remote, "rev-parse", "refs/strata/state"); got != want || c.read(".claude/delegation-log.json") != "<absent>" {
		t.Fatalf("c at %s, the remote at %s; want the remote's head, the file not written", got, want)
	}
	noRefusal(t, "a", a.syncErr())
	noRefusal(t, "b", b.syncErr())
	noRefusal(t, "d", d.syncErr()) // a fresh machine, the whole history
	if got, want := git(t, d.dir, "rev-parse", "refs/strata/state"), git(t, w.remote, "rev-parse", "refs/strata/state"); got != want {
		t.Fatalf("d at %s, the remote at %s", got, want)
	}
	for _, m := range []*machine{a, d} {
		ents, err := m.eng.Log(state.LogQuery{Path: ".claude/delegation-log.json"})
		if err != nil || len(ents) == 0 || ents[0].Action == state.ActionDelete {
			t.Errorf("%s: log .claude/delegation-log.json = %+v, %v; want no deletion", m.name, ents, err)
		}
	}
	w.fsckAll()
}

// A peer's commits whose Strata-* trailers do not say what they change
// (attack24 G1) are refused when fetched, each case with one line naming
// the commit, the path and what is wrong: the local ref, the tracking ref
// and the kept files stay as they were. A lying commit buried under a
// clean head is refused the same way, and so is a hostile entry in it
// (a symbolic link) that the head no longer holds.
func TestSyncRefusesUntruthfulCommits(t *testing.T) {
	w, a, b := syncedPair(t)
	const notes = ".claude/notes.json"
	b.write(notes, `{"k": 1}`+"\n")
	b.record()
	b.sync()
	a.sync()
	base := git(t, w.remote, "rev-parse", "refs/strata/state")
	// tree returns the remote's base tree with .claude's entries replaced
	tree := func(entries ...rawEntry) string {
		ls := git(t, w.remote, "ls-tree", base+":.claude")
		keep := map[string]rawEntry{}
		for _, l := range strings.Split(ls, "\n") {
			f := strings.Fields(l)
			keep[f[3]] = rawEntry{f[0], f[3], f[2]}
		}
		for _, e := range entries {
			if e.id == "" {
				delete(keep, e.name)
			} else {
				keep[e.name] = e
			}
		}
		var es []rawEntry
		for _, n := range slices.Sorted(maps.Keys(keep)) {
			es = append(es, keep[n])
		}
		return writeRawTree(t, w.remote, rawEntry{"40000", ".claude", writeRawTree(t, w.remote, es...)})
	}
	phase := func(p string) rawEntry { return rawEntry{"100644", "workflow-state.json", blobIn(t, w.remote, ws(p))} }
	commit := func(tree, parent, msg string) string {
		return git(t, w.remote, "commit-tree", tree, "-p", parent, "-m", msg)
	}
	block := func(p, action string) string {
		return "Strata-Path: " + p + "\nStrata-Action: " + action + "\nStrata-Class: x\nStrata-Source: watch\nStrata-Schema: \n"
	}
	refused := func(what, head, in, want string) {
		t.Helper()
		git(t, w.remote, "update-ref", "refs/strata/state", head)
		local := git(t, a.dir, "rev-parse", "refs/strata/state")
		tracking := git(t, a.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/strata-remotes/")
		disk := a.read(wsPath) + a.read(notes)
		err := a.syncErr()
		var ue *gitstore.UnsafeTreeError
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: sync = %v, want one line of an UnsafeTreeError", what, err)
		}
		if ue.In != in || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "(nothing merged)") {
			t.Errorf("%s: %q (commit %s), want commit %s and %q", what, err, ue.In, in, want)
		}
		if in != head && !strings.Contains(err.Error(), "commit "+in[:10]+": ") {
			t.Errorf("%s: %q does not name commit %s", what, err, in[:10])
		}
		if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != local {
			t.Errorf("%s: the local state ref moved", what)
		}
		if got := git(t, a.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/strata-remotes/"); got != tracking {
			t.Errorf("%s: tracking ref %q, want %q", what, got, tracking)
		}
		if got := a.read(wsPath) + a.read(notes); got != disk {
			t.Errorf("%s: kept files became %q", what, got)
		}
	}

	// the report's repro: C1 changes the workflow state with no trailers,
	// C2 deletes notes.json and claims a watcher's update of the state
	c1 := commit(tree(phase("attacker")), base, "housekeeping")
	c2 := commit(tree(phase("attacker"), rawEntry{name: "notes.json"}), c1,
		"update .claude/workflow-state.json\n\n"+block(wsPath, "update"))
	refused("no trailers, then false ones", c2, c2, "entry .claude/notes.json: the commit deletes it, its Strata-* trailers do not name it")
	refused("no trailers", c1, c1, "entry .claude/workflow-state.json: the commit updates it, its Strata-* trailers do not name it")
	c5 := commit(tree(phase("attacker"), rawEntry{name: "notes.json"}), base, "x\n\n"+block(wsPath, "update"))
	refused("false trailers at the head", c5, c5, "entry .claude/notes.json: the commit deletes it, its Strata-* trailers do not name it")
	c3 := commit(tree(phase("attacker")), base, "x\n\n"+block(wsPath, "add"))
	refused("the wrong action", c3, c3, "entry .claude/workflow-state.json: the commit updates it, its Strata-* trailers say add")
	c4 := commit(tree(), base, "x\n\n"+block(notes, "update"))
	refused("a path it does not change", c4, c4, "entry .claude/notes.json: its Strata-* trailers say update, the commit does not change it")
	// a block whose Strata-Action a second Strata-Path cuts short, and a
	// block with none (before: `its Strata-* trailers say ""`)
	c6 := commit(tree(phase("attacker")), base, "x\n\nStrata-Path: "+notes+"\nStrata-Path: "+wsPath+"\nStrata-Action: update\nStrata-Source: record\n")
	refused("two paths in one block", c6, c6, "entry .claude/notes.json: its Strata-* trailer block names a second path, .claude/workflow-state.json, before any Strata-Action (nothing merged)")
	c7 := commit(tree(phase("attacker")), base, "x\n\nStrata-Path: "+wsPath+"\nStrata-Source: record\n")
	refused("a block with no action", c7, c7, "entry .claude/workflow-state.json: its Strata-* trailer block has no Strata-Action (nothing merged)")
	// buried under a clean head: a truthful commit on top of the liar
	liar := commit(tree(phase("attacker")), base, "gc")
	clean := commitTruthful(t, w.remote, tree(phase("attacker"), rawEntry{"100644", "x.json", blobIn(t, w.remote, "{}\n")}), liar, "clean")
	refused("a liar under a clean head", clean, liar, "entry .claude/workflow-state.json: the commit updates it")
	link := commitTruthful(t, w.remote, tree(rawEntry{"120000", "link.json", blobIn(t, w.remote, "/etc/passwd")}), base, "link")
	gone := commitTruthful(t, w.remote, tree(), link, "unlink")
	refused("a symbolic link under a clean head", gone, link, "entry .claude/link.json: a symbolic link, not a regular file")

	// a truthful peer's commits are taken, and log then agrees with the
	// files
	good := commitTruthful(t, w.remote, tree(phase("exec"), rawEntry{name: "notes.json"}), base, "good")
	git(t, w.remote, "update-ref", "refs/strata/state", good)
	a.sync()
	if a.read(notes) != "<absent>" || a.read(wsPath) != ws("exec") {
		t.Fatalf("the truthful commit was not taken: %q %q", a.read(notes), a.read(wsPath))
	}
	ents, err := a.eng.Log(state.LogQuery{Path: notes})
	if err != nil || len(ents) == 0 || ents[0].Action != state.ActionDelete {
		t.Fatalf("log %s = %+v, %v; want its deletion first", notes, ents, err)
	}
}

// An older strata's commit of a machine with no history that kept its own
// version (every block a sync add of a file it holds; what it drops from
// the remote's head named only on kept local lines) is taken only where
// this machine would have kept its own too: the dropped version changes
// what Claude Code runs, fails its schema, or is over max_size here. Any
// other drop is a deletion that log, blame and restore would never see,
// and refused like an untruthful commit, naming the commit and the path
// (attack24 recheck H1).
func TestSyncJudgesOlderKeptLocalCommits(t *testing.T) {
	w := newWorld(t, "a", "b", "c")
	a, b, c := w.ms[0], w.ms[1], w.ms[2]
	const notes, settings, big = ".claude/notes.json", ".claude/settings.json", ".claude/big.json"
	a.write(wsPath, ws("plan"))
	a.write(notes, `{"k": 1}`+"\n")
	a.write(settings, `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}`+"\n")
	a.write(big, `{"note": "`+strings.Repeat("x", 4096)+`"}`+"\n")
	a.record()
	a.sync()
	b.sync()
	base := git(t, w.remote, "rev-parse", "refs/strata/state")
	// an invalid workflow state on the remote, as a truthful commit
	tree := func(commit string, drop ...string) string {
		git(t, w.remote, "read-tree", commit)
		for _, p := range drop {
			cmd := exec.Command("git", "update-index", "--index-info")
			cmd.Dir, cmd.Env = w.remote, gitEnv(w.remote)
			cmd.Stdin = strings.NewReader("0 " + strings.Repeat("0", 40) + "\t" + p + "\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index: %v: %s", err, out)
			}
		}
		return git(t, w.remote, "write-tree")
	}
	git(t, w.remote, "read-tree", base)
	git(t, w.remote, "update-index", "--cacheinfo", "100644,"+blobIn(t, w.remote, `{"type": "NOPE"}`+"\n")+","+wsPath)
	invalid := commitTruthful(t, w.remote, git(t, w.remote, "write-tree"), base, "invalid")
	// older makes the older form on parent, dropping paths
	older := func(parent string, drop ...string) string {
		tr := tree(parent, drop...)
		var msg strings.Builder
		msg.WriteString("sync with origin\n\n")
		for _, p := range drop {
			msg.WriteString("kept local " + p + ": not taken\n")
		}
		msg.WriteString("\n")
		for _, p := range strings.Fields(git(t, w.remote, "ls-tree", "-r", "--name-only", tr)) {
			msg.WriteString("Strata-Path: " + p + "\nStrata-Action: add\nStrata-Class: x\nStrata-Source: sync\nStrata-Schema: \n")
		}
		msg.WriteString("Strata-Time: 2026-11-22T10:00:00.000000000Z\n")
		return git(t, w.remote, "commit-tree", tr, "-p", parent, "-m", msg.String())
	}
	refused := func(who *machine, what, head, in, path string) {
		t.Helper()
		git(t, w.remote, "update-ref", "refs/strata/state", head)
		local := git(t, who.dir, "for-each-ref", "--format=%(objectname)", "refs/strata/state")
		err := who.syncErr()
		var ue *gitstore.UnsafeTreeError
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: sync = %v, want one line of an UnsafeTreeError", what, err)
		}
		want := "entry " + path + ": the commit deletes it, its Strata-* trailers do not name it"
		if ue.In != in || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q (commit %s), want commit %s and %q", what, err, ue.In, in, want)
		}
		if got := git(t, who.dir, "for-each-ref", "--format=%(objectname)", "refs/strata/state"); got != local {
			t.Errorf("%s: the local state ref moved", what)
		}
	}

	// the report's case: a valid file, named on a kept local line
	h1 := older(base, notes)
	refused(b, "a valid notes.json dropped", h1, h1, notes)
	if b.read(notes) != `{"k": 1}`+"\n" {
		t.Fatalf("b's %s is %q", notes, b.read(notes))
	}
	// buried under a truthful commit, and fetched by a machine with no
	// history
	clean := commitTruthful(t, w.remote, tree(h1, wsPath), h1, "clean")
	refused(c, "under a clean head, on a fresh machine", clean, h1, notes)
	// one true drop beside a false one
	both := older(base, notes, settings)
	refused(b, "settings and notes dropped", both, both, notes)

	// what this machine would keep too: settings that run something, an
	// invalid version, one over max_size here
	if err := os.WriteFile(filepath.Join(b.dir, config.FileName), []byte("max_size: 2KB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	git(t, w.remote, "update-ref", "refs/strata/state", older(older(invalid, wsPath), settings, big))
	noRefusal(t, "b", b.syncErr())
	if got, want := git(t, b.dir, "rev-parse", "refs/strata-remotes/origin/state"), git(t, w.remote, "rev-parse", "refs/strata/state"); got != want {
		t.Fatalf("b's tracking ref at %s, the remote at %s", got, want)
	}
	// taken in two steps — a trailered update to an invalid version, then
	// the older form's drop of it — the drop is a deletion log PATH shows,
	// and restore PATH finds the version before it (attack25 recheck N2:
	// log showed the update only, restore said "not recorded")
	if got := b.read(wsPath); got != "<absent>" {
		t.Fatalf("b's %s: %q, want the drop taken", wsPath, got)
	}
	ents, err := b.eng.Log(state.LogQuery{Path: wsPath})
	if err != nil || len(ents) < 2 || ents[0].Action != state.ActionDelete || ents[0].Source != state.SourceSync || ents[1].Action != state.ActionUpdate {
		t.Fatalf("b: log %s = %+v, %v; want the drop as a sync deletion, then the update", wsPath, ents, err)
	}
	if all, err := b.eng.Log(state.LogQuery{}); err != nil || !slices.ContainsFunc(all, func(e state.Entry) bool {
		return e.Path == wsPath && e.Action == state.ActionDelete
	}) {
		t.Fatalf("b: log = %+v, %v; want the deletion of %s", all, err, wsPath)
	}
	k, _ := b.eng.Config().Classify(wsPath)
	if _, err := b.eng.Restore([]config.Kept{k}, engine.Point{}); err == nil || strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("b: restore %s = %v; want the invalid version before the drop found (and refused by its schema)", wsPath, err)
	}
	// a machine whose max_size takes the big file refuses its drop
	refused(c, "big.json dropped, under c's max_size", git(t, w.remote, "rev-parse", "refs/strata/state"),
		git(t, w.remote, "rev-parse", "refs/strata/state"), big)
}

// TestSyncTakesAModeOnlyChange: a file's mode is not part of its version
// (strata writes files 100644 and never writes a mode to disk), so a
// fetched commit that only makes a kept file executable is taken like any
// commit that changes no version: nothing named, nothing written. Refusing
// it (tried in this session) left every machine that had taken such an
// entry, and every machine after it, unable to sync for good.
func TestSyncTakesAModeOnlyChange(t *testing.T) {
	w := newWorld(t, "a", "b", "c")
	a, b, c := w.ms[0], w.ms[1], w.ms[2]
	const notes = ".claude/notes.json"
	a.write(wsPath, ws("plan"))
	a.write(notes, `{"k": 1}`+"\n")
	a.record()
	a.sync()
	b.sync()
	base := git(t, w.remote, "rev-parse", "refs/strata/state")
	ls := git(t, w.remote, "ls-tree", base+":.claude")
	var es []rawEntry
	for _, l := range strings.Split(ls, "\n") {
		f := strings.Fields(l)
		mode := f[0]
		if f[3] == "notes.json" {
			mode = "100755"
		}
		es = append(es, rawEntry{mode, f[3], f[2]})
	}
	tree := writeRawTree(t, w.remote, rawEntry{"40000", ".claude", writeRawTree(t, w.remote, es...)})
	exe := git(t, w.remote, "commit-tree", tree, "-p", base, "-m", "housekeeping")
	git(t, w.remote, "update-ref", "refs/strata/state", exe)

	b.sync() // takes it: no version changed
	if got := git(t, b.dir, "rev-parse", "refs/strata/state"); got != exe {
		t.Fatalf("b's ref %s, want the mode-only commit %s", got, exe)
	}
	if got := b.read(notes); got != `{"k": 1}`+"\n" {
		t.Fatalf("b's notes.json %q changed", got)
	}
	// b goes on recording on top of it; a, and c joining with no history,
	// take b's work
	b.write(wsPath, ws("implement"))
	b.record()
	b.sync()
	a.sync()
	c.sync()
	for _, m := range []*machine{a, c} {
		if got := m.read(wsPath); got != ws("implement") {
			t.Errorf("%s: workflow state %q, want b's", m.dir, got)
		}
		if got := m.read(notes); got != `{"k": 1}`+"\n" {
			t.Errorf("%s: notes.json %q", m.dir, got)
		}
	}
}
