package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// This file is the engine's door for callers: read-only views of the
// configuration and the recorded history, and Put, the one way to write a
// new version of a kept file. Nothing outside the engine touches the store
// or the validator.

// Config returns the repository's configuration. It is shared: callers
// read it and never change it.
func (e *Engine) Config() *config.Config { return e.cfg }

// Root is the work tree's root directory.
func (e *Engine) Root() string { return e.cfg.Root }

// Named is the work tree's top as the user's path names it, through a
// symbolic link (gitstore.Store.Named): the directory to open the
// repository again from.
func (e *Engine) Named() string { return e.store.Named() }

// GitDir is the repository's git directory (the work tree's own, for a
// linked work tree).
func (e *Engine) GitDir() string { return e.store.GitDir() }

// CommonDir is the git directory the work trees of the repository share
// (GitDir, but for a linked work tree: the main one's).
func (e *Engine) CommonDir() string { return e.store.CommonDir() }

// IndexFile is git's index of the work tree, which says which files git
// tracks (config.IndexDecides).
func (e *Engine) IndexFile() string { return e.store.IndexFile() }

// HeadFiles are the files git writes when HEAD moves, and the branch HEAD
// names now (gitstore.Store.HeadFiles).
func (e *Engine) HeadFiles() ([]string, string) { return e.store.HeadFiles() }

// HeadBranch is the branch HEAD names now, "" when detached.
func (e *Engine) HeadBranch() string { return e.store.HeadBranch() }

// StateRef is the ref valid versions are recorded on.
func (e *Engine) StateRef() string { return e.store.StateRef() }

// RejectedRef is the ref invalid versions are quarantined on.
func (e *Engine) RejectedRef() string { return e.store.RejectedRef() }

// Log lists the state ref's entries newest first; a ref with nothing
// recorded gives an empty list.
func (e *Engine) Log(q state.LogQuery) ([]state.Entry, error) {
	if OutsideTree(q.Path) {
		return e.homeLog(q, false) // the auto-memory file's history is on the home ref (home.go)
	}
	ents, err := e.store.Log(e.store.StateRef(), q)
	if err != nil || q.Path != "" {
		return ents, err
	}
	return e.withHome(ents, q, false)
}

// RejectedLog lists the rejected ref's entries newest first.
func (e *Engine) RejectedLog(q state.LogQuery) ([]state.Entry, error) {
	if OutsideTree(q.Path) {
		return e.homeLog(q, true)
	}
	ents, err := e.store.Log(e.store.RejectedRef(), q)
	if err != nil || q.Path != "" {
		return ents, err
	}
	return e.withHome(ents, q, true)
}

// FileAt returns a path's bytes as recorded in commit. It returns an error
// wrapping state.ErrNotFound when the commit does not hold the path, and a
// *TooLargeError (matching state.ErrTooLarge) when the version is over
// max_size (see readAt).
func (e *Engine) FileAt(commit, path string) ([]byte, error) {
	if hk, ok := e.homeKept(config.Kept{Path: path}); ok {
		path = hk.Path // a commit of the home ref (home.go)
	}
	return e.readAt(commit, path)
}

// readAt is the one read of a recorded version by its path: every reader
// of history goes through it. A version over max_size is refused from its
// object header, before any of it is inflated, with a *TooLargeError that
// names the path: the history a remote pushed may hold a blob of
// gigabytes in a few compressed megabytes, and no version over max_size is
// ever a valid one (record and sync never take one).
func (e *Engine) readAt(commit, path string) ([]byte, error) {
	data, err := e.store.ReadFile(commit, path, e.cfg.MaxSize)
	if errors.Is(err, state.ErrNotFound) && !e.store.HasCommit(commit) {
		if head, herr := e.Head(); herr == nil && head == commit {
			// the ref's head commit is missing: damaged, not "not recorded"
			return nil, &gitstore.DamagedError{Ref: e.store.StateRef(), Object: commit}
		}
	}
	return data, e.overMax(path, err)
}

// overMax turns the store's refusal of path's version over max_size into
// a *TooLargeError naming the path; other errors are returned as they are.
func (e *Engine) overMax(path string, err error) error {
	var tl *gitstore.TooLargeError
	if errors.As(err, &tl) {
		return &TooLargeError{Path: e.shown(path), Blob: tl.Blob, Size: tl.Size, Limit: tl.Limit}
	}
	return err
}

// MergeDecision is one path a sync merge decided by timestamp or kept local.
type MergeDecision = gitstore.Decision

