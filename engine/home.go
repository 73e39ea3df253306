package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// The home file. Claude Code's auto-memory file lives under the home
// directory (~/.claude/projects/<key>/memory/MEMORY.md). It is the user's
// own, not the repository's, so it is never recorded on the state ref, which
// sync publishes. It has a history of its own on the home ref
// (refs/strata/home/state, gitstore.OpenHome), local to this machine, whose
// tree holds it under the safe name HomeName: no tree entry and no
// Strata-Path trailer there ever starts with "~", holds ".." or names the
// user's home directory. Every history operation (record, log, show, diff,
// restore, status) maps the kept "~/..." path to HomeName on the way in and
// back on the way out, through a home view: an Engine over the home ref
// whose root is the auto-memory project directory, so its relative path
// HomeName is the file on disk.

// HomeName is the auto-memory file's name in the home ref's tree and
// trailers, relative to ~/.claude/projects/<key>.
const HomeName = "memory/MEMORY.md"

// homeKept maps a kept "~/..." path to the home view's path. Only the
// auto-memory file has a home history; another file outside the work tree
// (a graph named by $MEMORY_FILE_PATH) is read and written but not recorded.
func (e *Engine) homeKept(k config.Kept) (config.Kept, bool) {
	if !OutsideTree(k.Path) || k.Path != e.cfg.AutoMemory() || e.cfg.Home == "" {
		return k, false
	}
	k.Path = HomeName
	return k, true
}

// homeView opens (once) the home view of the repository.
func (e *Engine) homeView() (*Engine, error) {
	if e.home != nil {
		return e.home, nil
	}
	st, err := gitstore.OpenHome(e.cfg.Root, e.opts)
	if err != nil {
		return nil, err
	}
	cfg := e.cfg.HomeView(filepath.Dir(filepath.Dir(e.cfg.Abs(e.cfg.AutoMemory()))), HomeName)
	e.home = &Engine{cfg: cfg, store: st, opts: e.opts, v: e.v, Now: func() time.Time { return e.Now() }, display: e.cfg.AutoMemory()}
	return e.home, nil
}

// shown is the name a path of this engine is shown under: the kept
// "~/..." path for the home view's HomeName.
func (e *Engine) shown(p string) string {
	if e.display != "" && p == HomeName {
		return e.display
	}
	return p
}

// HomeRef is the local ref the auto-memory file is recorded on.
func (e *Engine) HomeRef() string {
	h, err := e.homeView()
	if err != nil {
		return "refs/strata/home/state"
	}
	return h.StateRef()
}

// RejectedRefOf is the ref a quarantined version was kept on: the home
// rejected ref for the auto-memory file, the rejected ref otherwise.
func (e *Engine) RejectedRefOf(ent *state.Entry) string {
	if ent != nil && ent.Home {
		if h, err := e.homeView(); err == nil {
			return h.RejectedRef()
		}
	}
	return e.RejectedRef()
}

// SavedNote is the line a write prints when it recorded first the
// unrecorded version it replaced (o.Saved): "saved the unrecorded PATH
// first (ID)"; for an invalid version, on the rejected ref, the ref and
// the command that prints those bytes, which no restore writes back (an
// invalid version is never restored), and when an earlier record had
// kept it there already, that it was found there; "" when there was none.
func (e *Engine) SavedNote(o Outcome) string {
	if o.Saved == nil {
		return ""
	}
	path, id := state.ShownPath(o.Path), state.ShortID(o.Saved.Commit)
	if !o.SavedRejected {
		return fmt.Sprintf("saved the unrecorded %s first (%s)", path, id)
	}
	show := "strata show " + state.ShellWord(o.Path) + " --rev " + id
	if o.Saved.Action == state.ActionDelete && o.savedEarlier {
		return fmt.Sprintf("the unrecorded deletion of %s, invalid, is kept on %s (%s)", path, e.RejectedRefOf(o.Saved), id)
	}
	if o.Saved.Action == state.ActionDelete {
		return fmt.Sprintf("saved the unrecorded deletion of %s first (%s on %s, invalid)", path, id, e.RejectedRefOf(o.Saved))
	}
	if o.savedEarlier {
		return fmt.Sprintf("replaced the invalid unrecorded %s, kept on %s (%s): %s prints it", path, e.RejectedRefOf(o.Saved), id, show)
	}
	return fmt.Sprintf("saved the unrecorded %s first (%s on %s, invalid): %s prints it", path, id, e.RejectedRefOf(o.Saved), show)
}

// fromHome turns a home view's outcome back into the kept path's.
func fromHome(o Outcome, path string) Outcome {
	o.Path = path
	for _, ent := range []*state.Entry{o.Entry, o.Rejected, o.Saved} {
		if ent != nil {
			ent.Path, ent.Home = path, true
		}
	}
	o.Problems = homeProblems(o.Problems, path)
	return o
}

func homeProblems(ps state.Problems, path string) state.Problems {
	for i := range ps {
		if ps[i].Path == HomeName {
			ps[i].Path = path
		}
	}
	return ps
}

