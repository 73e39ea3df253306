package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// Point names a moment of history: a time on the state ref, a commit-ish
// (of the state ref or of the user's own branches), or, when both are zero,
// the state ref's head.
type Point struct {
	At  time.Time
	Rev string
}

func (p Point) String() string {
	switch {
	case p.Rev != "":
		// as typed, or sent by an agent through the MCP server: a control
		// character is quoted, never written to a terminal (attack32 LOW)
		return state.TermSafe(p.Rev)
	case !p.At.IsZero():
		return p.At.Format(time.RFC3339)
	}
	return "the last recorded version"
}

// Commit resolves a point to a commit id. It returns an error wrapping
// state.ErrNotFound when nothing was recorded at that point.
func (e *Engine) Commit(p Point) (string, error) {
	switch {
	case p.Rev != "":
		c, err := e.store.Resolve(p.Rev)
		if err != nil {
			return "", fmt.Errorf("revision %q: %w", p.Rev, err)
		}
		return c, nil
	case !p.At.IsZero():
		c, err := e.store.At(e.store.StateRef(), p.At)
		if err != nil {
			if errors.Is(err, state.ErrNotFound) {
				return "", fmt.Errorf("nothing recorded at or before %s: %w", p.At.Format(time.RFC3339), state.ErrNotFound)
			}
			return "", err
		}
		return c, nil
	}
	h, err := e.store.Head(e.store.StateRef())
	if errors.Is(err, state.ErrNotFound) {
		return "", fmt.Errorf("nothing recorded yet: %w", err)
	}
	if err != nil {
		return "", err // a ref that is there but cannot be read: not "nothing recorded yet"
	}
	return h, nil
}

// Show returns a kept file's bytes as recorded at a point.
func (e *Engine) Show(path string, p Point) ([]byte, error) {
	if hk, ok := e.homeKept(config.Kept{Path: path}); ok {
		h, err := e.homeView()
		if err != nil {
			return nil, err
		}
		return h.Show(hk.Path, p)
	}
	c, err := e.Commit(p)
	if err != nil {
		return nil, err
	}
	data, err := e.readAt(c, path)
	if errors.Is(err, state.ErrNotFound) {
		return nil, notRecordedAt(e.shown(path), p, err)
	}
	return data, err
}

// notRecordedAt is the error of a path with no version at p (err, from
// the store, wraps state.ErrNotFound): it names a symbolic link or a
// submodule found there instead of a file.
func notRecordedAt(path string, p Point, err error) error {
	var naf *gitstore.NotAFileError
	if errors.As(err, &naf) {
		return fmt.Errorf("%s: %s at %s, not a file: %w", path, naf.Kind, p, state.ErrNotFound)
	}
	return fmt.Errorf("%s: not recorded at %s: %w", path, p, state.ErrNotFound)
}

// Restore writes the given kept files as they were at a point, atomically,
// and records the restored versions with source restore in one commit. Every
// path is checked before anything is written: a path that did not exist at
// that point, whose version there fails its schema, or whose file on disk
// cannot be saved first (savable), writes nothing. What is on disk is saved
// first (saveOnDisk); a file that changes after that is left alone and
// returned as a Late outcome, not recorded by the restore (putBack).
// Restoring a Phase Outcome is how an append-only violation is undone, so the
// history rules are not applied; the schema is. From the last recorded
// version (p zero), a file whose deletion was recorded is brought back as it
// was before that deletion, and its Outcome's Revived says which version.
func (e *Engine) Restore(paths []config.Kept, p Point) ([]Outcome, error) {
	paths = distinct(paths)              // a path named twice (a a ./a) is restored once
	if err := e.takePush(); err != nil { // planned from the files a push left owed written (pushed.go)
		return nil, err
	}
	if home, tree := e.splitHome(paths); len(home) > 0 {
		return e.restoreHome(home, tree, p) // from the home ref (home.go)
	}
	jobs, err := e.planPaths(paths, p)
	if err != nil {
		return nil, err
	}
	saved, seen, err := e.saveOnDisk(paths, true)
	if err != nil {
		return nil, err
	}
	outs, err := e.putBack(paths, jobs, nil, seen)
	revived := map[string]*Revived{}
	for _, j := range jobs {
		revived[j.k.Path] = j.revived
	}
	markSaved(outs, saved)
	for i := range outs {
		outs[i].Revived = revived[outs[i].Path]
	}
	return outs, err
}