// MergeDecisions reads the decisions a sync merge commit lists; other
// commits have none.
func (e *Engine) MergeDecisions(commit string) ([]MergeDecision, error) {
	return e.store.Decisions(commit)
}

// ValidateContent checks data against a schema only, without the rules that
// need history (see Check for those).
func (e *Engine) ValidateContent(path string, data []byte, schema string) state.Problems {
	return e.v.Validate(path, data, schema)
}

// ReadBlob reads a recorded or staged blob, up to max_size: a larger blob
// gives nil data and its size.
func (e *Engine) ReadBlob(id string) (data []byte, size int64, err error) {
	return e.store.ReadBlob(id, e.cfg.MaxSize)
}

// CheckWritable is the check every write through the engine passes, for a
// repo-relative path that is not (yet) kept, such as the schema file
// `schema infer --apply` writes and then names in a rule: a *PathError when
// its directory resolves out of the work tree, into a .git directory, or
// nowhere.
func (e *Engine) CheckWritable(rel string) error { return e.inside(config.Kept{Path: rel}) }

// WriteOwn runs write, a writer whose file protocol is its own (the L3
// graph, edited under the memory server's lock), on k's absolute path, once
// that path has passed the check every write through the engine passes:
// a directory of it that resolves out of the work tree or into a .git
// directory is refused with a *PathError, and write is not run. write
// itself must not follow a symlink at the file's own name, and reads the
// file through Door(k): the check is of names, made before write runs.
func (e *Engine) WriteOwn(k config.Kept, write func(name string) (bool, error)) (bool, error) {
	if err := e.inside(k); err != nil {
		return false, err
	}
	return write(e.cfg.Abs(k.Path))
}

// Door is the door k's file is read through, as Read reads it: a
// state.Tree of its base (the work tree, or the home directory for "~/"
// paths) whose reads are judged as every write's check judges a folder,
// and the file's path relative to it. A writer of its own (WriteOwn) reads
// the version it edits through it, so that a folder swapped for a symbolic
// link out of the tree after WriteOwn's check is never read.
func (e *Engine) Door(k config.Kept) (tree state.Tree, rel string) {
	return e.tree(k), strings.TrimPrefix(k.Path, "~/")
}

// ErrChanged is wrapped by the error of a write that found the file on
// disk no longer the version its caller read and based the new version on
// (another process, an agent or an editor, wrote it meanwhile): nothing was
// written. The caller reads the file again and re-applies its edit (Retry),
// or leaves the file alone.
var ErrChanged = errors.New("changed on disk since it was read; not written")

// ChangedError is a write refused because the file changed on disk since
// its caller read it (Put), or, with Tries, the last of that many attempts
// to read, edit and write it (Retry). It wraps ErrChanged.
type ChangedError struct {
	Path  string
	Tries int // 0 for a single write
}

func (e *ChangedError) Error() string {
	p := state.ShownPath(e.Path)
	if e.Tries > 0 {
		return fmt.Sprintf("%s: changed on disk each of the %d times it was read and edited; nothing written, run it again", p, e.Tries)
	}
	return p + ": " + ErrChanged.Error()
}

func (e *ChangedError) Unwrap() error { return ErrChanged }

// EditTries is how many times Retry reads, edits and writes a file that
// keeps changing on disk meanwhile before it gives up.
const EditTries = 5

// Retry runs edit, which reads a file, makes its new version from what it
// read and writes it with Put, again while Put finds the file changed since
// the read (a *ChangedError), at most EditTries times in all; then it
// returns a *ChangedError with Tries, naming the last file. edit's other
// errors, and nil, are returned as they are.
func Retry(edit func() error) error {
	for i := 1; ; i++ {
		err := edit()
		var changed *ChangedError
		if !errors.As(err, &changed) {
			return err
		}
		if i == EditTries {
			return &ChangedError{Path: changed.Path, Tries: i}
		}
	}
}

