package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// A push into this repository (it serves as another machine's sync remote
// while strata keeps its work tree too), or any other move of the state ref
// by something that is not strata (git update-ref by hand), leaves the files
// at the version the ref moved from: the next record took each file the
// move changed for the user's edit back, and each file it added for a
// deletion, reverting the pushed work on every machine (attack38e). strata
// keeps the heads of its own last move of the ref (gitstore.Matched), and
// its ref moves refuse to start from any other (*gitstore.OutsideMoveError).
// So a record (the watcher's, a hook's), a sync, a restore and forget first
// take every such move since (takePush). A fast-forward of the head the
// files follow whose new commits a sync would take (gitstore.CheckPushed:
// the head's tree and every new commit's trailers) is taken as a
// fast-forward sync takes the other machine's versions: each kept file that
// changed between the two heads and is still the version of the first gets
// the version of the second, written in one batch through the journal (By
// "push": a crash is completed by the next command); a file edited since is
// left as edited (recorded over it, named; a MEMORY.md or graph merged
// with it); a file already at the new version is left alone. A version this
// machine would not take from a sync is not written either: one that fails
// its schema, is over max_size, or, for Claude Code's settings files and
// .mcp.json, changes what Claude Code runs here; the file on disk is then
// recorded next, as this machine's version (a new file that is absent here
// stays absent, noted as not taken, so its absence is no deletion). Any
// other move (no fast-forward: a forced push, a rewind by hand; a deletion
// of the ref; a history a sync would refuse; a version the one here could
// not be recorded back over, putBackWhy) is put back: the ref goes back
// to the head the files follow, and the refused head stays in the reflog;
// a machine that pushed it merges with this one at its next sync, as any
// two machines do (attack39 H2: a push after a rewind by hand was recorded
// over; M2: a push a sync refuses was taken, and no clone could sync this
// one again; L1: a forced push left this machine's history in the reflog
// only). Each move taken is then marked (gitstore.MarkMatched), and a push
// that landed meanwhile is taken next, from there: every push is taken,
// however many piled up (attack38f F1), and one landing during a record
// makes its ref move refuse, so the record takes it and is made again (F2).

// outside is what outsideMove finds.
type outside struct {
	head     string // the state ref's head
	pending  bool   // something other than strata moved the ref since strata's last move
	from, to string // pending: the head the files follow, and head
	forward  bool   // pending: to descends from from
	// heal is set, with nothing pending, when worktree-head does not say
	// so (missing, damaged: the reflog spoke): it is written again
	heal bool
}

// outsideMove looks at the state ref against strata's own last move of it.
func (e *Engine) outsideMove() (outside, error) {
	if e.display != "" {
		return outside{}, nil // the home view's ref is never pushed to
	}
	head, err := e.Head()
	if err != nil {
		return outside{}, err
	}
	o := outside{head: head}
	if e.store.FileHolds(head) {
		return o, nil // the usual case: one small file read
	}
	mFrom, mTo, known := e.store.Matched()
	if !known || head == mTo || head == mFrom {
		o.heal = known || head != ""
		return o, nil
	}
	o.pending, o.from, o.to = true, mTo, head
	if head == "" {
		return o, nil // deleted
	}
	for _, c := range []string{mTo, mFrom} {
		if c == "" {
			continue
		}
		if ahead, _, err := e.store.Compare(c, head); err == nil && ahead == 0 {
			o.from, o.forward = c, true
			return o, nil
		}
	}
	if mTo == "" && mFrom == "" {
		o.from, o.forward = "", true // strata's last move was to nothing
	}
	return o, nil
}

// TakePush takes the state ref's moves by something other than strata
// into the work tree (see above) before a command that moves the ref
// itself (sync, restore, forget; Record calls it too). The files it wrote,
// left or did not take are kept for TakePushed.
func (e *Engine) TakePush() error { return e.takePush() }

