package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// pushCommit makes, with git's plumbing, a commit on top of the state ref's
// head that sets path to content ("" deletes it), with the trailers strata
// writes, as another machine's record makes one and its sync pushes it.
func pushCommit(t *testing.T, e *Engine, path, content string) string {
	t.Helper()
	root := e.Config().Root
	git := func(stdin string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	head := mustHead(t, e)
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git("", index, "read-tree", head)
	action := "update"
	if err := exec.Command("git", "-C", root, "cat-file", "-e", head+":"+path).Run(); err != nil {
		action = "add"
	}
	if content == "" {
		action = "delete"
		git("", index, "update-index", "--force-remove", path)
	} else {
		blob := git(content, nil, "hash-object", "-w", "--stdin")
		git("", index, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	}
	tree := git("", index, "write-tree")
	msg := action + " " + path + "\n\nStrata-Path: " + path + "\nStrata-Action: " + action + "\nStrata-Class: " + string(kept(t, e, path).Class) + "\nStrata-Source: record\nStrata-Time: 2026-11-22T12:00:00.000000000Z\n"
	return git(msg, []string{"GIT_AUTHOR_DATE=2026-11-22T12:00:00Z", "GIT_COMMITTER_DATE=2026-11-22T12:00:00Z", "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com"}, "commit-tree", tree, "-p", head)
}

// moveRef moves the state ref to commit with git, as a push into this
// repository does.
func moveRef(t *testing.T, e *Engine, commit string) {
	t.Helper()
	if out, err := exec.Command("git", "-C", e.Config().Root, "update-ref", e.StateRef(), commit).CombinedOutput(); err != nil {
		t.Fatalf("git update-ref: %v: %s", err, out)
	}
}

// A push into this repository that lands while a record builds its commit
// (after the record took the moves before it) makes the record's ref move
// refuse: the record takes that push, then is made again on it. Before, the
// ref move just rebuilt on the pushed head, recording each file the push
// changed as the user's edit back (attack38f F2).
func TestPushDuringRecordTaken(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	edit(t, e, ".claude/c.json", `{"v": 1}`)
	record(t, e, ".claude/a.json", ".claude/c.json")
	pushed := pushCommit(t, e, ".claude/c.json", `{"v": "pushed"}`)
	edit(t, e, ".claude/a.json", `{"v": 2}`)
	gitstore.BeforeRefLock = func(ref string) {
		gitstore.BeforeRefLock = nil
		if out, err := exec.Command("git", "-C", e.Config().Root, "update-ref", ref, pushed).CombinedOutput(); err != nil {
			t.Errorf("git update-ref: %v: %s", err, out)
		}
	}
	t.Cleanup(func() { gitstore.BeforeRefLock = nil })
	if _, err := e.Record([]config.Kept{kept(t, e, ".claude/a.json"), kept(t, e, ".claude/c.json")}, state.SourceRecord); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, e, ".claude/c.json"); got != `{"v": "pushed"}` {
		t.Fatalf("c.json is %q on disk, want the pushed version written", got)
	}
	files, err := e.store.Files(mustHead(t, e))
	if err != nil {
		t.Fatal(err)
	}
	if files[".claude/c.json"] != gitstore.BlobHash([]byte(`{"v": "pushed"}`)) {
		t.Fatal("the record took the pushed c.json for an edit back: the push is reverted")
	}
	if files[".claude/a.json"] != gitstore.BlobHash([]byte(`{"v": 2}`)) {
		t.Fatal("a.json's edit is not recorded")
	}
	if ahead, _, err := e.store.Compare(pushed, mustHead(t, e)); err != nil || ahead != 0 {
		t.Fatalf("the head does not descend from the pushed commit (%v)", err)
	}
}

// A ref move by strata refuses to start from a head strata did not leave
// (gitstore.OutsideMoveError) when nothing took it: forget's and restore's
// moves included, which take it first (attack38f F4: forget's move hid a
// push, which the next record reverted).
func TestForgetTakesPushFirst(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	edit(t, e, ".claude/c.json", `{"v": 1}`)
	record(t, e, ".claude/a.json", ".claude/c.json")
	pushed := pushCommit(t, e, ".claude/c.json", `{"v": "pushed"}`)
	moveRef(t, e, pushed)
	if _, err := e.ForgetUnpublished(t.Context(), []string{".claude/a.json"}, false, ""); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, e, ".claude/c.json"); got != `{"v": "pushed"}` {
		t.Fatalf("c.json is %q on disk after forget, want the pushed version written first", got)
	}
	record(t, e, ".claude/a.json", ".claude/c.json")
	files, err := e.store.Files(mustHead(t, e))
	if err != nil {
		t.Fatal(err)
	}
	if files[".claude/c.json"] != gitstore.BlobHash([]byte(`{"v": "pushed"}`)) {
		t.Fatal("the record after forget reverted the pushed c.json")
	}
}

