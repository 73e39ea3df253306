package engine

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// Revived names the version a restore wrote back for a file whose deletion
// was recorded: the file as it was in the deletion's parent commit.
type Revived struct {
	Commit    string    `json:"commit"`     // the commit whose version was written
	DeletedIn string    `json:"deleted_in"` // the commit that recorded the deletion
	DeletedAt time.Time `json:"deleted_at"`
}

// restoreJob is one file a restore writes: its kept path and the bytes.
type restoreJob struct {
	k       config.Kept
	data    []byte
	revived *Revived
}

// planPaths reads and checks the version of each path at p (see restorable)
// and that the file on disk can be saved first (savable) before anything is
// written. With p the last recorded version, a path whose
// deletion was recorded (by the watcher, record, a restore) gets its version
// before that deletion, as `git restore --source=DELETION^` would.
func (e *Engine) planPaths(paths []config.Kept, p Point) ([]restoreJob, error) {
	c, err := e.Commit(p)
	if err != nil {
		return nil, err
	}
	jobs := make([]restoreJob, 0, len(paths))
	for _, k := range paths {
		data, err := e.restorable(k, c, p)
		var rv *Revived
		if errors.Is(err, state.ErrNotFound) && p.Rev == "" && p.At.IsZero() {
			if rv, err = e.beforeDeletion(k.Path); err == nil {
				data, err = e.restorable(k, rv.Commit, Point{Rev: rv.Commit})
			}
		}
		if err == nil {
			err = e.savable(k)
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, restoreJob{k, data, rv})
	}
	return jobs, nil
}