// RestoreStep, set by tests only, is called at the named steps of a
// restore's write: "saved" once what was on disk is saved, before anything
// is written; "added" once the new versions wait in their temp files;
// "journaled" once the writes it will owe are in the journal; "moved" once
// the state ref records the restored versions, before any is renamed into
// place; "written" once every file is written or removed.
var RestoreStep func(step string)

// putBack records the restore's versions and puts them on disk: the
// versions of jobs written, the files of remove removed, each only while
// the file on disk is still the version seen when it was saved
// (saveOnDisk). It returns an Outcome for each of paths, in their order:
// with the restore's commit entry, Written when the file was changed on
// disk; Late for a file left alone because it changed meanwhile (that
// edit is newer, and recorded next).
//
// The restore is one step for a crash too, as a sync's write phase is
// (journal.go). Holding the write-phase lock (no record in another process
// meanwhile), it writes the new versions to temp files beside their files
// (Checkouts.Add: a file already edited since it was saved is left out
// here), writes the journal of the writes it is about to owe, moves the
// state ref to the restored versions in one commit, and only then renames
// the temp files into place and removes the files to remove, and removes
// the journal. Killed before its commit, nothing was changed on disk and
// the next command removes the journal; killed after, the next command
// completes the writes (RecoverWrites). Before, a restore wrote the files
// first and recorded them after: killed in between, it left them half
// restored, recorded next as the user's edits, and a Phase Outcome it had
// deleted rejected as the user's append-only violation (attack37b L5).
// A file edited in the moment between its check and its rename has its
// restored version in the restore's commit, and the edit recorded over it
// next.
func (e *Engine) putBack(paths []config.Kept, jobs []restoreJob, remove []config.Kept, seen map[string]string) ([]Outcome, error) {
	step := func(s string) {
		if RestoreStep != nil {
			RestoreStep(s)
		}
	}
	step("saved")
	release, err := e.HoldWrites()
	if err != nil {
		return nil, err
	}
	defer release()
	// a journal a sync or restore killed since the save left (the save
	// completed any earlier one): completed first, as a record would
	if err := e.recoverWrites(false); err != nil {
		return nil, err
	}
	ks := make([]config.Kept, 0, len(jobs)+len(remove))
	for _, j := range jobs {
		ks = append(ks, j.k)
	}
	e.removeLeftovers(append(ks, remove...), true) // of a restore, sync or Put killed during its renames
	from, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	written := map[string]bool{}
	late := map[string]string{} // path -> why it was left alone
	const edited = "edited on disk during the restore (recorded next)"
	var owed []JournalEntry
	var changes []state.Change
	now := e.Now()
	change := func(k config.Kept, data []byte, deleted bool) {
		changes = append(changes, state.Change{Path: k.Path, Content: data, Deleted: deleted, Class: k.Class, Schema: k.Schema, Source: state.SourceRestore, Time: now})
	}
	want := map[string]string{} // path -> the restored version's blob
	co := e.Checkouts()
	defer co.Abort()
	co.Expect(len(jobs))
	for _, j := range jobs {
		was, ok := seen[j.k.Path]
		if !ok {
			return nil, fmt.Errorf("restore %s: not read before it was written", e.shown(j.k.Path))
		}
		blob := gitstore.BlobHash(j.data)
		want[j.k.Path] = blob
		if was != blob {
			// stored before its temp file is written, as every version
			// strata writes (leftovers.go): a temp file left by a kill is
			// then known for strata's, not an edit to record
			if !e.store.HasBlob(blob) {
				if _, err := e.store.WriteBlob(j.data); err != nil {
					return nil, fmt.Errorf("restore %s: %w", e.shown(j.k.Path), err)
				}
			}
			added, err := co.Add(j.k, was, blob, j.data)
			var unread *state.Problem
			if errors.As(err, &unread) {
				err = e.notSaved(*unread) // unreadable since it was saved: nothing written
			}
			if err != nil {
				return nil, err
			}
			if !added {
				late[j.k.Path] = edited
				continue
			}
			written[j.k.Path] = true
			owed = append(owed, JournalEntry{Path: j.k.Path, Ours: was, Result: blob})
		}
		if files[j.k.Path] != blob {
			change(j.k, j.data, false)
		}
	}
	step("added")
	// a file edited since its Add is left out of the commit too (its new
	// version would be refused at its rename): looked at once more, right
	// before the ref moves, so only an edit in the moment between this look
	// and the rename has its restored version recorded unwritten
	changed := co.Changed()
	owed = slices.DeleteFunc(owed, func(w JournalEntry) bool {
		if !changed[w.Path] {
			return false
		}
		late[w.Path], written[w.Path] = edited, false
		return true
	})
	changes = slices.DeleteFunc(changes, func(c state.Change) bool { return changed[c.Path] })
	for _, k := range remove {
		if was := seen[k.Path]; was != "" {
			owed = append(owed, JournalEntry{Path: k.Path, Ours: was, Result: ""})
		}
		if files[k.Path] != "" {
			change(k, nil, true)
		}
	}
	entries := map[string]*state.Entry{}
	if len(changes) > 0 {
		if err := e.beginRestore(from, owed); err != nil {
			return nil, err
		}
		step("journaled")
		recorded, err := e.store.Record(changes...)
		if outside := (*gitstore.OutsideMoveError)(nil); errors.As(err, &outside) {
			// a push into this repository landed meanwhile: the ref did not
			// move for the restore, which owes nothing (the push is taken
			// by the next command)
			e.EndWrites()
			return nil, fmt.Errorf("restore: %w; nothing was restored: run the restore again, which takes that move first", err)
		}
		if err != nil && !errors.Is(err, state.ErrUnchanged) {
			// the journal stays: the next command undoes the restore if
			// the ref did not move, completes it if it did
			return nil, fmt.Errorf("record: %w", err)
		}
		for i := range recorded {
			entries[recorded[i].Path] = &recorded[i]
		}
		step("moved")
	}
	notWritten, err := co.Commit(nil)
	if len(written) > 0 {
		e.SweepFreed() // the replaced files Commit linked aside: a restore frees them itself
	}
	if err != nil {
		return nil, err // the journal stays: the next command completes the writes
	}
	var interfered []JournalEntry
	for _, p := range notWritten {
		written[p] = false
		late[p] = edited
		if co.Interfered(p) {
			// its file untouched: strata's temp file or folder was changed
			// by another process (attack36f: said as an edit to record
			// next, though nothing was edited); the commit records its
			// restored version, so the write stays owed, in the journal,
			// for the next command to make
			late[p] = "another process changed the temp file or folder the restore wrote it through; not written yet (the next strata record writes it)"
			if len(changes) == 0 { // no commit, no journal: nothing owed
				late[p] = "another process changed the temp file or folder the restore wrote it through; nothing written (run the restore again)"
			}
			interfered = append(interfered, JournalEntry{Path: p, Ours: seen[p], Result: want[p]})
		}
	}
	for _, k := range remove {
		was := seen[k.Path]
		if was == "" {
			continue // absent already
		}
		removed, err := e.checkout(k, was, "")
		var unread *state.Problem
		if errors.As(err, &unread) {
			removed, err = false, nil // no longer the version saved: left alone
		}
		if err != nil {
			return nil, err // the journal stays: the next command completes the removals
		}
		if !removed {
			late[k.Path] = edited
			continue
		}
		written[k.Path] = true
	}
	step("written")
	if len(interfered) > 0 && len(changes) > 0 {
		if err := e.beginRestore(from, interfered); err != nil {
			return nil, err
		}
	} else if err := e.EndWrites(); err != nil {
		return nil, err
	}
	var done []config.Kept
	for _, k := range paths {
		if _, ok := late[k.Path]; !ok {
			done = append(done, k)
		}
	}
	if err := e.voidNotTaken(done); err != nil {
		return nil, err
	}
	outs := make([]Outcome, 0, len(paths))
	for _, k := range done {
		outs = append(outs, Outcome{Path: k.Path, Entry: entries[k.Path], Written: written[k.Path]})
	}
	for _, k := range paths {
		if why, ok := late[k.Path]; ok {
			outs = append(outs, Outcome{Path: k.Path, Late: true, Problems: state.Problems{{Path: k.Path, Message: why}}})
		}
	}
	return outs, nil
}