// takePush is TakePush; it holds the write-phase lock exclusively, and its
// caller holds none.
func (e *Engine) takePush() error {
	if e.writesHeld.Load() > 0 {
		return nil // a caller holds the write-phase lock: its ref move refuses, and the outer record comes back here
	}
	if o, err := e.outsideMove(); err != nil || !o.pending && !o.heal {
		return err
	}
	release, err := e.HoldWrites()
	if err != nil {
		return err
	}
	defer release()
	if err := e.recoverWrites(false); err != nil {
		return err
	}
	for range maxPushRounds {
		o, err := e.outsideMove()
		if err != nil {
			return err
		}
		if !o.pending {
			if o.heal {
				return e.store.MarkMatched(o.head)
			}
			return nil
		}
		plan, err := e.planPush(o)
		if err != nil {
			return err
		}
		if plan.why == "" {
			if err := e.takeForward(o.from, o.to, plan); err != nil {
				return err
			}
			continue
		}
		moved, err := e.store.PutBack(o.to, o.from)
		if err != nil {
			return err
		}
		if moved {
			e.notePushed(Pushed{PutBack: true, From: o.from, To: o.to, Why: plan.why})
		}
	}
	return nil // still moving: the record's ref move refuses, and it comes back here
}

// pushPlan is what taking a pending move does (planPush): put it back
// (why), or write owed, leave refused unwritten (notTaken: those absent
// here), with still the owed files that are still the version the files
// follow (status's "not yet written").
type pushPlan struct {
	why      string
	owed     []JournalEntry
	refused  []Pushed
	notTaken map[string]string
	still    []string
}

// planPush judges the pending move o in one pass over the files it
// changed: put back when it is no fast-forward, a deletion, a history a
// sync would refuse, or when a version kept here could not be recorded back
// over the one it brings; else the writes it owes and the versions not
// taken. takePush and PendingPush both ask it, so status says what the
// next command does.
func (e *Engine) planPush(o outside) (pushPlan, error) {
	switch {
	case o.to == "":
		return pushPlan{why: "it deleted the ref"}, nil
	case !o.forward:
		return pushPlan{why: "it is no fast-forward of " + state.ShortID(o.from) + " (a forced push, or a rewind by hand)"}, nil
	}
	err := e.store.CheckPushed(o.from, o.to)
	var unsafe *gitstore.UnsafeTreeError
	var bound *gitstore.TreeBoundError
	if errors.As(err, &unsafe) || errors.As(err, &bound) {
		return pushPlan{why: "a sync would refuse it: " + err.Error()}, nil
	}
	if err != nil {
		return pushPlan{}, err
	}
	// A file whose version here is kept (the pushed one refused, or the
	// file edited since) is recorded back over the pushed version, as a
	// sync's merge keeps it local; when the rules that need history refuse
	// that (a changed Phase Outcome or resolution, an initiative status
	// moved back: attack39b F1, attack39c N1; a Phase Outcome made here and
	// not recorded yet, at the path of a pushed one: N5), the ref would keep
	// the pushed version with every record here refused, and the next sync
	// would spread it: the move is put back instead, and the pusher's next
	// sync merges as a sync does (keeping one side, renumbering a clash).
	plan := pushPlan{notTaken: map[string]string{}}
	stuck := ""
	err = e.pushedChanges(o.from, o.to, func(k config.Kept, f File, prob *state.Problem, was, now string, moved bool) {
		if stuck != "" {
			return
		}
		why := e.pushRefused(k, was, now, o.to, moved)
		if e.cannotRecordBack(f, prob, was, now, why) {
			stuck = k.Path
			return
		}
		if why != "" {
			plan.refused = append(plan.refused, Pushed{Path: k.Path, Refused: why, New: was == ""})
			if was == "" && !e.fileThere(k.Path) {
				plan.notTaken[k.Path] = now // absent here: no deletion to record
			}
			return
		}
		plan.owed = append(plan.owed, JournalEntry{Path: k.Path, Ours: was, Result: now})
		if prob == nil && f.ID() == was {
			plan.still = append(plan.still, k.Path)
		}
	})
	if err != nil {
		return pushPlan{}, err
	}
	if stuck != "" {
		return pushPlan{why: "the version of " + state.ShownPath(stuck) + " here could not be recorded back over it (the rules a record applies against the last version refuse it)"}, nil
	}
	return plan, nil
}

// cannotRecordBack reports whether f, k's file here (prob when it cannot be
// read), kept over the version now a push brought (refused, why; or edited
// since), is one the next record would refuse over now though it could be
// recorded over was, the version the files followed.
func (e *Engine) cannotRecordBack(f File, prob *state.Problem, was, now, why string) bool {
	// a pushed change or deletion of a recorded Phase Outcome or
	// resolution, refused by the append-only rule, stays in the ref unless
	// the version here is recorded back over it: when the file here is
	// deleted, or edited in a way the rule refuses too, nothing here can
	// be, and the pushed version would become the recorded one, written by
	// the next restore and published by the next sync (attack40d F1): put
	// back instead
	appendOnly := why != "" && was != "" && f.Class.Immutable()
	if prob != nil {
		return false
	}
	if !f.Exists {
		return appendOnly // else absent here: no version to record back
	}
	if f.ID() == was && why == "" {
		return false // taken as pushed
	}
	blob := func(id string) []byte {
		if id == "" {
			return nil
		}
		data, err := e.Blob(id)
		if err != nil {
			return nil
		}
		return data
	}
	if appendOnly && e.Check(f, blob(was)).Invalid() {
		return true
	}
	return e.Check(f, blob(now)).Invalid() && !e.Check(f, blob(was)).Invalid()
}