// beforeDeletion finds the last recorded deletion of path when that is the
// path's newest entry on the state ref. It returns an error wrapping
// state.ErrNotFound, worded for the user, when there is none.
func (e *Engine) beforeDeletion(path string) (*Revived, error) {
	notRecorded := fmt.Errorf("%s: not recorded at %s: %w", path, Point{}, state.ErrNotFound)
	ents, err := e.store.Log(e.store.StateRef(), gitstore.LogQuery{Path: path, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		// a version record rejected is no version to restore (it is
		// invalid), but its bytes are there: say how to read them
		// (attack27 F2: "never recorded" sent the user nowhere)
		rej, err := e.store.Log(e.store.RejectedRef(), gitstore.LogQuery{Path: path, Limit: 1})
		if err == nil && len(rej) > 0 && rej[0].Action != state.ActionDelete {
			id := state.ShortID(rej[0].Commit)
			return nil, fmt.Errorf("%s: never recorded; its last version, invalid, is kept on %s (%s): strata show %s --rev %s prints it: %w",
				path, e.store.RejectedRef(), id, state.ShellWord(path), id, state.ErrNotFound)
		}
		return nil, fmt.Errorf("%s: never recorded: %w", path, state.ErrNotFound)
	}
	if ents[0].Action != state.ActionDelete {
		return nil, notRecorded
	}
	// The version before the deletion is the one in the commit log PATH
	// compared the deletion against: the ref's previous commit (Entry.Parent),
	// which is a merge's second parent when the ref fast-forwarded to another
	// machine's merge (attack25 recheck N3: `restore` read the first parent,
	// which never held the file, while `log PATH` showed the deletion).
	parent := ents[0].Parent
	if parent == "" {
		if parent, err = e.store.Resolve(ents[0].Commit + "^"); err != nil {
			return nil, notRecorded
		}
	}
	return &Revived{Commit: parent, DeletedIn: ents[0].Commit, DeletedAt: ents[0].Time}, nil
}

// planAll lists what RestoreAll writes (with the bytes) and removes, every
// version read and checked, and every file on disk it would replace or
// remove checked savable, before anything changes, and the files it leaves
// as they are (held), for one of two reasons.
//
// A file whose version on disk is invalid (so it cannot be recorded on the
// state ref first, only kept on the rejected ref) is held: neither written
// nor removed, and returned with why, unless it is already the version the
// restore would write (attack27 F2: a draft an agent was still writing,
// kept only on the rejected ref, was deleted by a restore --all). Restore
// of that one PATH is how it is replaced anyway (Restore saves it first).
//
// A Claude Code settings file or .mcp.json whose version at p, or whose
// removal, changes what Claude Code runs here is held too (holdWhatRuns).
func (e *Engine) planAll(p Point) (write []config.Kept, datas [][]byte, remove []config.Kept, held []Held, err error) {
	c, err := e.Commit(p)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	then, err := e.store.Files(c)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	now, err := e.AllPaths()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	seen := map[string]bool{}
	for path := range then {
		if k, ok := e.cfg.Classify(path); ok {
			write = append(write, k)
			seen[path] = true
		}
	}
	// A commit of the user's names the files git tracks, not the kept files
	// that existed then: none is removed, as `git checkout REV -- .` removes
	// none.
	user := !e.store.StrataCommit(c)
	for _, k := range now {
		if !seen[k.Path] && !OutsideTree(k.Path) && !user { // a home file is never recorded: never removed
			remove = append(remove, k)
		}
	}
	sort.Slice(write, func(i, j int) bool { return write[i].Path < write[j].Path })
	datas = make([][]byte, len(write))
	for i, k := range write {
		if datas[i], err = e.restorable(k, c, p); err != nil {
			return nil, nil, nil, nil, err
		}
		if ps := e.v.Validate(k.Path, datas[i], k.Schema); ps.Invalid() {
			return nil, nil, nil, nil, ps // as the single-path restore: nothing written
		}
	}
	write, datas, remove, held = e.holdWhatRuns(c, write, datas, remove)
	for _, k := range write {
		if err := e.savable(k); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	for _, k := range remove {
		if err := e.savable(k); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	saves, err := e.judgeOnDisk(append(append([]config.Kept{}, write...), remove...))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	hold := map[string]Held{}
	for _, s := range saves {
		if s.Invalid && !s.Deleted {
			hold[s.Path] = Held{Path: s.Path, Commit: c, Invalid: true, Rejected: s.Rejected, Problems: s.Problems, content: s.content}
		}
	}
	var (
		w  []config.Kept
		ds [][]byte
		r  []config.Kept
	)
	for i, k := range write {
		h, ok := hold[k.Path]
		if ok && !bytes.Equal(h.content, datas[i]) {
			h.kept = k
			held = append(held, h)
			continue
		}
		w, ds = append(w, k), append(ds, datas[i])
	}
	for _, k := range remove {
		if h, ok := hold[k.Path]; ok {
			h.Remove, h.kept = true, k
			held = append(held, h)
			continue
		}
		r = append(r, k)
	}
	sort.Slice(held, func(i, j int) bool { return held[i].Path < held[j].Path })
	return w, ds, r, held, nil
}

// Held is a kept file restore --all leaves as it is, for one of two
// reasons. Its version on disk is invalid (Invalid): it cannot be recorded
// on the state ref before the restore replaces or removes it, and that
// version is kept only on the rejected ref (Rejected: found there, or
// saved there by this restore, Saved, as the next record would save it;
// nil in a plan when it is on no ref yet); `strata restore PATH` replaces
// it anyway. Or writing its version at the point restored, or
// removing it, would change what Claude Code runs here (Changes:
// ChangesWhatRuns, the judgement sync makes of a remote version): a bulk
// restore takes such a file only when it is named, `strata restore PATH
// --rev COMMIT` writing it once the user has read it.
type Held struct {
	Path     string         `json:"path"`
	Commit   string         `json:"commit"`             // the commit restored from
	Remove   bool           `json:"remove,omitempty"`   // it was not recorded at the point: the restore would remove it
	Changes  []string       `json:"changes,omitempty"`  // what it would change in what Claude Code runs (ChangesWhatRuns)
	Invalid  bool           `json:"invalid,omitempty"`  // its version on disk is invalid
	Rejected *state.Entry   `json:"rejected,omitempty"` // that version on the rejected ref
	Saved    bool           `json:"saved,omitempty"`    // Rejected was saved there by this restore (on no ref before)
	Problems state.Problems `json:"problems,omitempty"` // why it is invalid

	content []byte      // the version on disk (an invalid one)
	kept    config.Kept // the file, to save that version (RestoreAll)
}

// holdWhatRuns takes out of a bulk restore's writes and removals the
// Claude Code settings files and .mcp.json (ClaudeRuns) whose new state
// changes what Claude Code runs compared with the file on disk, and
// returns them as held. A file on disk that cannot be read is compared as
// a whole: held.
func (e *Engine) holdWhatRuns(c string, write []config.Kept, datas [][]byte, remove []config.Kept) ([]config.Kept, [][]byte, []config.Kept, []Held) {
	var held []Held
	changes := func(k config.Kept, after []byte) []string {
		whole, ok := ClaudeRuns(k.Path)
		if !ok || OutsideTree(k.Path) {
			return nil
		}
		f, prob := e.Read(k)
		if prob != nil {
			return []string{"the whole file: the one on disk cannot be read (" + prob.Message + ")"}
		}
		return ChangesWhatRuns(f.Content, after, whole)
	}
	var w []config.Kept
	var d [][]byte
	for i, k := range write {
		if ch := changes(k, datas[i]); len(ch) > 0 {
			held = append(held, Held{Path: k.Path, Changes: ch, Commit: c})
			continue
		}
		w, d = append(w, k), append(d, datas[i])
	}
	var r []config.Kept
	for _, k := range remove {
		if ch := changes(k, nil); len(ch) > 0 {
			held = append(held, Held{Path: k.Path, Changes: ch, Remove: true, Commit: c})
			continue
		}
		r = append(r, k)
	}
	sort.Slice(held, func(i, j int) bool { return held[i].Path < held[j].Path })
	return w, d, r, held
}

// judgeOnDisk says what saveOnDisk would do with the file on disk of each
// of paths (that savable let through), judged by the function record
// judges with (judge): nothing when it is the recorded version, else save
// it on the state ref, or, invalid, keep it on the rejected ref (Rejected
// when an earlier record kept it there already). The file is read as the
// restore will find it (plannedReader). A restore's plan and its real run
// decide with it, so that --dry-run says what the run does.
func (e *Engine) judgeOnDisk(paths []config.Kept) ([]PlannedSave, error) {
	head, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	read, err := e.plannedReader()
	if err != nil {
		return nil, err
	}
	gone, err := e.deletedPaths(paths, files)
	if err != nil {
		return nil, err
	}
	var out []PlannedSave
	for _, k := range paths {
		f, prob := read(k)
		if prob != nil || OutsideTree(k.Path) {
			continue
		}
		o, ch, err := e.judge(f, state.SourceRecord, head, files, gone, nil)
		if err != nil {
			return nil, err
		}
		if ch == nil {
			continue
		}
		s := PlannedSave{Path: k.Path, Deleted: !f.Exists, content: f.Content}
		if o.Problems.Invalid() {
			s.Invalid, s.Problems = true, o.Problems
			s.Rejected = e.rejectedVersion(k.Path, f.ID())
		}
		out = append(out, s)
	}
	return out, nil
}

// plannedReader reads kept files as a restore will find them: a sync
// killed after its merge owes files (owedWrites), which the restore
// writes first (RecoverWrites), so they are judged as it will find them,
// not as local edits to save (attack19-crash 3).
func (e *Engine) plannedReader() (func(config.Kept) (File, *state.Problem), error) {
	owed, err := e.owedWrites()
	if err != nil {
		return nil, err
	}
	return func(k config.Kept) (File, *state.Problem) {
		blob, ok := owed[k.Path]
		if !ok {
			return e.Read(k)
		}
		if blob == "" {
			return File{Kept: k}, nil
		}
		data, err := e.Blob(blob)
		if err != nil {
			return e.Read(k)
		}
		return File{Kept: k, Content: data, Exists: true}, nil
	}, nil
}

// RestorePlan is what a restore would do, found without changing anything.
type RestorePlan struct {
	Point  string         `json:"point"`
	Save   []PlannedSave  `json:"save"`   // unrecorded versions on disk it would record first
	Write  []PlannedWrite `json:"write"`  // files it would write
	Remove []string       `json:"remove"` // kept files it would remove
	Held   []Held         `json:"held"`   // files restore --all would leave as they are (Held)
}

// PlannedSave is an unrecorded version a restore would record before it
// replaces it: the file on disk, or its deletion. An invalid one goes to
// the rejected ref (Invalid, with its Problems), or is there already
// (Rejected: the entry an earlier record kept it with).
type PlannedSave struct {
	Path     string         `json:"path"`
	Deleted  bool           `json:"deleted,omitempty"`
	Invalid  bool           `json:"invalid,omitempty"`
	Problems state.Problems `json:"problems,omitempty"`
	Rejected *state.Entry   `json:"rejected,omitempty"`

	content []byte
}

// PlannedWrite is one file a restore would write.
type PlannedWrite struct {
	Path    string   `json:"path"`
	Revived *Revived `json:"revived,omitempty"` // a deleted file's version before its deletion
}

// PlanRestore says what Restore(paths, p) would save, write and remove, with
// the same checks and the same refusals; it changes nothing.
func (e *Engine) PlanRestore(paths []config.Kept, p Point) (RestorePlan, error) {
	paths = distinct(paths)
	jobs, err := e.planPaths(paths, p)
	if err != nil {
		return RestorePlan{}, err
	}
	write := make([]config.Kept, len(jobs))
	datas := make([][]byte, len(jobs))
	for i, j := range jobs {
		write[i], datas[i] = j.k, j.data
	}
	plan, err := e.plan(p, write, datas, nil, nil)
	for i, j := range jobs {
		for w := range plan.Write {
			if plan.Write[w].Path == j.k.Path {
				plan.Write[w].Revived = jobs[i].revived
			}
		}
	}
	return plan, err
}

// PlanRestoreAll says what RestoreAll(p) would save, write and remove, with
// the same checks and the same refusals; it changes nothing.
func (e *Engine) PlanRestoreAll(p Point) (RestorePlan, error) {
	write, datas, remove, held, err := e.planAll(p)
	if err != nil {
		return RestorePlan{}, err
	}
	return e.plan(p, write, datas, remove, held)
}

// plan compares the disk with what a restore would write and remove, and
// with the recorded head (what saveOnDisk would record first, judgeOnDisk).
func (e *Engine) plan(p Point, write []config.Kept, datas [][]byte, remove []config.Kept, held []Held) (RestorePlan, error) {
	plan := RestorePlan{Point: p.String(), Save: []PlannedSave{}, Write: []PlannedWrite{}, Remove: []string{}, Held: []Held{}}
	plan.Held = append(plan.Held, held...)
	saves, err := e.judgeOnDisk(append(append([]config.Kept{}, write...), remove...))
	if err != nil {
		return plan, err
	}
	plan.Save = append(plan.Save, saves...)
	read, err := e.plannedReader()
	if err != nil {
		return plan, err
	}
	for i, k := range write {
		if f, _ := read(k); !f.Exists || string(f.Content) != string(datas[i]) {
			plan.Write = append(plan.Write, PlannedWrite{Path: k.Path})
		}
	}
	for _, k := range remove {
		if f, _ := read(k); f.Exists {
			plan.Remove = append(plan.Remove, k.Path)
		}
	}
	return plan, nil
}