// Put writes a new version of a kept file, based on the version base (the
// blob id of the content the caller read and edited, File.ID; "" when it
// read no file), and records it with src: the version is checked first as
// recording checks it (its schema, and the history rules against the
// recorded version), then written atomically (one that only adds bytes
// at the end is appended in place, see write), but only while the file on
// disk is still base (compared as a sync's checkouts compare it, right
// before the rename; a file based on "" is created only if none has
// appeared), then recorded: the version written, even when another writer
// (one that does not check, such as an agent's editor) has replaced the
// file since, whose version is then recorded next, as any edit. An invalid
// version writes nothing; its problems
// come back in the Outcome (with Written false). A file no longer base
// writes nothing either: the error is a *ChangedError wrapping ErrChanged,
// and the caller reads again and re-applies its edit (Retry) or gives up,
// so an edit made meanwhile is never lost. A version base that no ref
// holds yet (an edit no watcher saw) is recorded first, as a restore saves
// it (Outcome.Saved), so the version a Put replaces is never lost either. A
// path no rule keeps (k made by
// the caller, such as .claude/settings.json when the user's rules ignore
// it) is checked against k.Schema and written, never recorded.
func (e *Engine) Put(k config.Kept, base string, data []byte, src state.Source) (Outcome, error) {
	o := Outcome{Path: k.Path}
	var (
		prev []byte
		err  error
	)
	if UsesHistory(k) {
		if prev, err = e.LastVersion(k); err != nil {
			return o, err
		}
	}
	o.Problems = e.Check(File{Kept: k, Content: data, Exists: true}, prev)
	if o.Problems.Invalid() {
		return o, nil
	}
	_, kept := e.cfg.Classify(k.Path)
	if kept && base == "" && e.NotTakenAt(k.Path) {
		// a file made here would be recorded over the version another
		// machine keeps at the path, replacing it everywhere
		// (attack28-recheck3 N3c, N3d: resolve, claude install)
		return o, &NotTakenError{Path: k.Path}
	}
	var saved map[string]Outcome
	if kept && base != "" {
		// a line another writer is still appending is waited for (up to
		// UnendedWait): once it ends the file is no longer base, and the
		// caller reads it again; spliced now, strata's own line went
		// after the half line and the writer's rest after strata's
		// (attack42 F5, F9: `memory add`, the protocol's write)
		e.waitForLine(k)
		// the version this one replaces is recorded first when it is not
		// (an agent's edit no watcher saw), as a restore does: resolve
		// rewrites the whole file, and nothing it replaces may be lost
		var seen map[string]string
		if saved, seen, err = e.saveOnDisk([]config.Kept{k}, false); err != nil {
			return o, err
		}
		if seen[k.Path] != base {
			return o, &ChangedError{Path: k.Path}
		}
	}
	// the version's blob is stored before its temp file exists, so that the
	// temp file a kill leaves is known as strata's own (removeLeftovers),
	// never recorded as an edit of someone else's
	if _, err := e.store.WriteBlob(data); err != nil {
		return o, fmt.Errorf("write %s: %w", k.Path, err)
	}
	written, err := e.write(k, data, base)
	if err != nil {
		return o, err
	}
	if !written {
		return o, &ChangedError{Path: k.Path}
	}
	o.Written = true
	if !kept {
		return o, nil
	}
	// the version written, even if another writer has replaced it since
	outs, err := e.record([]config.Kept{k}, src, map[string][]byte{k.Path: data})
	if len(outs) > 0 {
		markSaved(outs[:1], saved)
		o = outs[0]
		o.Written = true
	}
	return o, err
}

// putOver is Put for data, a version merged from edit, the file on disk
// (mergeOverEdit): edit, when the state ref's head does not hold it, is
// recorded in the same move of the ref as data, one commit each (source
// record, then src), never on its own. Put records such an edit first, in a
// move of its own: where this repository is another machine's sync
// remote, a sync there that fetched the ref between the two moves read the
// edit's commit as the edit taking out the other machine's lines the merge
// puts back, merged that deletion, and the lines were gone on both machines
// (attack40 F1). data is written first, only while the file is still edit,
// then recorded; a kill between leaves the merged version on disk, recorded
// next over the head (the edit's work is in it).
func (e *Engine) putOver(k config.Kept, edit File, data []byte, src state.Source) (Outcome, error) {
	o := Outcome{Path: k.Path}
	if UsesHistory(k) {
		return o, fmt.Errorf("put %s: merged over an edit, but its class has history rules", k.Path)
	}
	if o.Problems = e.Check(File{Kept: k, Content: data, Exists: true}, nil); o.Problems.Invalid() {
		return o, nil
	}
	for _, v := range [][]byte{edit.Content, data} {
		if _, err := e.store.WriteBlob(v); err != nil {
			return o, fmt.Errorf("write %s: %w", k.Path, err)
		}
	}
	written, err := e.write(k, data, edit.ID())
	if err != nil {
		return o, err
	}
	if !written {
		return o, &ChangedError{Path: k.Path}
	}
	outs, err := e.recordOver([]config.Kept{k}, src, map[string][]byte{k.Path: data}, map[string][]byte{k.Path: edit.Content}, false)
	if len(outs) > 0 {
		o = outs[0]
	}
	o.Written = true
	return o, err
}