// distinct is paths without repeats, in their order.
func distinct(paths []config.Kept) []config.Kept {
	seen := map[string]bool{}
	out := make([]config.Kept, 0, len(paths))
	for _, k := range paths {
		if !seen[k.Path] {
			seen[k.Path] = true
			out = append(out, k)
		}
	}
	return out
}

// restorable reads k's version in commit c (the point p) and checks that it
// may be written back: its directory stays inside the work tree, the file on
// disk is not a symbolic link or another non-regular file, and the version
// passes its schema. Restore and RestoreAll check every path this way before
// they write anything.
func (e *Engine) restorable(k config.Kept, c string, p Point) ([]byte, error) {
	if err := e.inside(k); err != nil {
		return nil, err
	}
	if st, err := os.Lstat(e.cfg.Abs(k.Path)); err == nil && !st.Mode().IsRegular() {
		return nil, &PathError{Path: k.Path, Reason: notWritable(st.Mode()), IO: true}
	}
	data, err := e.store.ReadCheckoutForm(c, k.Path, e.cfg.MaxSize) // a commit of the user's: as git checks it out
	if errors.Is(err, state.ErrNotFound) {
		return nil, notRecordedAt(e.shown(k.Path), p, err)
	}
	if err != nil {
		return nil, e.overMax(k.Path, err)
	}
	if ps := e.v.ValidateAs(k.Path, data, k.Schema, k.Format); ps.Invalid() {
		return nil, ps
	}
	return data, nil
}

