package hooks

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
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
// blobs of the index of eng, an engine opened by engine.OpenIndex (which
// also reads .strata.yaml, schema files and the handoffs a resolution
// names from that index), not the work tree. Only kept paths whose staged
// blob differs from every parent's are checked (the parents are HEAD and,
// while a merge is concluded, each MERGE_HEAD commit; under `git commit
// --amend`, HEAD's own parents), so a file committed
// before strata was installed does not block unrelated commits, and a
// merge taking a branch's version as it is does not judge it again. Each
// is checked as recording would check it: its schema, and the initiative
// status machine, which it must pass from at least one parent's version.
// A Phase Outcome or decision resolution a parent holds may be neither
// changed (its staged blob must equal a parent's) nor deleted; other kept
// files may be deleted. The staged blob of a file git filters (kept
// because a rule names it) is the filter's output, so its content is not
// judged. PreCommit is read-only: it records nothing on strata's refs (the
// watcher or `strata record` does that for the work tree) and never writes
// the index.
func PreCommit(eng *engine.Engine) (Report, error) {
	var rep Report
	staged := eng.Staged()
	if staged == nil {
		return rep, errors.New("pre-commit: no index to check (open the engine with engine.OpenIndex)")
	}
	cfg := eng.Config()
	var parents []map[string]string
	var headLinks map[string]bool // the symbolic links among HEAD's files
	for i, commit := range eng.Parents() {
		files, links, err := eng.TreeEntries(commit, mayHoldKept(cfg))
		if err != nil {
			return rep, fmt.Errorf("read %s: %w", parentName(i, eng.Amend()), err)
		}
		if i == 0 {
			headLinks = links
		}
		parents = append(parents, files)
	}
	// A staged blob HEAD holds is not checked (a file committed before
	// strata came blocks no commit). One only a merged head holds is: the
	// merge brings it into this branch, and git checks nothing a branch
	// brings (a teammate's --no-verify); its history rules pass when they
	// pass from one parent (the version is that parent's own).
	changed := map[string]config.Kept{}
	var badNames []string
	for p, sf := range staged {
		// the same entry, not only the same bytes: a kept file staged
		// again as another kind (a submodule, a symbolic link, a file
		// where HEAD holds a link) with HEAD's blob id is a change
		// (attack34b F1: committed unchecked, every clone got an empty
		// folder or a link in place of the state file; attack34c: a
		// link HEAD holds, staged as a submodule)
		if len(parents) > 0 && parents[0][p] == sf.Blob && (sf.Regular && !headLinks[p] || sf.Link && headLinks[p]) {
			continue
		}
		if k, ok := cfg.Classify(p); ok {
			changed[p] = k
		} else if cfg.BadName(p) {
			badNames = append(badNames, p) // refused as validate refuses it
		}
	}
	sort.Strings(badNames)
	for _, p := range badNames {
		rep.Checked++
		rep.Invalid++
		rep.Problems = append(rep.Problems, engine.BadName(p))
	}
	// A kept path a parent holds and the index does not is deleted (from
	// that parent): checked even when another parent lacks it too, since a
	// committed Phase Outcome or resolution may not go.
	for _, files := range parents {
		for p := range files {
			if _, ok := staged[p]; !ok {
				if k, ok := cfg.Classify(p); ok {
					changed[p] = k
				}
			}
		}
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	for _, p := range paths {
		ps, err := checkStaged(eng, changed[p], staged, parents)
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

// parentName names the i-th parent of the commit being made.
func parentName(i int, amend bool) string {
	switch {
	case amend:
		return "HEAD^" + strconv.Itoa(i+1)
	case i == 0:
		return "HEAD"
	}
	return "MERGE_HEAD"
}

// checkStaged checks one kept path the commit changes against the parents'
// files (HEAD's first).
func checkStaged(eng *engine.Engine, k config.Kept, staged map[string]engine.StagedFile, parents []map[string]string) (state.Problems, error) {
	sf, isStaged := staged[k.Path]
	from := ""    // the first parent holding the path, named for `git restore --source`
	same := false // a parent holds the staged version itself
	for i, files := range parents {
		if blob, ok := files[k.Path]; ok {
			if from == "" {
				from = parentName(i, eng.Amend())
			}
			same = same || (isStaged && blob == sf.Blob)
		}
	}
	noun := "Phase Outcome"
	if k.Class == state.ClassDecisionResolution {
		noun = "decision resolution"
	}
	if !isStaged {
		if from != "" && k.Class.Immutable() {
			return state.Problems{{Path: k.Path, Message: "a committed " + noun + " is append-only and cannot be deleted; put it back with `git restore --staged --worktree --source=" + from + " " + state.ShellWord(k.Path) + "` (or `strata restore " + state.ShellWord(k.Path) + "`)"}}, nil
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
			return nil, engine.StagedReadError(k.Path, sf.Blob, err)
		}
		if data == nil {
			return state.Problems{{Path: k.Path, Message: fmt.Sprintf("staged file is %d bytes, larger than max_size %d", size, cfg.MaxSize)}}, nil
		}
		// prevs are the versions the staged one is judged against: each
		// parent's (nil where it has none); the append-only rule is said
		// below.
		prevs := [][]byte{nil}
		if !k.Class.Immutable() && engine.UsesHistory(k) && len(parents) > 0 {
			prevs = prevs[:0]
			for i, files := range parents {
				var prev []byte
				if blob, ok := files[k.Path]; ok {
					if prev, _, err = eng.ReadBlob(blob); err != nil {
						return nil, fmt.Errorf("read %s at %s: %w", k.Path, parentName(i, eng.Amend()), err)
					}
				}
				prevs = append(prevs, prev)
			}
		}
		// Allowed from one parent is allowed: a merge takes a branch's
		// state, reached from that branch's own history.
		for i, prev := range prevs {
			got := eng.Check(engine.File{Kept: k, Content: data, Exists: true}, prev)
			if i == 0 || !got.Invalid() {
				ps = got
			}
			if !got.Invalid() {
				break
			}
		}
	}
	// else git filters the file (a rule names it exactly): the staged blob
	// is the filter's output (ciphertext, an LFS pointer), not the file;
	// validate and record judge the work tree's version.
	if from != "" && !same && k.Class.Immutable() {
		ps = append(ps, state.Problem{Path: k.Path, Message: "a committed " + noun + " is append-only and cannot change; write a new numbered file instead, or put it back with `git restore --staged --worktree --source=" + from + " " + state.ShellWord(k.Path) + "` (or `strata restore " + state.ShellWord(k.Path) + "`)"})
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
