package syncer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// gitEnv isolates the git CLI from the machine's config.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test User", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test User", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
}

func git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// machine is one clone: a work tree with its own clock.
type machine struct {
	tb   testing.TB
	name string
	dir  string
	eng  *engine.Engine
	now  time.Time
}

// world is a bare remote and its clones, each in a temp dir.
type world struct {
	tb     testing.TB
	remote string
	ms     []*machine
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newWorld(tb testing.TB, names ...string) *world {
	tb.Helper()
	base := tb.TempDir()
	tb.Cleanup(gitstore.WaitHousekeeping) // a background repack still writing in base fails its removal
	return newWorldIn(tb, base, names...)
}

// newWorldIn is newWorld in directory base, which the caller removes.
func newWorldIn(tb testing.TB, base string, names ...string) *world {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not on PATH")
	}
	w := &world{tb: tb, remote: filepath.Join(base, "remote.git")}
	git(tb, base, "init", "-q", "--bare", w.remote)
	for _, n := range names {
		dir := filepath.Join(base, n)
		git(tb, base, "init", "-q", dir)
		git(tb, dir, "remote", "add", "origin", w.remote)
		if err := os.WriteFile(filepath.Join(dir, config.FileName), []byte("# defaults\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
		eng, err := engine.Open(dir)
		if err != nil {
			tb.Fatal(err)
		}
		m := &machine{tb: tb, name: n, dir: dir, eng: eng, now: t0}
		eng.Now = func() time.Time { return m.now }
		w.ms = append(w.ms, m)
	}
	return w
}

// syncedPair is a world of two clones, a and b, that both hold a's
// recorded workflow state in phase "plan", synced through the remote.
func syncedPair(t *testing.T) (w *world, a, b *machine) {
	t.Helper()
	w = newWorld(t, "a", "b")
	a, b = w.ms[0], w.ms[1]
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	b.sync()
	return w, a, b
}

func (m *machine) write(path, content string) {
	m.tb.Helper()
	if _, ok := m.eng.Config().Classify(path); !ok {
		m.tb.Fatalf("%s: not kept", path)
	}
	writeFile(m.tb, m.eng.Config().Abs(path), []byte(content))
}

func (m *machine) read(path string) string {
	m.tb.Helper()
	b, err := os.ReadFile(filepath.Join(m.dir, path))
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		m.tb.Fatal(err)
	}
	return string(b)
}

// record records the machine's edits at its own clock, then ticks it.
func (m *machine) record() {
	m.tb.Helper()
	paths, err := m.eng.AllPaths()
	if err != nil {
		m.tb.Fatal(err)
	}
	if _, err := m.eng.Record(paths, "record"); err != nil {
		m.tb.Fatal(err)
	}
	m.now = m.now.Add(time.Second)
}

func (m *machine) sync() *Report {
	m.tb.Helper()
	rep, err := Sync(context.Background(), m.eng, Options{Cwd: m.dir})
	if err != nil {
		m.tb.Fatalf("%s: sync: %v", m.name, err)
	}
	m.now = m.now.Add(time.Second)
	m.check()
	return rep
}

// check asserts the invariants after a mutating step: every kept file on
// disk is recorded, and git fsck --strict is clean.
func (m *machine) check() {
	m.tb.Helper()
	st, err := m.eng.Status()
	if err != nil {
		m.tb.Fatal(err)
	}
	for _, f := range st {
		if f.State != "recorded" && f.State != "invalid" && f.State != "not taken" {
			m.tb.Errorf("%s: %s is %s after sync, want recorded", m.name, f.Path, f.State)
		}
	}
	fsck(m.tb, m.dir)
	m.checkIndex()
}

// checkIndex asserts that Log and At, served from the per-ref time index,
// follow the chain of commits this machine's ref stood at, through merges
// and fast-forwards: git's first-parent chain, except at a merge another
// machine made that this one was fast-forwarded to, where it goes on with
// the parent this ref stood at (its reflog) and the first parent did not.
func (m *machine) checkIndex() {
	m.tb.Helper()
	head, _ := m.eng.Head()
	if head == "" {
		return
	}
	stood := map[string]bool{}
	for _, c := range strings.Fields(git(m.tb, m.dir, "reflog", "show", "--format=%H", "refs/strata/state")) {
		stood[c] = true
	}
	parents, records := map[string][]string{}, map[string]bool{}
	for _, c := range strings.Split(git(m.tb, m.dir, "log", "--format=%x01%H %P%x02%B", "refs/strata/state"), "\x01")[1:] {
		hp, body, _ := strings.Cut(c, "\x02")
		f := strings.Fields(hp)
		parents[f[0]] = f[1:]
		records[f[0]] = strings.Contains("\n"+body, "\nStrata-Path: ")
	}
	want := map[string]bool{}
	for c := head; c != ""; {
		ps := parents[c]
		if records[c] || len(ps) > 1 {
			want[c] = true // a commit that records a path, and every merge, even one that changed no path
		}
		next := ""
		if len(ps) > 0 {
			next = ps[0]
		}
		for _, p := range ps[min(1, len(ps)):] {
			// a parent the ref stood at, where the first did not; or
			// where the first is below it (a merge written in place of
			// a fast-forward to a commit dated before this side's head,
			// which the other side then fast-forwarded to)
			if stood[p] && (!stood[next] || ancestry(parents, p)[next]) {
				next = p
				break
			}
		}
		if next != "" && !stood[next] && len(ps) > 1 && next == ps[0] {
			// the ref's old head further up another parent (a third
			// machine's merge in between): the side holding a commit the
			// ref stood at that the first parent's side lacks
			first := ancestry(parents, ps[0])
			for _, p := range ps[1:] {
				for a := range ancestry(parents, p) {
					if stood[a] && !first[a] {
						next = p
						break
					}
				}
				if next != ps[0] {
					break
				}
			}
		}
		c = next
	}
	ents, err := m.eng.Log(state.LogQuery{})
	if err != nil {
		m.tb.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range ents {
		got[e.Commit] = true
	}
	if len(got) != len(want) {
		m.tb.Errorf("%s: Log lists %d commits, the chain the ref stood at %d", m.name, len(got), len(want))
	}
	for c := range want {
		if !got[c] {
			m.tb.Errorf("%s: Log misses %s", m.name, c)
		}
	}
	if at, err := m.eng.Commit(engine.Point{At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil || at != head { // past every commit, a machine's clock in 2099 too
		m.tb.Errorf("%s: At(future) = %s, %v; want the head %s", m.name, at, err, head)
	}
}

// ancestry is c and every commit reachable from it in parents.
func ancestry(parents map[string][]string, c string) map[string]bool {
	seen := map[string]bool{c: true}
	for todo := []string{c}; len(todo) > 0; {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, p := range parents[h] {
			if !seen[p] {
				seen[p] = true
				todo = append(todo, p)
			}
		}
	}
	return seen
}

func fsck(tb testing.TB, dir string) {
	tb.Helper()
	gitstore.WaitHousekeeping() // a background repack deleting loose objects fails fsck's listing
	cmd := exec.Command("git", "fsck", "--strict", "--no-progress")
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("error")) {
		tb.Fatalf("git fsck --strict in %s: %v\n%s", dir, err, out)
	}
}

// holdEverywhere asserts that every machine holds want (path → content),
// then that every repository passes git fsck.
func (w *world) holdEverywhere(want map[string]string) {
	w.tb.Helper()
	for _, m := range w.ms {
		for p, c := range want {
			if got := m.read(p); got != c {
				w.tb.Errorf("%s lost an edit: %s = %q, want %q", m.name, p, got, c)
			}
		}
	}
	w.fsckAll()
}

func (w *world) fsckAll() {
	for _, m := range w.ms {
		fsck(w.tb, m.dir)
	}
	fsck(w.tb, w.remote)
}

func ws(phase string) string {
	return fmt.Sprintf(`{"type":"APEX","phase":%q,"lastUpdated":"2026-11-22T10:00:00Z"}`+"\n", phase)
}

func initiative(status string) string {
	return fmt.Sprintf(`{"name":"x","status":%q,"lastUpdated":"2026-11-22T10:00:00Z"}`+"\n", status)
}

const (
	wsPath   = ".claude/workflow-state.json"
	initPath = ".claude/initiative.json"
	memPath  = ".claude/memory/MEMORY.md"
)

func TestDifferentFilesMergeWithNoLoss(t *testing.T) {
	w := newWorld(t, "a", "b", "c")
	a, b, c := w.ms[0], w.ms[1], w.ms[2]
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	b.sync()
	c.sync()
	// concurrent edits of different files
	a.write(wsPath, ws("implement"))
	a.record()
	b.write(initPath, initiative("created"))
	b.record()
	c.write(memPath, "# Memory\n\nfrom c\n")
	c.record()
	for _, m := range []*machine{a, b, c, a, b} {
		m.sync()
	}
	for _, m := range w.ms {
		if got := m.read(wsPath); got != ws("implement") {
			t.Errorf("%s: %s = %q", m.name, wsPath, got)
		}
		if got := m.read(initPath); got != initiative("created") {
			t.Errorf("%s: %s = %q", m.name, initPath, got)
		}
		if got := m.read(memPath); got != "# Memory\n\nfrom c\n" {
			t.Errorf("%s: %s = %q", m.name, memPath, got)
		}
	}
	heads := map[string]bool{}
	for _, m := range w.ms {
		h, _ := m.eng.Head()
		heads[h] = true
	}
	if len(heads) != 1 {
		t.Errorf("heads differ after syncing: %v", heads)
	}
	w.fsckAll()
}

func TestSameFileConvergesInAnyOrder(t *testing.T) {
	for _, order := range []string{"abc", "cba", "bca", "acb"} {
		t.Run(order, func(t *testing.T) {
			w := newWorld(t, "a", "b", "c")
			ms := map[byte]*machine{'a': w.ms[0], 'b': w.ms[1], 'c': w.ms[2]}
			ms['a'].write(wsPath, ws("plan"))
			ms['a'].record()
			for _, m := range w.ms {
				m.sync()
			}
			// Each edits the same file; b's edit is recorded last.
			for i, name := range []byte("acb") {
				m := ms[name]
				m.now = t0.Add(time.Hour + time.Duration(i)*time.Minute)
				m.write(wsPath, ws("edit by "+string(name)))
				m.record()
			}
			var losers []string
			for round := 0; round < 2; round++ {
				for _, name := range []byte(order) {
					rep := ms[name].sync()
					for _, d := range rep.Decisions {
						losers = append(losers, d.Loser)
					}
				}
			}
			for _, m := range w.ms {
				if got := m.read(wsPath); got != ws("edit by b") {
					t.Errorf("%s: %q, want b's later edit", m.name, got)
				}
			}
			if len(losers) == 0 {
				t.Fatal("no decision by timestamp was reported")
			}
			// Every loser is one restore away, in every clone.
			for _, m := range w.ms {
				for _, l := range losers {
					data, err := m.eng.FileAt(l, wsPath)
					if err != nil {
						t.Errorf("%s: loser %s: %v", m.name, l, err)
						continue
					}
					if s := string(data); s != ws("edit by a") && s != ws("edit by c") {
						t.Errorf("%s: loser %s holds %q", m.name, l, s)
					}
				}
			}
			// The decisions are in the merge commits' messages too.
			for _, m := range w.ms {
				var found bool
				for _, c := range strings.Fields(git(t, m.dir, "rev-list", "--merges", "refs/strata/state")) {
					ds, err := m.eng.MergeDecisions(c)
					if err != nil {
						t.Fatal(err)
					}
					for _, d := range ds {
						found = found || (d.Path == wsPath && d.Loser != "")
					}
				}
				if !found {
					t.Errorf("%s: no merge commit lists its decision", m.name)
				}
			}
			w.fsckAll()
		})
	}
}

func TestClockBehindOneSideOnlySurvives(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(wsPath, ws("plan"))
	a.write(initPath, initiative("created"))
	a.record()
	a.sync()
	b.sync()
	// b's clock is an hour behind: its edit is "older" than everything a did,
	// but a never touched that file, so it must survive.
	b.now = a.now.Add(-time.Hour)
	a.now = a.now.Add(time.Minute)
	a.write(wsPath, ws("implement"))
	a.record()
	b.write(initPath, initiative("in_progress"))
	b.record()
	a.sync()
	rep := b.sync()
	if len(rep.Decisions) != 0 {
		t.Errorf("decided by timestamp: %+v", rep.Decisions)
	}
	a.sync()
	for _, m := range w.ms {
		if got := m.read(initPath); got != initiative("in_progress") {
			t.Errorf("%s: the skewed machine's edit was lost: %q", m.name, got)
		}
		if got := m.read(wsPath); got != ws("implement") {
			t.Errorf("%s: %q", m.name, got)
		}
	}
	w.fsckAll()
}

func TestInvalidMergedVersionKeepsLocal(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(initPath, initiative("in_progress"))
	a.record()
	a.sync()
	b.sync()
	a.write(initPath, initiative("completed"))
	a.record()
	b.now = a.now.Add(time.Minute) // b's edit is later and would win
	b.write(initPath, initiative("blocked"))
	b.record()
	b.sync()
	rep := a.sync()
	if len(rep.Decisions) != 1 || rep.Decisions[0].KeptLocal == "" {
		t.Fatalf("decisions = %+v, want the local version kept", rep.Decisions)
	}
	if !strings.Contains(rep.Decisions[0].KeptLocal, "completed") {
		t.Errorf("reason = %q", rep.Decisions[0].KeptLocal)
	}
	if got := a.read(initPath); got != initiative("completed") {
		t.Errorf("a: %q, want its completed initiative kept", got)
	}
	w.fsckAll()
}

func TestSyncRacingAnotherSyncRetriesOnce(t *testing.T) {
	w, a, b := syncedPair(t)
	a.write(wsPath, ws("implement")) // recorded by a's sync, which therefore fetches first
	b.write(initPath, initiative("created"))
	b.record()
	// b pushes between a's fetch and a's push.
	beforePush = func(attempt int) {
		if attempt == 0 {
			beforePush = nil
			b.sync()
		}
	}
	defer func() { beforePush = nil }()
	rep := a.sync()
	if !rep.Retried || !rep.Pushed {
		t.Fatalf("retried=%v pushed=%v, want a retry that pushed", rep.Retried, rep.Pushed)
	}
	b.sync()
	w.holdEverywhere(map[string]string{wsPath: ws("implement"), initPath: initiative("created")})
}

// A remote that moves again during the retry ends the sync with one line
// that says the local merges stand and to sync again (attack37b: it said
// only "the remote's state ref moved"); nothing of either side is lost.
func TestSyncRacingTwiceSaysSyncAgain(t *testing.T) {
	w, a, b := syncedPair(t)
	a.write(wsPath, ws("implement"))
	var hook func(int)
	hook = func(attempt int) {
		beforePush = nil // b's own sync pushes undisturbed
		b.write(memPath, fmt.Sprintf("# Memory\n\nb%d\n", attempt))
		b.record()
		b.sync() // the remote moves before each of a's pushes
		beforePush = hook
	}
	beforePush = hook
	defer func() { beforePush = nil }()
	_, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	beforePush = nil
	if !errors.Is(err, engine.ErrRemoteMoved) {
		t.Fatalf("err = %v, want the remote moved", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "moved again") || !strings.Contains(msg, "strata sync") {
		t.Errorf("err = %q, want it to say the remote moved again and to sync again", msg)
	}
	a.sync()
	b.sync()
	w.holdEverywhere(map[string]string{wsPath: ws("implement"), memPath: fmt.Sprintf("# Memory\n\nb%d\n", pushRounds-1)})
}

// A remote that moves before each of a sync's pushes but the last (a
// watcher there recording an agent's saves) is pushed to in the same
// sync: one race retried was too few (session-41 chaos runs, a work tree
// as the remote: most syncs failed).
func TestSyncRacingPushesWithinRounds(t *testing.T) {
	w, a, b := syncedPair(t)
	a.write(wsPath, ws("implement"))
	var hook func(int)
	hook = func(attempt int) {
		beforePush = nil
		if attempt < 3 { // three races, the fourth push through
			b.write(memPath, fmt.Sprintf("# Memory\n\nb%d\n", attempt))
			b.record()
			b.sync()
		}
		beforePush = hook
	}
	beforePush = hook
	defer func() { beforePush = nil }()
	rep, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	beforePush = nil
	if err != nil || !rep.Pushed || !rep.Retried {
		t.Fatalf("err = %v, pushed %v, retried %v", err, rep != nil && rep.Pushed, rep != nil && rep.Retried)
	}
	b.sync()
	w.holdEverywhere(map[string]string{wsPath: ws("implement"), memPath: "# Memory\n\nb2\n"})
}

func TestConcurrentSyncsLoseNothing(t *testing.T) {
	w, a, b := syncedPair(t)
	for i := 0; i < 5; i++ {
		a.write(wsPath, ws(fmt.Sprintf("a%d", i)))
		a.record()
		b.write(memPath, fmt.Sprintf("# Memory\n\nb%d\n", i))
		b.record()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j, m := range []*machine{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[j] = Sync(context.Background(), m.eng, Options{Cwd: m.dir})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil && !errors.Is(err, gitstore.ErrRemoteMoved) {
				t.Fatal(err)
			}
		}
		a.sync()
		b.sync()
		a.sync()
		for _, m := range w.ms {
			if m.read(wsPath) != ws(fmt.Sprintf("a%d", i)) || m.read(memPath) != fmt.Sprintf("# Memory\n\nb%d\n", i) {
				t.Fatalf("round %d: %s lost an edit: %q %q", i, m.name, m.read(wsPath), m.read(memPath))
			}
		}
	}
	w.fsckAll()
}

// A machine whose state ref only adds to what the remote held at its last
// sync pushes without fetching: its sync succeeds with a remote it cannot
// fetch from at all (upload-pack replaced by false), and says what the
// fetching sync would say.
func TestPushFirstDoesNotFetch(t *testing.T) {
	w, a, b := syncedPair(t)
	before, _ := a.eng.Head()
	a.write(wsPath, ws("implement"))
	a.record()
	local, _ := a.eng.Head()
	git(t, a.dir, "config", "remote.origin.uploadpack", "false")
	rep := a.sync()
	if !rep.Pushed || rep.Result != engine.MergeUpToDate || rep.Head != local || rep.LocalHead != local || rep.RemoteHead != before {
		t.Fatalf("report %+v; want pushed, up-to-date at %s, remote before %s", rep, local, before)
	}
	if got := git(t, w.remote, "rev-parse", "refs/strata/state"); got != local {
		t.Fatalf("remote at %s, want %s", got, local)
	}
	if tr, _ := a.eng.RefHead(rep.Tracking); tr != local {
		t.Fatalf("tracking ref at %s, want %s", tr, local)
	}
	b.sync()
	if got := b.read(wsPath); got != ws("implement") {
		t.Fatalf("b: %q", got)
	}
	// With nothing new, a's sync fetches, and fails to.
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err == nil {
		t.Fatal("a sync with nothing to push did not fetch")
	}
	w.fsckAll()
}

// When the remote moved since the last sync, the push without fetching
// changes nothing there and the sync fetches, merges and pushes: nothing is
// lost on either side.
func TestPushFirstRemoteMovedFetches(t *testing.T) {
	w, a, b := syncedPair(t)
	a.write(wsPath, ws("implement"))
	a.record()
	b.write(initPath, initiative("created"))
	b.record()
	b.sync() // the remote moves after a's last sync
	var attempts []int
	beforePush = func(attempt int) { attempts = append(attempts, attempt) }
	defer func() { beforePush = nil }()
	rep := a.sync()
	beforePush = nil
	if !slices.Equal(attempts, []int{-1, 0}) || !rep.Pushed || rep.Retried || rep.Result != gitstore.MergeMerged {
		t.Fatalf("pushes %v, report %+v; want the push without fetch refused, then a merge pushed", attempts, rep)
	}
	b.sync()
	w.holdEverywhere(map[string]string{wsPath: ws("implement"), initPath: initiative("created")})
}

// An edit found on disk while the push without fetching runs is recorded
// after it and pushed in the same sync.
func TestPushFirstRecordsEditFoundWhilePushing(t *testing.T) {
	w, a, b := syncedPair(t)
	a.write(wsPath, ws("implement"))
	a.record()
	a.write(initPath, initiative("created")) // not recorded yet
	rep := a.sync()
	if !rep.Pushed || !slices.Equal(rep.Recorded, []string{initPath}) {
		t.Fatalf("report %+v; want %s recorded and pushed", rep, initPath)
	}
	head, _ := a.eng.Head()
	if got := git(t, w.remote, "rev-parse", "refs/strata/state"); got != head {
		t.Fatalf("remote at %s, want a's head %s", got, head)
	}
	b.sync()
	if b.read(wsPath) != ws("implement") || b.read(initPath) != initiative("created") {
		t.Fatalf("b: %q %q", b.read(wsPath), b.read(initPath))
	}
	w.fsckAll()
}

// A remote that cannot be reached changes nothing locally, with a state
// ref ahead of it (the push without fetching fails) as without.
func TestPushFirstUnreachableChangesNothing(t *testing.T) {
	w, a, _ := syncedPair(t)
	a.write(wsPath, ws("implement"))
	a.record()
	a.write(initPath, initiative("created")) // an unrecorded edit
	before, _ := a.eng.Head()
	tracking, _ := a.eng.TrackingRefs()
	if err := os.Rename(w.remote, w.remote+".gone"); err != nil {
		t.Fatal(err)
	}
	_, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	var re *gitstore.RemoteError
	if !errors.As(err, &re) || re.Op != "push" {
		t.Fatalf("err = %v, want the push's RemoteError", err)
	}
	if after, _ := a.eng.Head(); after != before {
		t.Errorf("state ref moved from %s to %s", before, after)
	}
	if after, _ := a.eng.TrackingRefs(); !maps.Equal(after, tracking) {
		t.Errorf("tracking refs %v, were %v", after, tracking)
	}
	st, _ := a.eng.Status()
	for _, f := range st {
		if f.Path == initPath && f.State != "new" && f.State != "modified" {
			t.Errorf("%s is %s, want still unrecorded", f.Path, f.State)
		}
	}
}

func TestUnreachableRemoteChangesNothing(t *testing.T) {
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(wsPath, ws("plan"))
	a.record()
	a.write(wsPath, ws("implement")) // an unrecorded edit
	before, _ := a.eng.Head()
	_, err := Sync(context.Background(), a.eng, Options{Remote: filepath.Join(a.dir, "no", "such.git"), Cwd: a.dir})
	var re *gitstore.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RemoteError", err)
	}
	if strings.Contains(re.Error(), "\n") {
		t.Errorf("error has several lines: %q", re.Error())
	}
	after, _ := a.eng.Head()
	if after != before {
		t.Errorf("state ref moved from %s to %s", before, after)
	}
	if refs, _ := a.eng.TrackingRefs(); len(refs) != 0 {
		t.Errorf("tracking refs created: %v", refs)
	}
	st, _ := a.eng.Status()
	if len(st) != 1 || st[0].State != "modified" {
		t.Errorf("status = %+v, want the edit still unrecorded", st)
	}
}

func TestStatusAheadBehind(t *testing.T) {
	_, a, b := syncedPair(t)
	b.write(wsPath, ws("implement"))
	b.record()
	b.sync()
	a.write(initPath, initiative("created"))
	a.record()
	a.write(memPath, "# M\n")
	a.record()
	// a fetches b's commit without merging: a dry run.
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	tr, err := Remotes(a.eng)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 1 || tr[0].Remote != "origin" || tr[0].Ahead != 2 || tr[0].Behind != 1 {
		t.Fatalf("remotes = %+v, want origin 2 ahead 1 behind", tr)
	}
	if got := a.read(wsPath); got != ws("plan") {
		t.Errorf("dry run wrote %q", got)
	}
}

func TestEscapeRemote(t *testing.T) {
	for _, s := range []string{"origin", "/tmp/x/remote.git", "git@host:a/b.git", "https://h/x.lock", "..", "a..b", ".x"} {
		e := gitstore.EscapeRemote(s)
		if gitstore.UnescapeRemote(e) != s {
			t.Errorf("%q -> %q does not round-trip", s, e)
		}
		cmd := exec.Command("git", "check-ref-format", "refs/strata-remotes/"+e+"/state")
		if err := cmd.Run(); err != nil {
			t.Errorf("%q -> %q is not a valid ref component", s, e)
		}
	}
}

// writeFile writes a kept file as a user's editor would.
func writeFile(tb testing.TB, name string, data []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// An edit saved after sync looked for unrecorded edits (while git fetches)
// is never overwritten by the remote's version: the write of that file is
// skipped, the edit stays on disk, and the next record and sync take it
// over the remote's, with the remote's kept in history.
func TestEditDuringFetchIsNeverOverwritten(t *testing.T) {
	w, a, b := syncedPair(t)
	b.now = a.now.Add(time.Minute)
	b.write(wsPath, ws("implement"))
	b.record()
	b.sync()

	a.now = b.now.Add(time.Minute)
	afterScan = func() { a.write(wsPath, ws("review")) }
	t.Cleanup(func() { afterScan = nil })
	rep, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	afterScan = nil
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0] != wsPath || len(rep.Written) != 0 {
		t.Fatalf("written %v, skipped %v; want %s skipped", rep.Written, rep.Skipped, wsPath)
	}
	if got := a.read(wsPath); got != ws("review") {
		t.Fatalf("the edit made during the fetch was overwritten: %q", got)
	}
	a.record()
	a.sync()
	b.sync()
	for _, m := range w.ms {
		if got := m.read(wsPath); got != ws("review") {
			t.Errorf("%s: %s = %q, want the later edit", m.name, wsPath, got)
		}
	}
	if log := git(t, a.dir, "log", "--format=%H", "refs/strata/state"); !strings.Contains(git(t, a.dir, "log", "-p", "refs/strata/state"), `"implement"`) {
		t.Errorf("b's version is not in the history (%d commits)", len(strings.Fields(log)))
	}
	w.fsckAll()
}

// A file that appears, while the sync writes, at a path where the merge
// found none is never replaced by the remote's version: the kernel refuses
// the sync's file there (the check and the creation are one step), the
// file is reported as not written, and the next record and sync take it.
func TestFileCreatedDuringWriteIsNeverReplaced(t *testing.T) {
	w, a, b := syncedPair(t)
	b.now = a.now.Add(time.Minute)
	writeFour(b)
	b.record()
	b.sync()
	syncWhileAgentWrites(t, w, a)
	for _, m := range w.ms {
		if got := m.read(benchPath(0)); got != `{"from": "b", "n": 0}`+"\n" {
			t.Errorf("%s: %s = %q", m.name, benchPath(0), got)
		}
	}
}

// A kept file edited while the sync writes, after the sync checked it and
// before its new version would replace it, is not replaced: each file is
// checked right before its rename, not all of them before the first.
func TestEditDuringWriteIsNeverReplaced(t *testing.T) {
	w, a, b := syncedPair(t)
	writeFour(a)
	a.record()
	a.sync()
	b.sync()
	b.now = a.now.Add(time.Minute)
	writeFour(b)
	b.record()
	b.sync()
	syncWhileAgentWrites(t, w, a)
}

// A sync that replaces files leaves each old version linked in
// .git/strata/freed instead of freeing it on its own path; the sweep that
// `strata sync` then starts removes them and nothing else.
func TestSyncLeavesReplacedFilesToSweep(t *testing.T) {
	_, a, b := syncedPair(t)
	writeFour(a)
	a.record()
	a.sync()
	b.sync() // four new files: nothing replaced, nothing kept
	freed := filepath.Join(b.dir, ".git", "strata", "freed")
	if ents, _ := os.ReadDir(freed); len(ents) != 0 {
		t.Fatalf("%d kept after a sync of new files", len(ents))
	}
	a.now = b.now.Add(time.Minute)
	old := b.read(benchPath(1))
	a.write(benchPath(1), `{"from": "a", "again": true}`+"\n")
	a.write(wsPath, ws("implement"))
	a.record()
	a.sync()
	rep := b.sync()
	if !slices.Equal(rep.Written, []string{benchPath(1), wsPath}) {
		t.Fatalf("written %v", rep.Written)
	}
	ents, err := os.ReadDir(freed)
	if err != nil || len(ents) != 2 {
		t.Fatalf("kept %d, %v; want the 2 replaced files", len(ents), err)
	}
	var kept []string
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(freed, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, string(data))
	}
	slices.Sort(kept)
	if want := []string{old, ws("plan")}; !slices.Equal(kept, want) {
		t.Fatalf("kept %q, want %q", kept, want)
	}
	if n, err := b.eng.SweepFreed(); n != 2 || err != nil {
		t.Fatalf("SweepFreed = %d, %v", n, err)
	}
	if b.eng.HasFreed() {
		t.Fatal("HasFreed after the sweep")
	}
	if got := b.read(benchPath(1)); got != `{"from": "a", "again": true}`+"\n" {
		t.Fatalf("after the sweep %s = %q", benchPath(1), got)
	}
	b.check()
}

// writeFour writes four kept files with m's name in them.
func writeFour(m *machine) {
	for i := 0; i < 4; i++ {
		m.write(benchPath(i), fmt.Sprintf(`{"from": %q, "n": %d}`+"\n", m.name, i))
	}
}

// syncWhileAgentWrites syncs a, which takes four files from the remote,
// while a's agent writes the fourth halfway through the sync's writes (two
// of the four in place): the agent's file is not replaced and is reported
// as not written, and after the next record and sync both machines hold it.
func syncWhileAgentWrites(t *testing.T, w *world, a *machine) {
	t.Helper()
	a.now = a.now.Add(time.Hour)
	agents := `{"from": "a's agent"}` + "\n"
	CrashPoint = func(step string) {
		if step == "half-written" {
			time.Sleep(10 * time.Millisecond) // a modification time of its own
			a.write(benchPath(3), agents)
		}
	}
	t.Cleanup(func() { CrashPoint = nil })
	rep, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	CrashPoint = nil
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0] != benchPath(3) || len(rep.Written) != 3 {
		t.Fatalf("written %v, skipped %v; want %s skipped", rep.Written, rep.Skipped, benchPath(3))
	}
	if got := a.read(benchPath(3)); got != agents {
		t.Fatalf("the agent's file written during the sync's writes was replaced: %q", got)
	}
	a.record()
	a.sync()
	for _, m := range w.ms {
		m.sync()
		if got := m.read(benchPath(3)); got != agents {
			t.Errorf("%s: %s = %q, want the agent's", m.name, benchPath(3), got)
		}
	}
	w.fsckAll()
}

// A sync from a linked worktree waits for one of the main work tree: the
// two share the remote-tracking ref their fetches move (attack19-crash 6:
// syncing both at once failed with git's "cannot lock ref", exit 3).
func TestWorktreeSyncWaitsForTheMainOne(t *testing.T) {
	_, a, _ := syncedPair(t)
	defer func(d time.Duration) { engine.SyncWait = d }(engine.SyncWait)
	engine.SyncWait = 50 * time.Millisecond
	linked := filepath.Join(t.TempDir(), "linked")
	git(t, a.dir, "commit", "-q", "--allow-empty", "-m", "base")
	git(t, a.dir, "worktree", "add", "-q", "--detach", linked)
	leng, err := engine.Open(linked)
	if err != nil {
		t.Fatal(err)
	}
	release, err := a.eng.HoldSync() // the main work tree's sync, still running
	if err != nil {
		t.Fatal(err)
	}
	_, err = Sync(context.Background(), leng, Options{Cwd: linked})
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "another sync of this repository is running") {
		t.Fatalf("linked worktree's sync: %v", err)
	}
	release()
	if _, err := Sync(context.Background(), leng, Options{Cwd: linked}); err != nil {
		t.Fatal(err)
	}
}

// A second sync of one work tree waits for the first (here it gives up
// after SyncWait, saying another sync runs, and changes nothing) instead
// of racing its fetch and merge: two at once failed with git's own
// "cannot lock ref" error, exit 3.
func TestSecondSyncWaitsForTheFirst(t *testing.T) {
	_, a, _ := syncedPair(t)
	defer func(d time.Duration) { engine.SyncWait = d }(engine.SyncWait)
	engine.SyncWait = 50 * time.Millisecond
	release, err := a.eng.HoldSync() // the first sync, still running
	if err != nil {
		t.Fatal(err)
	}
	a.write(wsPath, ws("implement"))
	_, err = Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "another sync of this repository is running") {
		t.Fatalf("second sync: %v", err)
	}
	release()
	a.sync()
	if got := a.read(wsPath); got != ws("implement") {
		t.Fatalf("after the first sync ended: %q", got)
	}
}