// JudgedAgainst is the recorded version the history rules judge f, a
// version read on disk, against (Check's prev), as the next record will,
// which takes a push into this repository not taken yet first
// (judgeBase): LastVersion, but, while such a push is pending, nil for a
// file still the version the files here follow (no edit: the next command
// writes the pushed version over it), and the version at the head the
// files follow when the push will be put back. Before, validate and the
// Claude Code hook called an untouched initiative invalid, its status
// "moved back" from the pushed one (attack40 F3), and refused an edit the
// record then took, judged against the head it put the push back at
// (attack40c M3).
func (e *Engine) JudgedAgainst(f File) ([]byte, error) {
	if !UsesHistory(f.Kept) {
		return nil, nil
	}
	head, files, followed, added, err := e.judgeBase()
	if err != nil {
		return nil, err
	}
	if id, ok := followed[f.Path]; ok && f.Exists && f.ID() == id {
		return nil, nil
	}
	if added[f.Path] {
		return nil, nil // the push to be put back adds it: new here
	}
	return e.lastVersion(f.Kept, head, files, nil)
}

// judgeBase is what the history rules judge the files on disk against, as
// the next record will: the state ref's head and its files; while a push
// into this repository is not taken yet, the head the files here follow
// when the push will be put back, with the paths the push adds (absent at
// that head: new to the record that puts it back, though the ref's history
// holds them), else the ref's head with that head's files as followed (a
// file still at that version is no edit).
func (e *Engine) judgeBase() (head string, files, followed map[string]string, added map[string]bool, err error) {
	if head, files, err = e.recorded(); err != nil {
		return "", nil, nil, nil, err
	}
	o, oerr := e.outsideMove()
	if oerr != nil || !o.pending || o.from == "" {
		return head, files, nil, nil, nil
	}
	from, ferr := e.filesAt(o.from)
	if ferr != nil {
		return head, files, nil, nil, nil
	}
	if plan, perr := e.planPush(o); perr == nil && plan.why != "" { // a deleted ref's too
		return o.from, from, nil, addedBy(files, from), nil
	}
	return head, files, from, nil, nil
}

// addedBy is the paths the snapshot pushed holds and from does not: the
// files a push to be put back adds, new to the record that puts it back.
func addedBy(pushed, from map[string]string) map[string]bool {
	added := map[string]bool{}
	for p := range pushed {
		if _, ok := from[p]; !ok {
			added[p] = true
		}
	}
	return added
}

// pushedFrom returns the head the files here follow while a push into this
// repository not yet taken moved the state ref from it (ok false when none
// is pending, or the ref was deleted).
func (e *Engine) pushedFrom() (string, bool) {
	o, err := e.outsideMove()
	if err != nil || !o.pending || o.to == "" || o.from == "" {
		return "", false
	}
	return o.from, true
}

// LastVersion is the recorded version a new version of k's file is judged
// against by the history rules (Check's prev): the state ref head's, else,
// when the file's deletion was recorded, the last version before it; nil
// when there is none or k's class has no history rule (UsesHistory).
func (e *Engine) LastVersion(k config.Kept) ([]byte, error) {
	head, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	return e.lastVersion(k, head, files, nil)
}

// onDiskIs reports whether k's file on disk is still the version expect (a
// blob id; "" meaning absent). A file that cannot be read as a regular file
// (a name too long for the file system, a symbolic link or a pipe in the
// way) is its *state.Problem, said as it is, never as "edited meanwhile".
func (e *Engine) onDiskIs(k config.Kept, expect string) (bool, error) {
	f, prob := e.Read(k)
	if prob != nil {
		return false, prob
	}
	return f.ID() == expect, nil
}

// checkout makes k's file on disk the recorded blob ("" removes the file),
// unless the file is no longer the version expect: then it writes nothing
// and returns false. A file that cannot be read as a regular file is its
// *state.Problem (see onDiskIs). Completing a sync journal uses it; a sync
// itself writes through Checkouts, in one durability pass.
func (e *Engine) checkout(k config.Kept, expect, blob string) (bool, error) {
	var st os.FileInfo
	if blob == "" {
		st, _ = os.Lstat(e.cfg.Abs(k.Path)) // before the content is read: what the removal compares with
	}
	if same, err := e.onDiskIs(k, expect); !same || err != nil {
		return false, err
	}
	if blob == "" {
		return e.removeUnchanged(k, st)
	}
	data, err := e.Blob(blob)
	if err != nil {
		return false, err
	}
	return e.write(k, data, expect)
}