// RestoreAll puts every kept file back as it was at a point: files recorded
// then are written, kept files that did not exist then are removed. Every
// version is checked as Restore checks it before anything is written or
// removed: one that fails changes nothing. A file that changes on disk
// after it was saved is left alone, as Restore leaves it. A file whose
// version on disk is invalid, and a Claude Code settings file or .mcp.json
// whose version then (or removal) changes what Claude Code runs, are held
// (planAll): left as they are, returned with their Outcome's Held set, and
// the other files restored.
func (e *Engine) RestoreAll(p Point) ([]Outcome, error) {
	if err := e.takePush(); err != nil { // planned from the files a push left owed written (pushed.go)
		return nil, err
	}
	write, datas, remove, held, err := e.planAll(p)
	if err != nil {
		return nil, err
	}
	all := append(append([]config.Kept{}, write...), remove...)
	// An invalid version left on disk that no ref holds yet (no record ran
	// since it turned invalid, no watcher) is saved on the rejected ref with
	// the versions this restore replaces, by the record that saves those,
	// as the next record would save it: the held line then names where its
	// bytes are, as it does for one an earlier record kept there.
	var unsaved []config.Kept
	for _, h := range held {
		if h.Invalid && h.Rejected == nil {
			unsaved = append(unsaved, h.kept)
		}
	}
	saved, seen, err := e.saveOnDisk(append(append([]config.Kept{}, all...), unsaved...), true)
	if err != nil {
		return nil, err
	}
	for i := range held {
		if s, ok := saved[held[i].Path]; ok && held[i].Invalid && held[i].Rejected == nil && s.Rejected != nil {
			held[i].Rejected, held[i].Saved = s.Rejected, !s.savedEarlier
		}
	}
	jobs := make([]restoreJob, len(write))
	for i, k := range write {
		jobs[i] = restoreJob{k: k, data: datas[i]}
	}
	outs, err := e.putBack(all, jobs, remove, seen)
	markRemoved(outs, remove)
	markSaved(outs, saved)
	for i := range held {
		outs = append(outs, Outcome{Path: held[i].Path, Held: &held[i], Rejected: held[i].Rejected, Problems: held[i].Problems})
	}
	return outs, err
}

// markRemoved sets Outcome.Removed for the paths a restore removed: an
// unrecorded file the head never held (saved on a ref first) is removed
// without a recorded deletion, and must not read as restored.
func markRemoved(outs []Outcome, remove []config.Kept) {
	gone := map[string]bool{}
	for _, k := range remove {
		gone[k.Path] = true
	}
	for i := range outs {
		outs[i].Removed = outs[i].Written && gone[outs[i].Path]
	}
}