// recordHome records the home file on the home ref; its content is
// wrote's when wrote has the path (record: the bytes the watcher judged
// whole, never read again).
func (e *Engine) recordHome(k config.Kept, src state.Source, wrote map[string][]byte) (Outcome, error) {
	hk, ok := e.homeKept(k)
	if !ok {
		return Outcome{Path: k.Path}, nil
	}
	h, err := e.homeView()
	if err != nil {
		return Outcome{Path: k.Path}, err
	}
	var read map[string][]byte
	if data, ok := wrote[k.Path]; ok {
		read = map[string][]byte{hk.Path: data}
	}
	outs, err := h.RecordRead([]config.Kept{hk}, src, read) // completes a home sync cut short first
	if len(outs) == 0 {
		return Outcome{Path: k.Path}, err
	}
	return fromHome(outs[0], k.Path), err
}

// homeLog lists the home ref's entries (the rejected one's when rejected)
// for q, with the kept path and marked Home.
func (e *Engine) homeLog(q state.LogQuery, rejected bool) ([]state.Entry, error) {
	if e.display != "" || e.cfg.Home == "" {
		return nil, nil
	}
	h, err := e.homeView()
	if err != nil {
		return nil, err
	}
	ref := h.store.StateRef()
	if rejected {
		ref = h.store.RejectedRef()
	}
	// the auto-memory file only: another path in a home history came from
	// a remote's (dropped by the sync that took it, gitstore.DropForeign),
	// never from this machine, and shown here it would read as a file of
	// this home recorded
	q.Path = HomeName
	ents, err := h.store.Log(ref, q)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	for i := range ents {
		ents[i].Path = h.shown(ents[i].Path)
		ents[i].Home = true
	}
	return ents, err
}

// withHome merges the home ref's entries into a log of the state ref,
// newest first (the state ref's first at equal times), within q.Limit.
func (e *Engine) withHome(ents []state.Entry, q state.LogQuery, rejected bool) ([]state.Entry, error) {
	home, err := e.homeLog(q, rejected)
	if err != nil || len(home) == 0 {
		return ents, err
	}
	out := append(ents, home...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// splitHome separates the home file from the work tree's kept paths.
func (e *Engine) splitHome(paths []config.Kept) (home, tree []config.Kept) {
	for _, k := range paths {
		if hk, ok := e.homeKept(k); ok {
			home = append(home, hk)
		} else {
			tree = append(tree, k)
		}
	}
	return home, tree
}

// restoreHome restores the home file (home, already mapped) from the home
// ref and the work tree's paths from the state ref. Every version is
// checked before anything is written.
func (e *Engine) restoreHome(home, tree []config.Kept, p Point) ([]Outcome, error) {
	h, err := e.homeView()
	if err != nil {
		return nil, err
	}
	c, err := h.Commit(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.cfg.AutoMemory(), err)
	}
	for _, k := range home {
		if _, err := h.restorable(k, c, p); err != nil {
			return nil, err
		}
		if err := h.savable(k); err != nil {
			return nil, err
		}
	}
	var outs []Outcome
	if len(tree) > 0 {
		if outs, err = e.Restore(tree, p); err != nil {
			return outs, err
		}
	}
	houts, err := h.Restore(home, p)
	for _, o := range houts {
		outs = append(outs, fromHome(o, h.shown(o.Path)))
	}
	return outs, err
}

// homeStatus is the home file's status against the home ref.
func (e *Engine) homeStatus(k config.Kept) (FileStatus, bool, error) {
	hk, ok := e.homeKept(k)
	if !ok {
		return FileStatus{}, false, nil
	}
	h, err := e.homeView()
	if err != nil {
		return FileStatus{}, false, err
	}
	head, files, err := h.recorded()
	if err != nil {
		return FileStatus{}, false, err
	}
	var last map[string]time.Time
	if head != "" {
		if last, err = h.lastTimes([]config.Kept{hk}); err != nil {
			return FileStatus{}, false, err
		}
	}
	s, show := h.fileStatus(hk, head, files, last, false)
	s.Path = k.Path
	s.Problems = homeProblems(s.Problems, k.Path)
	return s, show, nil
}

// homeAllPaths is the home view's one kept file.
func (e *Engine) homeAllPaths() []config.Kept {
	if k, ok := e.cfg.Classify(HomeName); ok {
		return []config.Kept{k}
	}
	return nil
}

// HomeView is the engine over the home ref, for `sync --home`: its paths
// are the home ref's tree names (HomeName), its StateRef the home ref, and a
// sync with it fetches and pushes the remote's refs/strata/home/state. It
// returns an error wrapping state.ErrNotFound when the home directory is
// unknown.
func (e *Engine) HomeView() (*Engine, error) {
	if e.cfg.Home == "" {
		return nil, fmt.Errorf("home directory unknown: %w", state.ErrNotFound)
	}
	return e.homeView()
}

// Shown is the name a path of this engine is shown under (the "~/..." path
// of the auto-memory file in the home view).
func (e *Engine) Shown(p string) string { return e.shown(p) }

// DropForeign records, on the home view's ref, the deletion of every path
// but HomeName its head holds (gitstore.Store.DropForeign), at the engine's
// time, and returns them: a home history holds the auto-memory file only,
// and a strata before this one took a remote's other paths into it.
func (e *Engine) DropForeign() ([]string, error) {
	return e.store.DropForeign(e.Now())
}