// Blob reads a recorded version, refusing one larger than max_size (it may
// come from another machine with a larger limit).
func (e *Engine) Blob(id string) ([]byte, error) {
	data, size, err := e.store.ReadBlob(id, e.cfg.MaxSize)
	if err != nil {
		return nil, err
	}
	if data == nil && size > e.cfg.MaxSize {
		return nil, &TooLargeError{Blob: id, Size: size, Limit: e.cfg.MaxSize}
	}
	return data, nil
}

// CheckedOut reports whether the version of path that commit rev (a
// commit of strata's refs) holds is the one the user's checked-out commit
// (HEAD) holds: a version git itself put in the work tree — a checkout, a
// reset, a stash, a pull — or the one last committed. The layer protocol
// and the workflow TTL leave such a version alone: it is a branch's, not an
// agent's step, and writing over it would dirty a tracked file and block
// the way back (git checkout refuses to overwrite local changes). Any
// error (no HEAD yet, path not in it) is false.
func (e *Engine) CheckedOut(rev, path string) bool {
	blob, err := e.store.BlobID(rev, path)
	return err == nil && e.CheckedOutBlob(blob, path)
}

// headHolds tells, for a batch of records, which versions the user's
// checked-out commit holds: HEAD is resolved once, at the first question.
type headHolds struct {
	e      *Engine
	commit string
	asked  bool
}

// head resolves HEAD at the first question ("": no commit yet, nothing is
// HEAD's).
func (h *headHolds) head() string {
	if !h.asked {
		h.asked = true
		h.commit, _ = h.e.store.Resolve("HEAD")
	}
	return h.commit
}

// of returns HEAD's commit id when it holds blob (content; nil: read from
// the store when needed) at path, else "": the same blob, or the same but
// for CRLF line ends (git converts them on checkout under eol=crlf or
// core.autocrlf).
func (h *headHolds) of(path, blob string, content []byte) string {
	if blob == "" || strings.HasPrefix(path, "~/") || h.head() == "" {
		return ""
	}
	b, err := h.e.store.BlobID(h.commit, path)
	if err != nil {
		return ""
	}
	if b == blob {
		return h.commit
	}
	if content == nil {
		if content, _, err = h.e.store.ReadBlob(blob, h.e.cfg.MaxSize); err != nil || content == nil {
			return ""
		}
	}
	if !h.e.sameButLineEnds(b, content) {
		return ""
	}
	return h.commit
}

// removed returns HEAD's commit id when git removed path from the work
// tree with one of HEAD's last moves: HEAD does not hold it, a commit HEAD
// pointed at lately does (the HEAD reflog's last entries) — a checkout of a
// branch without the file, a reset, a git rm committed. "" otherwise (a
// file never committed, deleted by hand; no reflog).
func (h *headHolds) removed(path string) string {
	if strings.HasPrefix(path, "~/") || h.head() == "" {
		return ""
	}
	if _, err := h.e.store.BlobID(h.commit, path); err == nil {
		return ""
	}
	for _, c := range h.e.store.RecentHeads(recentHeads) {
		if _, err := h.e.store.BlobID(c, path); err == nil {
			return h.commit
		}
	}
	return ""
}

// recentHeads is how many of the last HEAD moves removed asks about: a
// checkout followed by a commit, a rebase's steps, before the next record.
const recentHeads = 16

// CheckedOutBlob is CheckedOut for a version given by its blob id.
func (e *Engine) CheckedOutBlob(blob, path string) bool {
	return (&headHolds{e: e}).of(path, blob, nil) != ""
}

// sameButLineEnds reports whether content, which has CRLF line ends, is
// the blob stored (git's clean form, LF) but for them: what git writes on
// checkout under eol=crlf or core.autocrlf.
func (e *Engine) sameButLineEnds(stored string, content []byte) bool {
	if !bytes.Contains(content, []byte("\r\n")) {
		return false
	}
	data, _, err := e.store.ReadBlob(stored, e.cfg.MaxSize)
	if err != nil || data == nil {
		return false
	}
	return bytes.Equal(bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n")), bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")))
}

// NotTakenError is a write that would make a file where a sync did not
// take the version the state ref holds (status's `not taken`).
type NotTakenError struct{ Path string }

func (e *NotTakenError) Error() string { return state.ShownPath(e.Path) + ": " + e.Reason() }

// Reason is the refusal without the path, for a line that already names it.
func (e *NotTakenError) Reason() string {
	return "not created: refs/strata/state holds a version of it a sync did not write here (not taken); strata restore " + state.ShellWord(e.Path) + " writes it"
}
