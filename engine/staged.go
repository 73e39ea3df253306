package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// StagedFile is one stage-0 entry of a git index.
type StagedFile = gitstore.StagedFile

// OpenIndex opens the repository containing dir as the pre-commit hook
// judges it: the commit being made, whose files are the stage-0 entries of
// the index at indexFile ("" for the work tree's own index) and whose
// parents are HEAD and, while a merge is concluded, the MERGE_HEAD commits
// (HEAD's parents when `git commit --amend` replaces HEAD). Everything a verdict depends on is read from that index, not from the
// work tree or the state ref: .strata.yaml, the user's schema files (and
// the files they $ref), and the Phase Outcomes and resolutions a decision
// resolution is checked against. An index that holds no .strata.yaml (the
// file is untracked: local configuration) leaves the work tree's in force,
// and then a schema file the index does not hold is read from the work
// tree too; a schema file the index's own .strata.yaml names must be in
// the index, as the commit would otherwise fail `strata validate` in a
// clone. The engine reads the index; it never writes it. The repository
// is opened with o (OpenWith).
func OpenIndex(dir, indexFile string, o gitstore.Options) (*Engine, error) {
	return open(dir, &indexView{file: indexFile}, o)
}

// Staged returns the stage-0 entries of the index of an engine opened by
// OpenIndex, path -> entry; nil for any other engine.
func (e *Engine) Staged() map[string]StagedFile {
	if e.index == nil {
		return nil
	}
	return e.index.entries
}

// Parents returns the commits the next commit will have as parents, for an
// engine opened by OpenIndex: HEAD (none before the first commit), then
// each commit of MERGE_HEAD while a merge is concluded; under `git commit
// --amend` (Amend), HEAD's own parents.
func (e *Engine) Parents() []string {
	if e.index == nil {
		return nil
	}
	return e.index.parents
}

// Amend reports whether the commit being made replaces HEAD (`git commit
// --amend`, as gitstore.Amending finds it), for an engine opened by
// OpenIndex.
func (e *Engine) Amend() bool { return e.index != nil && e.index.amend }

// TreeEntries returns the files (path -> blob id) of a commit's tree,
// walking only the directories descend accepts, and which of them are
// symbolic links (by path).
func (e *Engine) TreeEntries(commit string, descend func(dir string) bool) (files map[string]string, links map[string]bool, err error) {
	return e.store.EntriesWhere(commit, descend)
}

// indexView is the commit being made (OpenIndex). It is the state.Files the
// Validator reads the user's schema files from.
type indexView struct {
	file    string // the index file; "" for the work tree's own
	store   *gitstore.Store
	entries map[string]StagedFile
	parents []string
	amend   bool // the commit replaces HEAD (git commit --amend): parents are HEAD's
	// local is set when the index holds no .strata.yaml: the work tree's
	// configuration applies, and schema files the index lacks are read
	// from the work tree.
	local bool
	// held caches committed: whether a parent holds a path.
	held map[string]bool
}

var _ state.Files = (*indexView)(nil)

// read reads the index and the parents of the commit being made.
func (ix *indexView) read(st *gitstore.Store) error {
	ix.store = st
	entries, err := st.Staged(ix.file)
	if err != nil {
		return err
	}
	ix.entries = entries
	merging, err := st.MergeHeads()
	if err != nil {
		return err
	}
	if len(merging) == 0 && gitstore.Amending() {
		// git commit --amend: the commit replaces HEAD, and its
		// parents are HEAD's (none for a root commit)
		parents, err := st.HeadParents()
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return err
		}
		ix.parents, ix.amend = parents, true
		return nil
	}
	if head, err := st.Resolve("HEAD"); err == nil {
		ix.parents = append(ix.parents, head)
	} else if !errors.Is(err, state.ErrNotFound) {
		return err
	}
	ix.parents = append(ix.parents, merging...)
	return nil
}

// notStaged is a file the index does not hold.
type notStaged struct{ rel string }