// maxPushRounds bounds the moves one takePush takes in turn while pushes
// keep landing.
const maxPushRounds = 8

// takeForward takes the fast-forward move from from to to as plan says
// (takePush).
func (e *Engine) takeForward(from, to string, plan pushPlan) error {
	owed := plan.owed
	if len(plan.notTaken) > 0 {
		if err := e.KeepNotTaken(plan.notTaken); err != nil {
			return err
		}
	}
	e.notePushed(plan.refused...)
	if len(owed) == 0 {
		return e.store.MarkMatched(to)
	}
	if err := e.beginJournal(journal{Writes: owed, From: from, To: to, By: "push"}, "nothing written"); err != nil {
		return err
	}
	nw, err := e.writePushed(owed, to)
	if err != nil {
		return err // the journal stays: the next command completes it
	}
	left := map[string]bool{}
	for _, n := range nw {
		left[n.Path] = true
	}
	e.noteNotWritten(nw...)
	var written []Pushed
	for _, w := range owed {
		if !left[w.Path] {
			written = append(written, Pushed{Path: w.Path, Deleted: w.Result == ""})
		}
	}
	e.notePushed(written...)
	return nil
}

// writePushed makes the writes owed for a push taken (takeForward), the
// journal of them written: in one batch, as a sync writes its files
// (Checkouts: one durability pass; attack39 M3: one file at a time, a
// catch-up of 2 000 changed files took 46 s), then notes the head taken and
// removes the journal. It returns the writes left undone: a file edited
// since (recorded over the pushed version; a MEMORY.md or graph merged with
// it, OweMerges), or one the work tree refuses (a link or folder in the way:
// noted as not taken).
func (e *Engine) writePushed(owed []JournalEntry, to string) ([]NotWritten, error) {
	co := e.Checkouts()
	defer co.Abort()
	files := 0
	for _, w := range owed {
		if w.Result != "" {
			files++
		}
	}
	co.Expect(files)
	var nw []NotWritten
	refused := map[string]string{}
	byPath := map[string]JournalEntry{}
	replaced := false
	for _, w := range owed {
		byPath[w.Path] = w
		k, ok := e.cfg.Classify(w.Path)
		if !ok {
			continue
		}
		added, err := co.Add(k, w.Ours, w.Result, nil)
		var unwritable *state.Problem
		var pe *PathError
		switch {
		case errors.As(err, &unwritable) || errors.As(err, &pe) && pe.IO:
			nw = append(nw, NotWritten{Path: w.Path, Rev: to, NotTaken: w.Result != "", Push: true})
			if w.Result != "" {
				refused[w.Path] = w.Result
			}
		case err != nil:
			return nil, fmt.Errorf("push: %s: %w", w.Path, err)
		case added:
			replaced = replaced || w.Ours != ""
		default: // edited since
			nw = append(nw, NotWritten{Path: w.Path, Rev: to, Ours: w.Ours, Result: w.Result, Push: true})
		}
	}
	late, err := co.Commit(nil)
	if replaced {
		e.SweepFreed()
	}
	if err != nil {
		return nil, err
	}
	for _, p := range late {
		w := byPath[p]
		nw = append(nw, NotWritten{Path: p, Rev: to, Ours: w.Ours, Result: w.Result, Push: true})
	}
	if len(refused) > 0 {
		if err := e.KeepNotTaken(refused); err != nil {
			return nil, err
		}
	}
	e.OweMerges(nw)
	if err := e.store.MarkMatched(to); err != nil {
		return nil, err
	}
	return nw, e.EndWrites()
}

