package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// isHandoff reports whether a class is a Phase Outcome or a resolution.
func isHandoff(c state.Class) bool {
	return c == state.ClassPhaseOutcome || c == state.ClassDecisionResolution
}

// handoff is one append-only file as strata sees it: the recorded version
// when there is one (a recorded Phase Outcome or resolution cannot change,
// so an edit on disk does not count), else the file on disk.
type handoff struct {
	config.Kept
	Content  []byte
	Recorded bool
	// Unreadable is why a file on disk that is not recorded could not be
	// read (a symbolic link, a named pipe, a directory, out of the work
	// tree): it may hide a decision, so a reader that gates on the folder
	// counts it as invalid. Nil when the file was read or is absent.
	Unreadable *state.Problem
}

// snapshot is the state ref's head and its files, read once per operation;
// or, in an engine opened by OpenIndex, the commit being made: then the
// handoffs are the index's, and those its parents hold count as recorded.
type snapshot struct {
	head  string
	files map[string]string
	ix    *indexView
}

func (e *Engine) snapshot() (snapshot, error) {
	if e.index != nil {
		return snapshot{ix: e.index}, nil
	}
	head, files, err := e.recorded()
	return snapshot{head: head, files: files}, err
}

// recorded reports whether a handoff is recorded (committed, in the index
// view): such a one precedes the others (phase.Before).
func (s snapshot) recorded(rel string) bool {
	if s.ix != nil {
		return s.ix.committed(rel)
	}
	_, ok := s.files[rel]
	return ok
}

// readHandoff returns a handoff file's content, recorded version first; ok
// is false when it is neither recorded nor a readable regular file on disk
// (then h.Unreadable says why, when something unreadable is there).
// In the index view it is the staged blob, and ok is false when the index
// holds no regular file within max_size there; a recorded version over
// max_size is not read either.
func (e *Engine) readHandoff(s snapshot, k config.Kept) (handoff, bool, error) {
	h := handoff{Kept: k}
	if s.ix != nil {
		data, err := s.ix.ReadFile(k.Path, e.cfg.MaxSize)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, state.ErrNotRegular), errors.Is(err, state.ErrTooLarge):
			return h, false, nil
		case err != nil:
			return h, false, err
		}
		h.Content, h.Recorded = data, s.ix.committed(k.Path)
		return h, true, nil
	}
	if _, had := s.files[k.Path]; had {
		data, err := e.readAt(s.head, k.Path)
		if errors.Is(err, state.ErrTooLarge) {
			return h, false, nil // over max_size: never a valid version, as in the index
		}
		if err != nil {
			return h, false, fmt.Errorf("read recorded %s: %w", k.Path, err)
		}
		h.Content, h.Recorded = data, true
		return h, true, nil
	}
	f, p := e.Read(k)
	if p != nil || !f.Exists {
		h.Unreadable = p
		return h, false, nil
	}
	h.Content = f.Content
	return h, true, nil
}

