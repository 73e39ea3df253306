package hooks

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// Report is the outcome of the pre-commit check.
type Report struct {
	Checked  int            // kept files the commit adds, changes or deletes
	Invalid  int            // of those, how many have errors
	Problems state.Problems // errors and warnings, by path
}

// PreCommit checks what the next commit would do to kept files: the staged
// blobs of the index at indexFile ("" for the work tree's index), not the
// work tree. Only kept paths whose staged blob differs from HEAD's are
// checked, so a file committed before strata was installed does not block
// unrelated commits. Each is checked as recording would check it (schema,
// and the initiative status machine against HEAD's version), and a Phase
// Outcome or decision resolution present in HEAD may be neither changed nor
// deleted; other kept files may be deleted. The staged blob of a file git
// filters (kept because a rule names it) is the filter's output, so its
// content is not judged. PreCommit is read-only: it records nothing on
// strata's refs (the watcher or `strata record` does that for the work
// tree) and never writes the index.
func PreCommit(eng *engine.Engine, indexFile string) (Report, error) {
	var rep Report
	staged, err := eng.Staged(indexFile)
	if err != nil {
		return rep, err
	}
	head := map[string]string{}
	if commit, err := eng.ResolveRev("HEAD"); err == nil {
		if head, err = eng.TreeFiles(commit, mayHoldKept(eng.Config())); err != nil {
			return rep, fmt.Errorf("read HEAD: %w", err)
		}
	} else if !errors.Is(err, state.ErrNotFound) {
		return rep, err
	}

	changed := map[string]config.Kept{}
	var badNames []string
	for p, sf := range staged {
		if k, ok := eng.Config().Classify(p); ok && head[p] != sf.Blob {
			changed[p] = k
		} else if !ok && head[p] != sf.Blob && eng.Config().BadName(p) {
			badNames = append(badNames, p) // refused as validate refuses it
		}
	}
	sort.Strings(badNames)
	for _, p := range badNames {
		rep.Checked++
		rep.Invalid++
		rep.Problems = append(rep.Problems, engine.BadName(p))
	}
	for p := range head {
		if _, ok := staged[p]; !ok {
			if k, ok := eng.Config().Classify(p); ok {
				changed[p] = k
			}
		}
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	for _, p := range paths {
		ps, err := checkStaged(eng, changed[p], staged, head)
		if err != nil {
			return rep, err
		}
		rep.Checked++
		if ps.Invalid() {
			rep.Invalid++
		}
		rep.Problems = append(rep.Problems, ps...)
	}
	return rep, nil
}

// checkStaged checks one kept path the commit changes.
func checkStaged(eng *engine.Engine, k config.Kept, staged map[string]engine.StagedFile, head map[string]string) (state.Problems, error) {
	sf, isStaged := staged[k.Path]
	headBlob, inHead := head[k.Path]
	noun := "Phase Outcome"
	if k.Class == state.ClassDecisionResolution {
		noun = "decision resolution"
	}
	if !isStaged {
		if inHead && k.Class.Immutable() {
			return state.Problems{{Path: k.Path, Message: "a committed " + noun + " is append-only and cannot be deleted; put it back with `git restore --staged --worktree --source=HEAD " + k.Path + "` (or `strata restore " + k.Path + "`)"}}, nil
		}
		return nil, nil // deleting any other kept file is fine
	}
	if !sf.Regular {
		return state.Problems{{Path: k.Path, Message: "is staged as a symbolic link or a submodule, not a regular file; strata keeps regular files only"}}, nil
	}
	var ps state.Problems
	if cfg := eng.Config(); cfg.Filter == nil || cfg.Filter(k.Path) == "" {
		data, size, err := eng.ReadBlob(sf.Blob)
		if err != nil {
			return nil, fmt.Errorf("read staged %s: %w", k.Path, err)
		}
		if data == nil {
			return state.Problems{{Path: k.Path, Message: fmt.Sprintf("staged file is %d bytes, larger than max_size %d", size, cfg.MaxSize)}}, nil
		}
		var prev []byte
		if inHead && !k.Class.Immutable() && engine.UsesHistory(k) { // append-only is said below
			if prev, _, err = eng.ReadBlob(headBlob); err != nil {
				return nil, fmt.Errorf("read %s at HEAD: %w", k.Path, err)
			}
		}
		ps = eng.Check(engine.File{Kept: k, Content: data, Exists: true}, prev)
	}
	// else git filters the file (a rule names it exactly): the staged blob
	// is the filter's output (ciphertext, an LFS pointer), not the file;
	// validate and record judge the work tree's version.
	if inHead && k.Class.Immutable() {
		ps = append(ps, state.Problem{Path: k.Path, Message: "a committed " + noun + " is append-only and cannot change; write a new numbered file instead, or put it back with `git restore --staged --worktree --source=HEAD " + k.Path + "` (or `strata restore " + k.Path + "`)"})
	}
	return ps, nil
}

// mayHoldKept answers, for a directory of HEAD's tree, whether a kept path
// could lie below it, so the walk of HEAD skips the rest of the repository.
// Rule globs match per path segment ("*" never crosses "/"), so a directory
// can hold a kept file only when its segments match a glob's leading ones.
func mayHoldKept(cfg *config.Config) func(dir string) bool {
	var globs [][]string
	for _, r := range cfg.Rules {
		if !r.Ignore {
			globs = append(globs, strings.Split(r.Glob, "/"))
		}
	}
	for _, p := range []string{cfg.L2(), cfg.Graph} {
		if p != "" && !strings.HasPrefix(p, "~/") {
			globs = append(globs, strings.Split(p, "/"))
		}
	}
	return func(dir string) bool {
		if dir == "" {
			return true
		}
		segs := strings.Split(dir, "/")
	next:
		for _, g := range globs {
			if len(g) <= len(segs) {
				continue
			}
			for i, s := range segs {
				if ok, _ := path.Match(g[i], s); !ok {
					continue next
				}
			}
			return true
		}
		return false
	}
}