// pushedChanges calls fn, in path order, for each kept file of the work
// tree whose version differs between commits from and to (was, now: blob
// ids, "" for absent) and is not already now's version on disk (strata
// wrote it, or a move of its own went unnoted), with the file as read (f,
// or prob when it cannot be read); moved says to still holds was at
// another path (a sync that kept two Phase Outcomes made at one path
// renumbered one).
func (e *Engine) pushedChanges(from, to string, fn func(k config.Kept, f File, prob *state.Problem, was, now string, moved bool)) error {
	before, err := e.filesAt(from)
	if err != nil {
		return err
	}
	after, err := e.filesAt(to)
	if err != nil {
		return err
	}
	inTo := make(map[string]bool, len(after))
	for _, b := range after {
		inTo[b] = true
	}
	for _, p := range slices.Sorted(maps.Keys(mergedKeys(before, after))) {
		if before[p] == after[p] {
			continue
		}
		k, ok := e.cfg.Classify(p)
		if !ok || OutsideTree(p) {
			continue
		}
		f, prob := e.Read(k)
		if prob == nil && f.ID() == after[p] {
			continue
		}
		fn(k, f, prob, before[p], after[p], before[p] != "" && inTo[before[p]])
	}
	return nil
}

// filesAt is the snapshot of commit ("" for none: empty).
func (e *Engine) filesAt(commit string) (map[string]string, error) {
	if commit == "" {
		return map[string]string{}, nil
	}
	return e.store.Files(commit)
}

func (e *Engine) notePushed(p ...Pushed) {
	e.nwMu.Lock()
	e.pushed = append(e.pushed, p...)
	e.nwMu.Unlock()
}

// pushRefused says why a version a push brought is not written here, as a
// sync would not take it (""  when it is written): its schema, max_size,
// the rules that need history against the version here (a recorded Phase
// Outcome or resolution is append-only on every machine: changed or
// deleted by a push, it stays: attack39b F1), or what Claude Code runs.
func (e *Engine) pushRefused(k Kept, was, blob, commit string, moved bool) string {
	var data, cur []byte
	if blob != "" {
		var err error
		if data, err = e.Blob(blob); err != nil {
			var big *TooLargeError
			if errors.As(err, &big) {
				return "its version is over max_size here"
			}
			return "its version cannot be read: " + err.Error()
		}
	}
	if was != "" {
		var err error
		if cur, err = e.Blob(was); err != nil {
			return "its version here cannot be read: " + err.Error()
		}
	}
	// The pushed version is judged as a sync judges the other side's
	// version in a fast-forward: its schema, and the rules of the
	// append-only classes against the version here; an initiative's status
	// machine is not applied, since a sync takes a fast-forward without it
	// too (a user's restore --rev may move a status back: docs/guide.md),
	// and a push refused for it was put back for ever, its pusher told
	// nothing (attack39c LOW, N4). An edit made here since is still
	// recorded back over the pushed version by the record's own rules
	// (cannotRecordBack).
	var prev []byte
	if k.Class.Immutable() {
		prev = cur
		if was != "" && blob != was {
			if !moved {
				return "a recorded Phase Outcome or resolution is append-only on every machine: the version here stays, and is recorded back"
			}
			prev = nil // kept at another path: a sync renumbered two made at one path (attack39c N5)
		}
	}
	if ps := e.Check(File{Kept: k, Content: data, Exists: blob != ""}, prev); ps.Invalid() {
		for _, p := range ps {
			if !p.Warning {
				if blob == "" {
					return "its removal is refused here: " + p.Message
				}
				return "its version is refused here: " + p.Message
			}
		}
	}
	if whole, ok := ClaudeRuns(k.Path); ok {
		if changed := ChangesWhatRuns(cur, data, whole); len(changed) > 0 {
			return "its version changes what Claude Code runs (" + ShownChanges(changed) + "), and is not taken without you: read it (strata show " + state.ShellWord(k.Path) + " --rev " + commit + "), then take it if you trust it (strata restore " + state.ShellWord(k.Path) + " --rev " + commit + ")"
		}
	}
	return ""
}

// Pushed is a file a push into this repository changed (takePush): written
// here (or Deleted), or Refused, with why; or a move put back.
type Pushed struct {
	Path    string
	Deleted bool
	Refused string
	New     bool // Refused: a file the push added, absent here (noted as not taken)
	// PutBack is a move not taken (Why): the ref was put back from To to
	// From, the head the files follow.
	PutBack  bool
	From, To string
	Why      string
}