// handoffPaths lists the handoff files of one folder (repo-relative), on
// disk or recorded (in the index view: staged), sorted.
func (e *Engine) handoffPaths(s snapshot, dir string) []config.Kept {
	seen := map[string]bool{}
	var out []config.Kept
	add := func(rel string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		if k, ok := e.cfg.Classify(rel); ok && isHandoff(k.Class) {
			out = append(out, k)
		}
	}
	if s.ix != nil { // the index's, not the work tree's
		for p := range s.ix.entries {
			if path.Dir(p) == dir {
				add(p)
			}
		}
	} else if ents, err := os.ReadDir(e.cfg.Abs(dir)); err == nil {
		for _, d := range ents {
			add(path.Join(dir, d.Name()))
		}
	}
	for p := range s.files {
		if path.Dir(p) == dir {
			add(p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Folder reads one feature folder of Phase Outcomes and resolutions (dir is
// repo-relative). A file that fails its schema, or a resolution that breaks
// a cross-file rule as validate checks it (its choice is not an option of
// the decision, the decision is already resolved by another file: two
// machines resolved it differently and sync kept both), is left out of
// the folder and its problems returned; its number still counts for
// NextNumber. So is a file on disk that cannot be read (a symbolic link, a
// named pipe, a directory at a handoff's name): it may hide a decision.
func (e *Engine) Folder(dir string) (phase.Folder, state.Problems, error) {
	s, err := e.snapshot()
	if err != nil {
		return phase.Folder{}, nil, err
	}
	f, problems, err := e.folder(s, dir)
	if err != nil {
		return f, problems, err
	}
	valid := make([]phase.Resolution, 0, len(f.Resolutions))
	for _, r := range f.Resolutions {
		k, _ := e.cfg.Classify(r.Path)
		h, found, err := e.readHandoff(s, k)
		if err != nil {
			return f, problems, err
		}
		if found {
			if ps := e.checkResolution(File{Kept: k, Content: h.Content, Exists: true}); ps.Invalid() {
				problems = append(problems, ps...)
				continue
			}
		}
		valid = append(valid, r)
	}
	f.Resolutions = valid
	return f, problems, nil
}

func (e *Engine) folder(s snapshot, dir string) (phase.Folder, state.Problems, error) {
	f := phase.Folder{Dir: dir, Feature: path.Base(dir)}
	var problems state.Problems
	for _, k := range e.handoffPaths(s, dir) {
		if n := phase.Number(k.Path); n >= 0 {
			f.Numbers = append(f.Numbers, n)
		}
		h, ok, err := e.readHandoff(s, k)
		if err != nil {
			return f, problems, err
		}
		if !ok {
			if h.Unreadable != nil {
				problems = append(problems, *h.Unreadable)
			}
			continue
		}
		if ps := e.v.Validate(k.Path, h.Content, k.Schema); ps.Invalid() {
			problems = append(problems, ps...)
			continue
		}
		doc, ps := validate.DecodeYAML(k.Path, h.Content)
		if ps.Invalid() { // a custom schema may accept what is not YAML
			problems = append(problems, ps...)
			continue
		}
		if k.Class == state.ClassPhaseOutcome {
			f.Outcomes = append(f.Outcomes, phase.ParseOutcome(k.Path, doc))
		} else {
			r := phase.ParseResolution(k.Path, doc)
			r.Recorded = h.Recorded
			f.Resolutions = append(f.Resolutions, r)
		}
	}
	f.Sort()
	return f, problems, nil
}

// FolderDirs lists every folder holding a Phase Outcome or a resolution,
// on disk or recorded, or a directory at such a file's name, sorted.
func (e *Engine) FolderDirs() ([]string, error) {
	all, err := e.AllPaths()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range all {
		if dir := path.Dir(k.Path); isHandoff(k.Class) && !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	// A directory at a handoff's name is no handoff, but the folder is read
	// (Folder reports it unreadable): a decision may hide there.
	for _, d := range e.cfg.KeptNameDirs() {
		k, ok := e.cfg.Classify(d)
		if dir := path.Dir(d); ok && isHandoff(k.Class) && !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	sort.Strings(out)
	return out, nil
}

// FeatureDir finds the folder of a feature: the one folder of handoffs
// named feature. It returns an error wrapping state.ErrNotFound, listing
// the known features, when there is none.
func (e *Engine) FeatureDir(feature string) (string, error) {
	dirs, err := e.FolderDirs()
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if path.Base(d) == feature || d == strings.TrimSuffix(feature, "/") {
			return d, nil
		}
		names = append(names, path.Base(d))
	}
	known := "none yet"
	if len(names) > 0 {
		known = strings.Join(names, ", ")
	}
	return "", fmt.Errorf("feature %q has no Phase Outcomes (features: %s): %w", feature, known, state.ErrNotFound)
}

// checkResolution applies the cross-file rules of a decision resolution
// (docs/contract.md §3): its choice is one of the options of the decision in the Phase
// Outcome it names, and a decision is resolved once — a resolution of a
// decision that another resolution (recorded, or earlier in the folder)
// already resolves is rejected and names the first. f must be schema-valid.
func (e *Engine) checkResolution(f File) state.Problems {
	doc, ps := validate.DecodeYAML(f.Path, f.Content)
	if ps.Invalid() {
		return ps
	}
	s, err := e.snapshot()
	if err != nil {
		return state.Problems{{Path: f.Path, Message: "cannot read the recorded state: " + err.Error()}}
	}
	r := phase.ParseResolution(f.Path, doc)
	r.Recorded = s.recorded(f.Path)
	target := phase.OutcomePath(f.Path, r.Outcome)

	var outcome *phase.Outcome
	missing := ""
	k, ok := e.cfg.Classify(target)
	switch {
	case !ok || k.Class != state.ClassPhaseOutcome:
		missing = fmt.Sprintf("%q is not a Phase Outcome file", r.Outcome)
	default:
		h, found, err := e.readHandoff(s, k)
		switch {
		case err != nil:
			missing = "cannot read " + target + ": " + err.Error()
		case !found:
			missing = "Phase Outcome " + target + " does not exist"
		case e.v.Validate(k.Path, h.Content, k.Schema).Invalid():
			missing = "Phase Outcome " + target + " is invalid; run strata validate " + target
		default:
			od, _ := validate.DecodeYAML(k.Path, h.Content)
			o := phase.ParseOutcome(k.Path, od)
			outcome = &o
		}
	}
	var others []phase.Resolution
	dirs := []string{path.Dir(f.Path)}
	if d := path.Dir(target); d != dirs[0] {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		fo, _, err := e.folder(s, dir)
		if err != nil {
			return state.Problems{{Path: f.Path, Message: "cannot read " + dir + ": " + err.Error()}}
		}
		others = append(others, fo.Resolutions...)
	}
	var out state.Problems
	for _, p := range phase.CheckResolution(r, outcome, missing, others) {
		out = append(out, validate.ProblemAt(f.Path, f.Content, true, p.Pointer, p.Message))
	}
	return out
}

// Decision asks to resolve one pending decision of a feature.
type Decision struct {
	Feature string
	ID      string
	Choice  string
	By      string
	Note    string
}

// Decided is a resolution written and recorded by Decide.
type Decided struct {
	Path     string
	Decision phase.Decision
	Entry    *state.Entry // nil if recording found nothing to do
}

// Decide writes the next numbered resolution file of a feature folder and
// records it with source record. Everything is checked before anything is
// written: a feature or decision that does not exist is an error wrapping
// state.ErrNotFound (listing what exists); a choice outside the decision's
// options, an already resolved decision, or a resolution failing its schema
// is returned as state.Problems. When several Phase Outcomes of the folder
// hold a pending decision with this id, the latest one is resolved. The
// resolution file is created only where none has appeared since the folder
// was read (Put based on no file): when one has (another decide, an agent),
// the folder is read again and it all starts over, so the decision gets the
// next free number, or, now resolved, is refused naming that resolution
// (Retry; a *ChangedError after EditTries).
func (e *Engine) Decide(d Decision) (Decided, error) {
	var res Decided
	err := Retry(func() error {
		var err error
		res, err = e.decide(d)
		return err
	})
	return res, err
}

// decide is one attempt of Decide.
func (e *Engine) decide(d Decision) (Decided, error) {
	var res Decided
	dir, err := e.FeatureDir(d.Feature)
	if err != nil {
		return res, err
	}
	s, err := e.snapshot()
	if err != nil {
		return res, err
	}
	folder, _, err := e.folder(s, dir)
	if err != nil {
		return res, err
	}
	cands := folder.Decisions(d.ID)
	if len(cands) == 0 {
		known := "none"
		if ids := folder.IDs(); len(ids) > 0 {
			known = strings.Join(ids, ", ")
		}
		return res, fmt.Errorf("decision %s is not in feature %s (its decisions: %s): %w", d.ID, folder.Feature, known, state.ErrNotFound)
	}
	var target *phase.Decision
	for i := len(cands) - 1; i >= 0 && target == nil; i-- {
		if _, done := folder.ResolutionOf(cands[i]); !done {
			target = &cands[i]
		}
	}
	if target == nil {
		first, _ := folder.ResolutionOf(cands[len(cands)-1])
		h, _, _ := e.readHandoff(s, config.Kept{Path: first.Path, Class: state.ClassDecisionResolution})
		return res, state.Problems{validate.ProblemAt(first.Path, h.Content, true, "/resolves",
			fmt.Sprintf("decision %s is already resolved here (choice %q); a decision is resolved once", d.ID, first.Choice))}
	}
	res.Decision = *target
	if !contains(target.Options, d.Choice) {
		h, _, _ := e.readHandoff(s, config.Kept{Path: target.Outcome, Class: state.ClassPhaseOutcome})
		ptr := fmt.Sprintf("/pending_decisions/%d/options", target.Index)
		return res, state.Problems{validate.ProblemAt(target.Outcome, h.Content, true, ptr,
			fmt.Sprintf("%q is not an option of %s; choose one of %s", d.Choice, d.ID, phase.Quoted(target.Options)))}
	}
	r := phase.Resolution{Resolves: d.ID, Outcome: target.Outcome, Choice: d.Choice, By: d.By,
		At: e.Now().Format(time.RFC3339), Note: d.Note}
	rel, err := e.unusedResolutionName(dir, folder.NextNumber(), d.ID)
	if err != nil {
		return res, err
	}
	k, ok := e.cfg.Classify(rel)
	if !ok || k.Class != state.ClassDecisionResolution {
		return res, fmt.Errorf("%s would not be kept as a decision resolution; check .strata.yaml", rel)
	}
	content := r.YAML()
	if doc, ps := validate.DecodeYAML(rel, content); ps.Invalid() || roundTrip(phase.ParseResolution(rel, doc)) != roundTrip(r) {
		return res, fmt.Errorf("%s: the resolution does not encode as YAML faithfully (a bug)", rel)
	}
	if _, err := os.Lstat(e.cfg.Abs(rel)); !errors.Is(err, os.ErrNotExist) {
		return res, &ChangedError{Path: rel} // created since the folder was read: read it again
	}
	o, err := e.Put(k, "", content, state.SourceRecord)
	if o.Written {
		res.Path = rel
	}
	if err != nil {
		return res, err
	}
	if o.Invalid() {
		return res, o.Problems
	}
	res.Entry = o.Entry
	return res, nil
}

// unusedResolutionName is the resolution file of decision id numbered n in
// dir, or the next number whose name was never recorded: a resolution a
// restore --all removed stays recorded, and the append-only rule refuses
// other bytes at its name (lastVersion), so decide does not take it. In an
// engine opened by OpenIndex the state ref is not consulted.
func (e *Engine) unusedResolutionName(dir string, n int, id string) (string, error) {
	for {
		rel := path.Join(dir, phase.ResolutionName(n, id))
		if e.index != nil {
			return rel, nil // the first name: no history to ask
		}
		prev, err := e.lastExisting(rel)
		if err != nil || prev == nil {
			return rel, err
		}
		n++
	}
}

func roundTrip(r phase.Resolution) [6]string {
	return [6]string{r.Resolves, r.Outcome, r.Choice, r.By, r.At, r.Note}
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// PhaseFiles reads every phase-output file on disk as a tier of its session
// folder. Files failing their schema are included as invalid tiers and
// their problems returned.
func (e *Engine) PhaseFiles() ([]phase.TierFile, state.Problems, error) {
	paths, err := e.cfg.Scan()
	if err != nil {
		return nil, nil, fmt.Errorf("scan: %w", err)
	}
	var out []phase.TierFile
	var problems state.Problems
	for _, p := range paths {
		k, ok := e.cfg.Classify(p)
		if !ok || k.Class != state.ClassPhaseOutput {
			continue
		}
		f, rp := e.Read(k)
		if rp != nil {
			problems = append(problems, *rp)
			out = append(out, phase.NewTierFile(p, nil, false))
			continue
		}
		if !f.Exists {
			continue
		}
		ps := e.v.Validate(k.Path, f.Content, k.Schema)
		problems = append(problems, ps...)
		doc, _ := validate.DecodeJSON(k.Path, f.Content)
		if k.Schema == string(state.ClassPhaseOutput) {
			out = append(out, phase.NewTierFile(p, doc, !ps.Invalid()))
		} else { // a shape of the user's own: valid means done (issue 9.3)
			out = append(out, phase.NewForeignTierFile(p, doc, !ps.Invalid()))
		}
	}
	return out, problems, nil
}