// Without worktree-head (a strata before it moved the ref last; the file
// removed, or planted as a folder), the newest move of the ref's reflog
// that strata made says what the files follow, so a push is still taken
// (attack39 H1: nothing was checked, and the next record reverted the push).
func TestPushTakenWithoutWorktreeHead(t *testing.T) {
	for _, damage := range []string{"removed", "folder", "garbage", "stale"} {
		t.Run(damage, func(t *testing.T) {
			e := newRepo(t)
			edit(t, e, ".claude/a.json", `{"v": 1}`)
			edit(t, e, ".claude/c.json", `{"v": 1}`)
			record(t, e, ".claude/a.json", ".claude/c.json")
			name := filepath.Join(e.store.GitDir(), "strata", "worktree-head")
			if err := os.Remove(name); err != nil {
				t.Fatal(err)
			}
			switch damage {
			case "folder":
				if err := os.Mkdir(name, 0o755); err != nil {
					t.Fatal(err)
				}
			case "garbage":
				if err := os.WriteFile(name, []byte("not two ids\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			case "stale":
				if err := os.WriteFile(name, []byte(strings.Repeat("1", 40)+" "+strings.Repeat("2", 40)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			pushed := pushCommit(t, e, ".claude/c.json", `{"v": "pushed"}`)
			moveRef(t, e, pushed)
			edit(t, e, ".claude/a.json", `{"v": 2}`)
			record(t, e, ".claude/a.json", ".claude/c.json")
			if got := onDisk(t, e, ".claude/c.json"); got != `{"v": "pushed"}` {
				t.Fatalf("c.json is %q on disk, want the pushed version written", got)
			}
			files, err := e.store.Files(mustHead(t, e))
			if err != nil {
				t.Fatal(err)
			}
			if files[".claude/c.json"] != gitstore.BlobHash([]byte(`{"v": "pushed"}`)) {
				t.Fatal("the record reverted the pushed c.json")
			}
		})
	}
}

// A push whose commits a sync would refuse (here one without strata's
// trailers) is not taken: the ref is put back at the head the files
// follow, and the files stay (attack39 M2: it was taken, and no clone
// could sync this repository again).
func TestPushASyncRefusesPutBack(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/c.json", `{"v": 1}`)
	record(t, e, ".claude/c.json")
	head := mustHead(t, e)
	pushed := pushCommit(t, e, ".claude/c.json", `{"v": "pushed"}`)
	root := e.Config().Root
	tree, err := exec.Command("git", "-C", root, "rev-parse", pushed+"^{tree}").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-C", root, "commit-tree", strings.TrimSpace(string(tree)), "-p", head, "-m", "by hand")
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	bare, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	moveRef(t, e, strings.TrimSpace(string(bare)))
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	if h := mustHead(t, e); h != head {
		t.Fatalf("the ref is at %s, want it put back at %s", h, head)
	}
	if got := onDisk(t, e, ".claude/c.json"); got != `{"v": 1}` {
		t.Fatalf("c.json is %q on disk, want it as it was", got)
	}
	ps := e.TakePushed()
	if len(ps) != 1 || !ps[0].PutBack || !strings.Contains(ps[0].Message(), "its Strata-* trailers do not name it") {
		t.Fatalf("pushed notes %+v, want the move put back, with why", ps)
	}
}

// A push that deletes or changes a recorded Phase Outcome is not taken for
// that file: the version here stays and is recorded back, as a sync keeps
// it (attack39b F1: a hand-made push with truthful trailers deleted it
// here, where a sync refuses to).
func TestPushKeepsPhaseOutcome(t *testing.T) {
	const outcome = "PhaseOutcomes/f/001-plan.yaml"
	const plan = "phase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"
	for _, pushed := range []string{"", strings.Replace(plan, "findings: []", "findings: [changed]", 1)} {
		e := newRepo(t)
		edit(t, e, outcome, plan)
		record(t, e, outcome)
		c := pushCommit(t, e, outcome, pushed)
		moveRef(t, e, c)
		record(t, e, outcome)
		if got := onDisk(t, e, outcome); got != plan {
			t.Fatalf("push %q: the Phase Outcome is %q on disk, want it kept", pushed, got)
		}
		files, err := e.store.Files(mustHead(t, e))
		if err != nil {
			t.Fatal(err)
		}
		if files[outcome] != gitstore.BlobHash([]byte(plan)) {
			t.Fatalf("push %q: the state ref does not hold the Phase Outcome back", pushed)
		}
	}
}

// A named pipe where the state ref's reflog is, with no worktree-head, never
// blocks a record (attack39b F3: the reflog's open waited for a reader for
// good, holding the write-phase lock).
func TestRecordWithPipeAtReflog(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	if err := os.Remove(filepath.Join(e.store.GitDir(), "strata", "worktree-head")); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(e.store.GitDir(), "logs", "refs", "strata", "state")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(log, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	edit(t, e, ".claude/a.json", `{"v": 2}`)
	done := make(chan error, 1)
	go func() {
		_, err := e.Record([]config.Kept{kept(t, e, ".claude/a.json")}, state.SourceRecord)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the record is blocked by the named pipe at the reflog")
	}
}

// A push whose version of a file the version here could not be recorded
// back over (an initiative's status edited here to one that cannot follow
// the pushed status; a Phase Outcome made here, not recorded yet, where the
// push brings another) is put back whole: the ref would otherwise keep the
// pushed version, refusing every record here, and spread it at the next
// sync (attack39c N1, N5).
func TestPushNotRecordableBackPutBack(t *testing.T) {
	cases := []struct {
		path, recorded, here, pushed string // recorded: "" when the version here was never recorded
	}{
		{".claude/initiative.json", `{"name": "x", "status": "in_progress", "lastUpdated": "2026-11-22T10:20:00Z"}`, `{"name": "x", "status": "completed", "lastUpdated": "2026-11-22T10:30:00Z"}`, `{"name": "x", "status": "created", "lastUpdated": "2026-11-22T10:40:00Z"}`},
		{"PhaseOutcomes/f/002-plan.yaml", "", "# made here\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n", "# made there\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"},
		// a recorded Phase Outcome changed, or deleted, by the push while
		// edited here (itself refused by the append-only rule): nothing
		// here could be recorded back over the pushed version, which would
		// have become the recorded one (attack40d F1)
		{"PhaseOutcomes/f/001-plan.yaml", "# original\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n", "# edited here\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n", "# forged\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"},
		{"PhaseOutcomes/f/001-plan.yaml", "# original\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n", "# edited here\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n", ""},
	}
	for _, c := range cases {
		e := newRepo(t)
		edit(t, e, ".claude/a.json", `{"v": 1}`)
		if c.recorded != "" {
			edit(t, e, c.path, c.recorded)
			record(t, e, ".claude/a.json", c.path)
		} else {
			record(t, e, ".claude/a.json")
		}
		edit(t, e, c.path, c.here)
		head := mustHead(t, e)
		pushed := pushCommit(t, e, c.path, c.pushed)
		moveRef(t, e, pushed)
		if err := e.TakePush(); err != nil {
			t.Fatal(err)
		}
		if h := mustHead(t, e); h != head {
			t.Fatalf("%s: the ref is at %s, want it put back at %s", c.path, h, head)
		}
		if got := onDisk(t, e, c.path); got != c.here {
			t.Fatalf("%s is %q on disk, want the version here", c.path, got)
		}
		if c.path == "PhaseOutcomes/f/001-plan.yaml" {
			continue // the edit here is refused by the record as any such edit
		}
		outs := record(t, e, c.path)
		if len(outs) != 1 || outs[0].Problems.Invalid() {
			t.Fatalf("%s: the record after the put-back: %+v", c.path, outs)
		}
	}
}

// A push that moves an initiative's status back (the pusher's restore
// --rev, which the status machine does not bind) is taken where the file
// here is the version the files follow, as a sync takes such a
// fast-forward: before, it was put back for ever and the pusher's syncs
// said "pushed" (attack39c LOW).
func TestPushInitiativeMovedBackTaken(t *testing.T) {
	const path = ".claude/initiative.json"
	const pushedVersion = `{"name": "x", "status": "created", "lastUpdated": "2026-11-22T10:40:00Z"}`
	e := newRepo(t)
	edit(t, e, path, `{"name": "x", "status": "completed", "lastUpdated": "2026-11-22T10:30:00Z"}`)
	record(t, e, path)
	pushed := pushCommit(t, e, path, pushedVersion)
	moveRef(t, e, pushed)
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	if h := mustHead(t, e); h != pushed {
		t.Fatalf("the ref is at %s, want the push %s taken: %+v", h, pushed, e.TakePushed())
	}
	if got := onDisk(t, e, path); got != pushedVersion {
		t.Fatalf("%s is %q on disk, want the pushed version", path, got)
	}
	outs := record(t, e, path)
	if len(outs) != 1 || outs[0].Entry != nil || outs[0].Problems.Invalid() {
		t.Fatalf("the record after the push: %+v, want nothing to record", outs)
	}
}

// A push that changes a recorded Phase Outcome while keeping its version at
// another path (a sync that kept two made at one path renumbered the later)
// is taken: nothing of the version here is lost (attack39c N5: put back,
// the pusher's every later sync was put back too).
func TestPushRenumberedPhaseOutcomeTaken(t *testing.T) {
	const here = "# made here\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"
	const there = "# made there\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"
	e := newRepo(t)
	edit(t, e, "PhaseOutcomes/f/002-plan.yaml", here)
	record(t, e, "PhaseOutcomes/f/002-plan.yaml")
	for _, c := range []struct{ path, content string }{{"PhaseOutcomes/f/002-plan.yaml", there}, {"PhaseOutcomes/f/003-plan.yaml", here}} {
		moveRef(t, e, pushCommit(t, e, c.path, c.content))
	}
	pushed := mustHead(t, e)
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	if h := mustHead(t, e); h != pushed {
		t.Fatalf("the ref is at %s, want the push %s taken: %+v", h, pushed, e.TakePushed())
	}
	if got := onDisk(t, e, "PhaseOutcomes/f/002-plan.yaml"); got != there {
		t.Fatalf("002 is %q, want the pushed version", got)
	}
	if got := onDisk(t, e, "PhaseOutcomes/f/003-plan.yaml"); got != here {
		t.Fatalf("003 is %q, want the version made here, renumbered", got)
	}
}

// A Phase Outcome a push added but this machine did not take (refused by
// its rules: absent here, noted as not taken) is no deletion for validate,
// as for record and status (attack39c N6: validate said "append-only and
// cannot be deleted; run strata restore" of a version refused here).
func TestValidateNotTakenNoDeletion(t *testing.T) {
	const path = "PhaseOutcomes/f/002-plan.yaml"
	e := pushedOnRecorded(t, path, "phase: [not, a, phase]\n")
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(e.Config().Abs(path)); !os.IsNotExist(err) {
		t.Fatalf("%s is on disk (%v), want it not taken", path, err)
	}
	for _, r := range validateAll(t, e) {
		if r.Path == path {
			t.Fatalf("validate reports %s, not taken here: %v", path, r.Problems)
		}
	}
}

// A MEMORY.md a push changed, edited here meanwhile, is merged with the
// pushed version and recorded with the edit in one move of the state ref:
// no head the ref ever names lacks the pushed line. Before, the edit was
// recorded in a move of its own first, and the pusher's sync fetching the
// ref between the two moves read it as this machine deleting the line,
// which it then merged, on both machines (attack40 F1).
func TestPushMergedOverEditInOneMove(t *testing.T) {
	const mem = "MEMORY.md"
	e := newRepo(t)
	edit(t, e, mem, "# Memory\n\n## Learnings\n- base\n")
	record(t, e, mem)
	pushed := pushCommit(t, e, mem, "# Memory\n\n## Learnings\n- base\n- A line\n")
	moveRef(t, e, pushed)
	edit(t, e, mem, "# Memory\n\n## Learnings\n- base\n- B line\n")
	outs := record(t, e, mem)
	if len(outs) != 1 || outs[0].Problems.Invalid() {
		t.Fatalf("record: %+v", outs)
	}
	if got, want := onDisk(t, e, mem), "# Memory\n\n## Learnings\n- base\n- A line\n- B line\n"; got != want {
		t.Fatalf("MEMORY.md is %q, want both lines %q", got, want)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", e.Config().Root}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	// every head the ref named since the push (its reflog, newest first)
	heads := strings.Fields(git("log", "-g", "--format=%H", e.StateRef()))
	for _, h := range heads {
		if h == pushed {
			break
		}
		if data := git("show", h+":"+mem); !strings.Contains(data, "- A line") {
			t.Fatalf("the ref named %s, whose MEMORY.md lacks the pushed line:\n%s", h, data)
		}
	}
	// the edit is still a version of its own in the history
	if !strings.Contains(git("log", "-p", "--format=%s", e.StateRef(), "--", mem), "+- B line") {
		t.Fatalf("the edit is not recorded")
	}
	if n := git("rev-list", "--count", pushed+".."+e.StateRef()); n != "2" {
		t.Fatalf("%s commits after the push, want 2 (the edit, then the merge)", n)
	}
}

// A MEMORY.md merge owed for one push (the file edited here, the command
// taking the push killed before it merged) and then another push, the file
// edited again, makes one merge from the version the edit was made on to
// the newest push: both pushes' lines and both edits are kept. Before, the
// first merge was dropped (the ref had moved on) and the second one took
// the first push's line, never on disk here, for the edit's deletion, on
// both machines once synced (attack40 F1).
func TestPushMergesOwedChained(t *testing.T) {
	const mem = "MEMORY.md"
	const head = "# Memory\n\n## Learnings\n- base\n"
	e := memoryEditedOverPush(t, head, head+"- B line 1\n")
	if err := e.TakePush(); err != nil { // killed before its merge: owed
		t.Fatal(err)
	}
	// owed, never invalid: status says so (attack40c L1)
	if paths, invalid, _, err := e.PendingMerges(); err != nil || len(paths) != 1 || invalid[mem] {
		t.Fatalf("pending merges %v, invalid %v (%v): want %s owed, not invalid", paths, invalid, err, mem)
	}
	moveRef(t, e, pushCommit(t, e, mem, head+"- A line 1\n- A line 2\n"))
	edit(t, e, mem, head+"- B line 1\n- B line 2\n")
	record(t, e, mem)
	got := onDisk(t, e, mem)
	for _, line := range []string{"- A line 1\n", "- A line 2\n", "- B line 1\n", "- B line 2\n"} {
		if !strings.Contains(got, line) {
			t.Fatalf("MEMORY.md lacks %q:\n%s", line, got)
		}
	}
	if ms, _ := e.readMergeAgain(); len(ms) != 0 {
		t.Fatalf("merges still owed: %+v", ms)
	}
}

// While a push into this repository is not taken yet, a file still the
// version the files here follow is no edit: status, validate (and the Claude
// Code hook, through JudgedAgainst) do not judge it by the history rules
// against the pushed version. Before, an untouched initiative was invalid,
// its status "moved back" from the pushed one, and the hook told the agent
// to fix it (attack40 F3).
func TestPendingPushUntouchedFileValid(t *testing.T) {
	const path = ".claude/initiative.json"
	e := newRepo(t)
	edit(t, e, path, `{"name": "x", "status": "created", "lastUpdated": "2026-11-22T10:30:00Z"}`)
	record(t, e, path)
	moveRef(t, e, pushCommit(t, e, path, `{"name": "x", "status": "in_progress", "lastUpdated": "2026-11-22T10:40:00Z"}`))
	st, err := e.Status() // pushed, its refusal not listed beside it
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Path == path && (s.State != "pushed" || len(s.Problems) > 0) {
			t.Fatalf("status: %s %v, want pushed with no problem", s.State, s.Problems)
		}
	}
	for _, r := range validateAll(t, e) {
		if r.Path == path && r.Problems.Invalid() {
			t.Fatalf("validate: %v", r.Problems)
		}
	}
	f, prob := e.Read(kept(t, e, path))
	if prob != nil {
		t.Fatal(prob)
	}
	if prev, err := e.JudgedAgainst(f); err != nil || prev != nil {
		t.Fatalf("judged against %q (%v), want nothing", prev, err)
	}
	// an edit made meanwhile is judged as the next record judges it:
	// against the pushed version when the push is taken (completed may
	// follow in_progress), against the version here when the edit could
	// not be recorded over the pushed one, so the record puts the push
	// back (created again, a new lastUpdated: attack40c M3, validate and
	// the hook refused what the record then took)
	for _, c := range []struct {
		status  string
		putBack bool
	}{{"completed", false}, {"created", true}} {
		edit(t, e, path, `{"name": "x", "status": "`+c.status+`", "lastUpdated": "2026-11-22T10:50:00Z"}`)
		if f, _ = e.Read(kept(t, e, path)); e.Check(f, mustPrev(t, e, f)).Invalid() {
			t.Fatalf("%s: validate refuses it: %v", c.status, e.Check(f, mustPrev(t, e, f)))
		}
		if pp, err := e.PendingPush(); err != nil || (pp.PutBack != "") != c.putBack {
			t.Fatalf("%s: pending push %+v (%v), want put back %v", c.status, pp, err, c.putBack)
		}
	}
	if outs := record(t, e, path); len(outs) != 1 || outs[0].Problems.Invalid() || outs[0].Entry == nil {
		t.Fatalf("the record refuses what validate took: %+v", outs)
	}
}

func mustPrev(t *testing.T, e *Engine, f File) []byte {
	t.Helper()
	prev, err := e.JudgedAgainst(f)
	if err != nil {
		t.Fatal(err)
	}
	return prev
}

// validateAll is strata validate of every kept path.
func validateAll(t *testing.T, e *Engine) []Result {
	t.Helper()
	paths, err := e.AllPaths()
	if err != nil {
		t.Fatal(err)
	}
	results, err := e.Validate(paths, false)
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// owedOverTwoPushes makes MEMORY.md recorded, a first push (A line 1), an
// edit here (B line 1) whose merge with it is owed (the command that took
// the push killed before it merged), then a second push on top (A line 2),
// taken as well when takeSecond (the owed merge chained to it). It returns
// the blob ids of the base version and of the two pushed ones.
func owedOverTwoPushes(t *testing.T, takeSecond bool) (e *Engine, base, first, second string) {
	t.Helper()
	const head = "# Memory\n\n## Learnings\n- base\n"
	e = memoryEditedOverPush(t, head, head+"- B line 1\n")
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	moveRef(t, e, pushCommit(t, e, "MEMORY.md", head+"- A line 1\n- A line 2\n"))
	if takeSecond {
		if err := e.TakePush(); err != nil {
			t.Fatal(err)
		}
	}
	return e, gitstore.BlobHash([]byte(head)), gitstore.BlobHash([]byte(head + "- A line 1\n")), gitstore.BlobHash([]byte(head + "- A line 1\n- A line 2\n"))
}

// mustHoldAllLines checks that MEMORY.md holds both pushes' lines and the
// edit's.
func mustHoldAllLines(t *testing.T, e *Engine) {
	t.Helper()
	got := onDisk(t, e, "MEMORY.md")
	for _, line := range []string{"- A line 1\n", "- A line 2\n", "- B line 1\n"} {
		if !strings.Contains(got, line) {
			t.Fatalf("MEMORY.md lacks %q:\n%s", line, got)
		}
	}
}

// A merge owed over one version is not made once the state ref moved on
// past it (a push not taken yet): it stays owed, chained to the newer
// version, and the next record merges from there. Before, a sync's merge
// of the journal it completed, made before it took the pushes, recorded
// the edit merged with the older version over the newer one, whose lines
// were then gone on every machine (attack40c H1).
func TestMergeOverEditsWaitsForMovedRef(t *testing.T) {
	e, base, first, _ := owedOverTwoPushes(t, false)
	nw := e.MergeOverEdits([]NotWritten{{Path: "MEMORY.md", Ours: base, Result: first}})
	if len(nw) != 1 || nw[0].Merged != "" {
		t.Fatalf("merged over a version the ref no longer holds: %+v", nw)
	}
	record(t, e, "MEMORY.md")
	mustHoldAllLines(t, e)
}

// A merge MergeOverEdits makes for a write left undone (a sync's live
// write phase, a journal's completion) starts from the version the edit
// was made on when an owed merge was chained to it: the write's own
// "ours" is a version the file never had. Before, the lines that version
// added were taken for the edit's deletions (attack40c H1, chaos runs:
// A's entities lost on both machines).
func TestMergeOverEditsUsesChainedOurs(t *testing.T) {
	e, _, first, second := owedOverTwoPushes(t, true)
	e.MergeOverEdits([]NotWritten{{Path: "MEMORY.md", Ours: first, Result: second}})
	mustHoldAllLines(t, e)
}

// A Phase Outcome a push not taken yet adds is no deletion here (attack40d
// F2: validate called it one); one made here at the same name, which makes
// the next record put the push back, is new as that record judges it, for
// validate, the hook and status alike (F3: judged against the pushed
// version the ref's history holds, "append-only and cannot change").
func TestPendingPushAddedPhaseOutcome(t *testing.T) {
	const path = "PhaseOutcomes/f/002-plan.yaml"
	const there = "# made there\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"
	const here = "# made here\nphase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n"
	for _, madeHere := range []bool{false, true} {
		e := newRepo(t)
		edit(t, e, ".claude/a.json", `{"v": 1}`)
		record(t, e, ".claude/a.json")
		moveRef(t, e, pushCommit(t, e, path, there))
		if madeHere {
			edit(t, e, path, here)
		}
		for _, r := range validateAll(t, e) {
			if r.Path == path && r.Problems.Invalid() {
				t.Fatalf("made here %v: validate: %v", madeHere, r.Problems)
			}
		}
		if !madeHere {
			continue
		}
		f, _ := e.Read(kept(t, e, path))
		if prev := mustPrev(t, e, f); prev != nil {
			t.Fatalf("the hook judges it against %q", prev)
		}
		st, err := e.Status()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range st {
			if s.Path == path && (s.State != "new" || s.Problems.Invalid()) {
				t.Fatalf("status: %s %v, want new", s.State, s.Problems)
			}
		}
	}
}

// A merge owed over one push is kept, not dropped as "recorded over
// since", when the ref moved on by another push not taken yet (it landed
// after the record took the pushes before it): the record's move refuses,
// it takes that push, and the owed merge is chained to it. Before, the
// owed merge was dropped, and the one owed for the new push alone took the
// first push's lines for the edit's deletions (attack40d F0, the watcher's
// chaos runs).
func TestMergeKeptWhilePushPending(t *testing.T) {
	e, _, _, _ := owedOverTwoPushes(t, false)
	e.mergeKeptEdits() // a record's, the second push landing right after it took the first
	record(t, e, "MEMORY.md")
	mustHoldAllLines(t, e)
}

// A file whose merge with a pushed version is owed, invalid when the
// record judged the owed merges and valid by the time it reads the file
// (its writer's second write), is merged first, never recorded as it is
// over the pushed version: that took the pushed lines out on both
// machines (attack40e H1, chaos runs with the watcher).
func TestOwedMergeNotRecordedOver(t *testing.T) {
	const mem = "MEMORY.md"
	const head = "# Memory\n\n## Learnings\n- base\n"
	e := memoryEditedOverPush(t, head, head+"- B line 1\n\xff\n") // not UTF-8: invalid
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	once := false
	beforeRecordHeld = func() {
		if !once {
			once = true
			edit(t, e, mem, head+"- B line 1\n") // the writer's second write: valid now
		}
	}
	t.Cleanup(func() { beforeRecordHeld = nil })
	record(t, e, mem)
	beforeRecordHeld = nil
	record(t, e, mem)
	got := onDisk(t, e, mem)
	for _, line := range []string{"- A line 1\n", "- B line 1\n"} {
		if !strings.Contains(got, line) {
			t.Fatalf("MEMORY.md lacks %q:\n%s", line, got)
		}
	}
	if data := gitShow(t, e, mem); !strings.Contains(data, "- A line 1\n") {
		t.Fatalf("the recorded MEMORY.md lacks the pushed line:\n%s", data)
	}
}

func gitShow(t *testing.T, e *Engine, path string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", e.Config().Root, "show", e.StateRef()+":"+path).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// memoryEditedOverPush makes MEMORY.md recorded as base, a push adding "- A
// line 1", and the file here edited to edited, not recorded.
func memoryEditedOverPush(t *testing.T, base, edited string) *Engine {
	t.Helper()
	return editedOverPush(t, "MEMORY.md", base, base+"- A line 1\n", edited)
}

// editedOverPush makes path recorded as base, a push setting it to pushed,
// and the file here edited to edited, not recorded.
func editedOverPush(t *testing.T, path, base, pushed, edited string) *Engine {
	t.Helper()
	e := newRepo(t)
	edit(t, e, path, base)
	record(t, e, path)
	moveRef(t, e, pushCommit(t, e, path, pushed))
	edit(t, e, path, edited)
	return e
}

// A merge owed over a pushed version stays owed when the file is edited
// again while the merge is made (an agent still writing): the next record
// merges the newer edit first. Before, the merge was dropped as done and
// the newer edit, made on a version without the pushed work, was recorded
// as it was over it: the other machine's entities were gone on both
// machines (session-40 chaos run FETb: the watcher merged MEMORY.md, then
// recorded the graph as a plain update).
func TestOwedMergeKeptWhenEditedDuringMerge(t *testing.T) {
	const mem = "MEMORY.md"
	e, head := owedMemoryMerge(t)
	once := false
	beforeMergeWrite = func() {
		if !once {
			once = true
			edit(t, e, mem, head+"- B line 1\n- B line 2\n") // the writer's next save
		}
	}
	t.Cleanup(func() { beforeMergeWrite = nil })
	record(t, e, mem)
	if !once {
		t.Fatal("no merge was made")
	}
	for _, got := range []string{onDisk(t, e, mem), gitShow(t, e, mem)} {
		for _, line := range []string{"- A line 1\n", "- B line 1\n", "- B line 2\n"} {
			if !strings.Contains(got, line) {
				t.Fatalf("MEMORY.md lacks %q:\n%s", line, got)
			}
		}
	}
}

// A push landing while a record judges the owed merges, before it reads
// the state ref, keeps them owed (chained to it once taken), as one that
// landed before the record looked. Before, the look came first: the owed
// merge was judged against the new head, dropped as "recorded over since",
// and the merge owed for the new push alone took the first push's lines
// for the edit's deletions.
func TestMergeKeptWhenPushLandsDuringJudgement(t *testing.T) {
	e, head := owedMemoryMerge(t)
	once := false
	afterMergeAgainLock = func() {
		if !once {
			once = true
			moveRef(t, e, pushCommit(t, e, "MEMORY.md", head+"- A line 1\n- A line 2\n"))
		}
	}
	t.Cleanup(func() { afterMergeAgainLock = nil })
	record(t, e, "MEMORY.md")
	if !once {
		t.Fatal("the owed merges were not judged")
	}
	mustHoldAllLines(t, e)
	if got := gitShow(t, e, "MEMORY.md"); !strings.Contains(got, "- A line 1\n") || !strings.Contains(got, "- B line 1\n") {
		t.Fatalf("recorded:\n%s", got)
	}
}

// validate of a path a push not taken yet adds says so, not "no such file".
func TestValidatePathPushAdds(t *testing.T) {
	const path = "PhaseOutcomes/f/002-plan.yaml"
	e := pushedOnRecorded(t, path, "phase: plan\nfeature: f\nproduced: []\nfindings: []\npending_decisions: []\n")
	rs, err := e.Validate([]config.Kept{kept(t, e, path)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || len(rs[0].Problems) != 1 || !strings.Contains(rs[0].Problems[0].Message, "a push into this repository adds it") {
		t.Fatalf("validate: %+v", rs)
	}
}

// pushedOnRecorded makes a repository with one file recorded and a push,
// not taken yet, that sets path to content.
func pushedOnRecorded(t *testing.T, path, content string) *Engine {
	t.Helper()
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	moveRef(t, e, pushCommit(t, e, path, content))
	return e
}

// owedMemoryMerge makes MEMORY.md recorded as head, a push adding "- A
// line 1" taken while the file here was edited ("- B line 1" added): the
// merge of the two is owed, for the next record.
func owedMemoryMerge(t *testing.T) (e *Engine, head string) {
	t.Helper()
	head = "# Memory\n\n## Learnings\n- base\n"
	e = memoryEditedOverPush(t, head, head+"- B line 1\n")
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	return e, head
}