// recordTogether records the current content of paths as ONE commit (a
// restore or an init is one event). Invalid files are quarantined together,
// before it.
func (e *Engine) recordTogether(paths []config.Kept, src state.Source) ([]Outcome, error) {
	if err := e.voidNotTaken(paths); err != nil {
		return nil, err
	}
	_, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	now := e.Now()
	var changes []state.Change
	var out []Outcome
	var invalid []invalidVersion
	idx := map[string]int{}
	atHead := &headHolds{e: e}
	for _, k := range paths {
		o := Outcome{Path: k.Path}
		f, p := e.Read(k)
		switch {
		case OutsideTree(k.Path):
			var err error
			if o, err = e.recordHome(k, src, nil); err != nil { // its own commit on the home ref (home.go)
				return nil, err
			}
		case p != nil:
			o.Problems = state.Problems{*p}
		case f.ID() == files[k.Path]: // as recorded, or still absent
		default:
			ch := state.Change{Path: k.Path, Content: f.Content, Deleted: !f.Exists, Class: k.Class, Schema: k.Schema, Source: src, Time: now}
			if f.Exists && src != state.SourceRestore {
				o.Problems = e.v.ValidateAs(k.Path, f.Content, k.Schema, k.Format)
			}
			if o.Problems.Invalid() {
				invalid = append(invalid, invalidVersion{len(out), ch})
				break
			}
			if src == state.SourceInit {
				// the version git checked out, as Record marks it (a
				// restore is the user's choice, never git's checkout)
				if f.Exists {
					ch.AtHead = atHead.of(k.Path, f.ID(), f.Content)
				} else {
					ch.AtHead = atHead.removed(k.Path)
				}
			}
			idx[k.Path] = len(out)
			changes = append(changes, ch)
		}
		out = append(out, o)
	}
	// Quarantined together, on the state head as it was before this event.
	if err := e.quarantine(out, invalid); err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return out, nil
	}
	entries, err := e.store.Record(changes...)
	if errors.Is(err, state.ErrUnchanged) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("record: %w", err)
	}
	for i := range entries {
		if j, ok := idx[entries[i].Path]; ok {
			out[j].Entry = &entries[i]
		}
	}
	return out, nil
}

// InitResult is what `strata init` did.
type InitResult struct {
	ConfigWritten bool
	Outcomes      []Outcome
}

// Init writes a commented .strata.yaml when none exists and records the
// current valid state: as the first commit of the state ref when nothing is
// recorded yet, otherwise as ordinary per-file changes. Invalid files are
// quarantined and listed. Running it twice changes nothing.
func (e *Engine) Init() (InitResult, error) {
	var res InitResult
	e.noteHead()
	name := filepath.Join(e.cfg.Root, config.FileName)
	if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(name, []byte(config.Template), 0o666); err != nil {
			return res, fmt.Errorf("write %s: %w", config.FileName, err)
		}
		res.ConfigWritten = true
	}
	paths, err := e.AllPaths()
	if err != nil {
		return res, err
	}
	head, err := e.Head()
	if err != nil {
		return res, err
	}
	if head == "" {
		res.Outcomes, err = e.recordTogether(paths, state.SourceInit)
	} else {
		res.Outcomes, err = e.Record(paths, state.SourceInit)
	}
	return res, err
}

// FileStatus is one kept file as `strata status` shows it.
type FileStatus struct {
	Path         string         `json:"path"`
	Class        state.Class    `json:"class"`
	Schema       string         `json:"schema"`
	State        string         `json:"state"` // recorded, modified, new, deleted, not taken, pushed, invalid, unreadable
	Valid        bool           `json:"valid"`
	Problems     state.Problems `json:"problems,omitempty"`
	LastRecorded *time.Time     `json:"last_recorded,omitempty"`
}

// Status reports every kept file: valid or not, and how it compares with the
// recorded head.
func (e *Engine) Status() ([]FileStatus, error) {
	pp, _ := e.PendingPush()
	return e.StatusWithPush(pp)
}

