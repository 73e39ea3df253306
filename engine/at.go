package engine

import (
	"errors"
	"path"
	"sort"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// Snapshot is the kept state as one commit of history recorded it: what
// `strata at` reads instead of the disk. It never reads the work tree.
type Snapshot struct {
	Commit string    // the commit read
	Time   time.Time // the moment asked for; zero for a revision
	e      *Engine
	files  map[string]string // path → blob id
	// over holds the versions Read found over max_size (never read), by
	// path: at names each in one line instead of its content.
	over map[string]*TooLargeError
}

// SnapshotAt reads the whole kept state at a point. A point before anything
// was recorded is an error wrapping state.ErrNotFound.
func (e *Engine) SnapshotAt(p Point) (*Snapshot, error) {
	c, err := e.Commit(p)
	if err != nil {
		return nil, err
	}
	files, err := e.store.Files(c)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Commit: c, Time: p.At, e: e, files: files}, nil
}

// Paths lists the kept paths the snapshot holds, sorted.
func (s *Snapshot) Paths() []string {
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		if _, ok := s.e.cfg.Classify(p); ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Read returns a kept path's recorded bytes; ok is false when the snapshot
// does not hold it or it is not a kept path under the current
// configuration, and when its version is over max_size (not read: see
// NotRead).
func (s *Snapshot) Read(p string) ([]byte, bool) {
	if OutsideTree(p) {
		return s.readHome(p)
	}
	if _, had := s.files[p]; !had {
		return nil, false
	}
	if _, ok := s.e.cfg.Classify(p); !ok {
		return nil, false
	}
	data, err := s.e.readAt(s.Commit, p)
	s.noteOver(p, err)
	if err != nil {
		return nil, false
	}
	return data, true
}

// noteOver remembers that p's version is over max_size when err says so.
func (s *Snapshot) noteOver(p string, err error) {
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		return
	}
	if s.over == nil {
		s.over = map[string]*TooLargeError{}
	}
	s.over[p] = tl
}

// NotRead is the refusal of p's version over max_size, when Read met one
// (nil otherwise): `PATH: recorded version is N bytes, larger than
// max_size M; not read`.
func (s *Snapshot) NotRead(p string) error {
	if tl, ok := s.over[p]; ok {
		return tl
	}
	return nil
}

// AllNotRead lists the refusals of every version Read found over max_size,
// sorted by path.
func (s *Snapshot) AllNotRead() []error {
	paths := make([]string, 0, len(s.over))
	for p := range s.over {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := make([]error, len(paths))
	for i, p := range paths {
		out[i] = s.over[p]
	}
	return out
}

// PhaseFiles reads every recorded phase-output file as a tier of its
// session, as Engine.PhaseFiles reads them from disk.
func (s *Snapshot) PhaseFiles() []phase.TierFile {
	var out []phase.TierFile
	for _, p := range s.Paths() {
		k, _ := s.e.cfg.Classify(p)
		if k.Class != state.ClassPhaseOutput {
			continue
		}
		data, ok := s.Read(p)
		if !ok {
			continue
		}
		ps := s.e.v.Validate(k.Path, data, k.Schema)
		doc, _ := validate.DecodeJSON(k.Path, data)
		if k.Schema == string(state.ClassPhaseOutput) {
			out = append(out, phase.NewTierFile(p, doc, !ps.Invalid()))
		} else {
			out = append(out, phase.NewForeignTierFile(p, doc, !ps.Invalid()))
		}
	}
	return out
}

// Folders reads every recorded feature folder of Phase Outcomes and
// resolutions, as Engine.Folder reads one; files failing their schema are
// left out.
func (s *Snapshot) Folders() []phase.Folder {
	byDir := map[string][]config.Kept{}
	var dirs []string
	for _, p := range s.Paths() {
		k, _ := s.e.cfg.Classify(p)
		if !isHandoff(k.Class) {
			continue
		}
		d := path.Dir(p)
		if _, seen := byDir[d]; !seen {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], k)
	}
	out := make([]phase.Folder, 0, len(dirs))
	for _, dir := range dirs {
		f := phase.Folder{Dir: dir, Feature: path.Base(dir)}
		for _, k := range byDir[dir] {
			if n := phase.Number(k.Path); n >= 0 {
				f.Numbers = append(f.Numbers, n)
			}
			data, ok := s.Read(k.Path)
			if !ok || s.e.v.Validate(k.Path, data, k.Schema).Invalid() {
				continue
			}
			doc, ps := validate.DecodeYAML(k.Path, data)
			if ps.Invalid() {
				continue
			}
			if k.Class == state.ClassPhaseOutcome {
				f.Outcomes = append(f.Outcomes, phase.ParseOutcome(k.Path, doc))
			} else {
				r := phase.ParseResolution(k.Path, doc)
				r.Recorded = true
				f.Resolutions = append(f.Resolutions, r)
			}
		}
		f.Sort()
		out = append(out, f)
	}
	return out
}

// readHome reads Claude Code's auto-memory file as its home ref recorded it
// at the snapshot's time (home.go). A snapshot of a revision has no moment
// on the home ref, so it does not hold the file.
func (s *Snapshot) readHome(p string) ([]byte, bool) {
	if s.Time.IsZero() {
		return nil, false
	}
	if _, ok := s.e.homeKept(config.Kept{Path: p}); !ok {
		return nil, false
	}
	h, err := s.e.homeView()
	if err != nil {
		return nil, false
	}
	c, err := h.Commit(Point{At: s.Time})
	if err != nil {
		return nil, false
	}
	data, err := h.readAt(c, HomeName)
	s.noteOver(p, err)
	if err != nil {
		return nil, false
	}
	return data, true
}

// LastChanges returns, for each of paths, the entry of the commit that
// recorded the snapshot's version of it, looking at most 500 commits back
// (a path unchanged for longer has no entry: callers treat it as unknown).
func (s *Snapshot) LastChanges(paths []string) map[string]state.Entry {
	out, err := s.e.store.LastChanges(s.Commit, paths, 500)
	if err != nil {
		return map[string]state.Entry{}
	}
	return out
}