// Message says what was done with p, for the command's stderr or the
// watcher's log.
func (p Pushed) Message() string {
	const by = "a push into this repository (another machine's sync, or git update-ref)"
	switch {
	case p.PutBack && p.To == "":
		return "refs/strata/state was deleted from outside strata: put back at " + state.ShortID(p.From) + ", the history the files here follow (strata forget takes a file out of the history; strata restore --all puts the files at another point)"
	case p.PutBack:
		return "refused a move of refs/strata/state from outside strata to " + state.ShortID(p.To) + ": " + p.Why + "; put back at " + state.ShortID(p.From) + ", the history the files here follow; the refused head stays in git's objects for now (strata show PATH --rev " + state.ShortID(p.To) + "), and a machine that pushed it merges with this one at its next sync"
	case p.Refused != "" && p.New:
		return "not written " + state.ShownPath(p.Path) + ": " + by + " added a version not taken here (" + p.Refused + "); it stays in refs/strata/state, absent here (status: not taken)"
	case p.Refused != "":
		return "kept " + state.ShownPath(p.Path) + " as it is here: " + by + " brought a version not taken here (" + p.Refused + "); this machine's version is recorded next"
	case p.Deleted:
		return "deleted " + state.ShownPath(p.Path) + ": " + by + " removed it from refs/strata/state"
	}
	return "wrote " + state.ShownPath(p.Path) + ": " + by + " moved refs/strata/state, and its version is written here"
}

// TakePushed returns the files the records of this engine wrote, or did
// not take, for pushes into this repository since the last call, for the
// command to name.
func (e *Engine) TakePushed() []Pushed {
	e.nwMu.Lock()
	defer e.nwMu.Unlock()
	out := e.pushed
	e.pushed = nil
	return out
}

// PendingPushInfo is a move of the state ref from outside strata not yet
// taken into the work tree (PendingPush), for status and doctor.
type PendingPushInfo struct {
	From    string `json:"from"`    // the head the files here follow
	To      string `json:"to"`      // the ref's head
	Forward bool   `json:"forward"` // a fast-forward: its files are written by the next command
	// PutBack says why the next command puts the ref back at From
	// instead ("" when it takes the move)
	PutBack string   `json:"put_back,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	// NotTaken lists the files the push adds that the next command does
	// not take (a sync here would refuse them: absent here, noted as not
	// taken, so their absence is no deletion)
	NotTaken []string `json:"not_taken,omitempty"`
}

// PendingPush returns the move of the state ref by something other than
// strata that no command has taken yet (nil when none), with the kept files
// it changed that are still the version the files here follow: the next
// record, sync, restore or forget writes them. It changes nothing.
func (e *Engine) PendingPush() (*PendingPushInfo, error) {
	o, err := e.outsideMove()
	if err != nil || !o.pending {
		return nil, err
	}
	plan, err := e.planPush(o)
	if err != nil {
		return nil, err
	}
	// the owed files still as they were (one a sync would refuse is never
	// written: attack39c)
	return &PendingPushInfo{From: o.from, To: o.to, Forward: o.forward, PutBack: plan.why, Paths: plan.still, NotTaken: slices.Sorted(maps.Keys(plan.notTaken))}, nil
}

// mergedKeys is the keys of a and b, once each.
func mergedKeys(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for p := range a {
		out[p] = true
	}
	for p := range b {
		out[p] = true
	}
	return out
}

// ReceivedPushes reports whether the state ref was ever moved by a push
// into this repository (or another outside move), as its reflog keeps
// them: another machine syncs with it, and holds what it fetched from here.
func (e *Engine) ReceivedPushes() bool { return e.display == "" && e.store.ReceivedPushes() }

// WorktreeHeadProblem says what is wrong with <gitdir>/strata/worktree-head
// ("" when nothing is): something unusable there, or nothing there while
// the state ref exists; standIn says whether the reflog's newest strata
// entry stands in for it (else a push into this repository now would be
// recorded over, as before worktree-head: attack39b F2). For doctor.
func (e *Engine) WorktreeHeadProblem() (problem string, standIn bool) {
	if e.display != "" {
		return "", false
	}
	_, _, standIn = e.store.Matched()
	if problem = e.store.MatchedFileProblem(); problem != "" {
		return problem, standIn
	}
	if head, err := e.Head(); err == nil && head != "" && !standIn {
		return "missing", false
	}
	return "", standIn
}

// PushMaybe reports, cheaply, whether something other than strata may have
// moved the state ref since strata's last move: worktree-head does not
// name its head (the watcher looks once a second, then calls TakePush).
func (e *Engine) PushMaybe() (head string, maybe bool) {
	if e.display != "" {
		return "", false
	}
	head, err := e.Head()
	return head, err == nil && !e.store.FileHolds(head)
}