// StatusWithPush is Status for a caller that asked PendingPush already
// (strata status prints it too): each file pp owes shows as pushed.
func (e *Engine) StatusWithPush(pp *PendingPushInfo) ([]FileStatus, error) {
	head, files, err := e.recorded()
	var added map[string]bool // by the push the next command puts back
	if pp != nil && pp.PutBack != "" && pp.From != "" && err == nil {
		// the next command puts the ref back there: the files are shown
		// as that record will judge them (attack40c M3: an edit shown
		// invalid against the pushed version, then recorded), a file the
		// push adds as new there (attack40d F3)
		pushed := files
		head = pp.From
		files, err = e.filesAt(head)
		added = addedBy(pushed, files)
	}
	if err != nil {
		return nil, err
	}
	onDisk, err := e.cfg.Scan()
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	paths := e.allPaths(onDisk, files)
	var last map[string]time.Time
	if head != "" {
		last, err = e.lastTimes(paths)
		if err != nil {
			return nil, err
		}
		for p := range added {
			delete(last, p)
		}
	}
	// a file a push into this repository changed that is still the version
	// the files here follow: not the user's edit, but owed (pushed.go)
	pushed := map[string]bool{}
	if pp != nil {
		for _, p := range pp.Paths {
			pushed[p] = true
		}
	}
	out := make([]FileStatus, 0, len(paths))
	for _, k := range paths {
		s, show := e.fileStatus(k, head, files, last, pushed[k.Path])
		if pushed[k.Path] && s.State != "unreadable" {
			s.State = "pushed" // not yet written here
		}
		if pp != nil && pp.PutBack == "" && slices.Contains(pp.NotTaken, k.Path) && s.State == "deleted" {
			s.State = "not taken" // added by the push, and not taken here: no deletion
		}
		if OutsideTree(k.Path) { // compared with the home ref (home.go)
			hs, ok, err := e.homeStatus(k)
			if err != nil {
				return nil, err
			}
			if ok {
				s, show = hs, true
			}
		}
		if show {
			out = append(out, s)
		}
	}
	return out, nil
}

// fileStatus is k's status against the recorded snapshot files of head,
// and whether status lists it (a deleted file never recorded is not).
// With pushed, the file is still the version a push into this repository
// not taken yet replaces: no edit, not judged by the history rules against
// the pushed version (attack40 F3).
func (e *Engine) fileStatus(k config.Kept, head string, files map[string]string, last map[string]time.Time, pushed bool) (FileStatus, bool) {
	s := FileStatus{Path: k.Path, Class: k.Class, Schema: k.Schema, Valid: true}
	if t, ok := last[k.Path]; ok {
		s.LastRecorded = &t
	}
	f, p := e.Read(k)
	blob, had := files[k.Path]
	switch {
	case p != nil:
		s.State, s.Valid, s.Problems = "unreadable", false, state.Problems{*p}
	case !f.Exists && had && e.notTakenHere(k.Path, blob):
		s.State = "not taken" // a sync kept the remote's version in the ref, not here
	case !f.Exists:
		s.State = "deleted"
	default:
		same := f.ID() == blob // the file exists: "" (never recorded) is not its id
		var prev []byte
		switch {
		case same || pushed:
			prev = f.Content // the recorded version is these bytes
		case had && UsesHistory(k):
			prev, _ = e.store.ReadBlobLimit(blob, e.cfg.MaxSize) // over max_size: judged as a first version
		case s.LastRecorded != nil && UsesHistory(k):
			prev, _ = e.lastExisting(k.Path) // recorded, then deleted: judged against that version
		}
		s.Problems = e.Check(f, prev)
		s.Valid = !s.Problems.Invalid()
		switch {
		case !s.Valid:
			s.State = "invalid"
		case OutsideTree(k.Path):
			s.State = "not recorded" // outside the work tree and not the auto-memory file: never recorded
		case !had:
			s.State = "new"
		case same:
			s.State = "recorded"
		default:
			s.State = "modified"
		}
	}
	return s, s.State != "deleted" || had
}

// lastTimes finds the time each path was last recorded, from the trailers,
// in one walk of the state ref's history for all of them.
func (e *Engine) lastTimes(paths []config.Kept) (map[string]time.Time, error) {
	names := make([]string, len(paths))
	for i, k := range paths {
		names[i] = k.Path
	}
	return e.store.LastTimes(e.store.StateRef(), names)
}