func (e notStaged) Error() string        { return "not in the index; stage it (git add " + e.rel + ")" }
func (e notStaged) Is(target error) bool { return target == fs.ErrNotExist }

// ReadFile is state.Files.ReadFile over the staged blobs.
func (ix *indexView) ReadFile(rel string, limit int64) ([]byte, error) {
	sf, ok := ix.entries[rel]
	if !ok {
		return nil, notStaged{rel}
	}
	if !sf.Regular {
		return nil, fmt.Errorf("%w (staged as a symbolic link or a submodule)", state.ErrNotRegular)
	}
	data, size, err := ix.store.ReadBlob(sf.Blob, limit)
	if err != nil {
		return nil, StagedReadError(rel, sf.Blob, err)
	}
	if data == nil {
		return nil, fmt.Errorf("staged file is %d bytes, larger than max_size %d: %w", size, limit, state.ErrTooLarge)
	}
	return data, nil
}

// StagedReadError is the error of reading the blob an index entry names
// at rel. A blob the repository does not hold (the index names an object
// that was never written, or was pruned) is said in words and does not
// wrap state.ErrNotFound: the index is broken, an I/O-like trouble (exit
// 3), not a version missing at some point of history (exit 1).
func StagedReadError(rel, blob string, err error) error {
	if errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("read staged %s: object %s is missing from the repository", rel, blob)
	}
	return fmt.Errorf("read staged %s: %w", rel, err)
}

// maxLinks bounds a chain of symbolic links to .strata.yaml in the index.
const maxLinks = 8

// config returns the configuration the index holds, nil (and local set)
// when it holds no .strata.yaml. A .strata.yaml staged as a symbolic link
// is followed, as a checkout of the commit would be (docs/contract.md §2),
// to a file the index holds; a link out of the work tree or into .git is
// not followed.
func (ix *indexView) config(root string) (*config.Config, error) {
	rel := config.FileName
	if _, ok := ix.entries[rel]; !ok {
		ix.local = true
		return nil, nil
	}
	refuse := func(why string) (*config.Config, error) {
		return nil, fmt.Errorf("read staged %s: %s", config.FileName, why)
	}
	for hops := 0; ; hops++ {
		sf, ok := ix.entries[rel]
		switch {
		case !ok:
			return refuse("a symbolic link that does not resolve in the index; not followed")
		case sf.Regular:
			data, err := ix.ReadFile(rel, validate.DefaultMaxSize) // config.Load's bound
			if err != nil {
				return refuse(err.Error())
			}
			return config.Parse(root, data)
		case hops == maxLinks:
			return refuse("too many levels of symbolic links; not followed")
		}
		target, _, err := ix.store.ReadBlob(sf.Blob, 4096)
		if err != nil || target == nil {
			return refuse("a symbolic link that does not resolve in the index; not followed")
		}
		t := string(target)
		if path.IsAbs(t) {
			return refuse("a symbolic link out of the work tree; not followed")
		}
		rel = path.Join(path.Dir(rel), t)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return refuse("a symbolic link out of the work tree; not followed")
		}
		if err := state.CheckPath(rel); errors.Is(err, state.ErrDotGit) {
			return refuse("a symbolic link into the git directory; not followed")
		} else if err != nil {
			return refuse("a symbolic link that does not resolve in the index; not followed")
		}
	}
}

// committed reports whether a parent of the commit being made holds rel:
// a handoff file already committed, which precedes a staged one
// (phase.Before), as a recorded one does in the work tree.
func (ix *indexView) committed(rel string) bool {
	if held, ok := ix.held[rel]; ok {
		return held
	}
	held := false
	for _, p := range ix.parents {
		if _, err := ix.store.BlobID(p, rel); err == nil {
			held = true
			break
		}
	}
	if ix.held == nil {
		ix.held = map[string]bool{}
	}
	ix.held[rel] = held
	return held
}
