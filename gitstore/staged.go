package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/strata-dev/strata/state"
)

// StagedFile is one entry of the index at stage 0: what the next commit
// will hold at its path.
type StagedFile struct {
	Blob    string // the blob id
	Regular bool   // a regular file (mode 100644 or 100755), not a symbolic link or a submodule
	Link    bool   // a symbolic link (mode 120000)
}

// Staged returns the stage-0 entries of an index file, path -> entry.
// indexFile is the file git names in GIT_INDEX_FILE while it runs a hook
// (`git commit -a` and `git commit PATH` use a temporary index); "" means
// this work tree's own index. Entries in conflict (stages 1-3) and
// intent-to-add entries are left out: git commits neither. A missing index
// (a new repository before the first `git add`) is empty. Staged only reads
// the file; it never writes or locks the index.
func (s *Store) Staged(indexFile string) (map[string]StagedFile, error) {
	if indexFile == "" {
		indexFile = s.IndexFile()
	}
	f, err := openRegular(indexFile)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]StagedFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(bufio.NewReader(f)).Decode(&idx); err != nil {
		// a split or a sparse index (an extension go-git does not read):
		// git lists it; without git, the error as it was
		if out, gerr := s.lsFilesStaged(indexFile); gerr == nil {
			return out, nil
		}
		return nil, fmt.Errorf("read index %s: %s", indexFile, err)
	}
	out := make(map[string]StagedFile, len(idx.Entries))
	for _, e := range idx.Entries {
		if e.Stage != 0 || e.IntentToAdd { // stage 0 is merged (go-git's index.Merged constant is 1)
			continue
		}
		out[e.Name] = StagedFile{
			Blob:    e.Hash.String(),
			Regular: e.Mode == filemode.Regular || e.Mode == filemode.Executable || e.Mode == filemode.Deprecated,
			Link:    e.Mode == filemode.Symlink,
		}
	}
	return out, nil
}

// lsFilesStaged is Staged asking git (`git ls-files -s -z` with
// GIT_INDEX_FILE), for an index go-git cannot decode: a split index or a
// sparse one (attack26 recheck: every commit of a split-index repository
// was refused by the pre-commit hook, "unknown extension"). git lists an
// intent-to-add entry as the empty blob at stage 0, so such a file is
// checked as empty there; the in-process reader leaves it out.
func (s *Store) lsFilesStaged(indexFile string) (map[string]StagedFile, error) {
	abs, err := filepath.Abs(indexFile)
	if err != nil {
		return nil, err
	}
	raw, err := s.gitRaw(context.Background(), append(os.Environ(), "GIT_INDEX_FILE="+abs), "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	out := map[string]StagedFile{}
	for _, rec := range strings.Split(string(raw), "\x00") {
		meta, name, ok := strings.Cut(rec, "\t") // MODE OBJECT STAGE<TAB>PATH
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[2] != "0" {
			continue
		}
		out[name] = StagedFile{Blob: f[1], Regular: f[0] == "100644" || f[0] == "100755" || f[0] == "100664", Link: f[0] == "120000"}
	}
	return out, nil
}

// ReadBlob returns the content of blob id when it is at most limit bytes
// long, and its size either way (data is nil when size > limit). The size
// is learnt from the object's header: a larger blob is not read. It returns
// an error wrapping state.ErrNotFound when the object does not exist or is
// not a blob.
func (s *Store) ReadBlob(id string, limit int64) (data []byte, size int64, err error) {
	data, err = s.ReadBlobLimit(id, limit)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return nil, tl.Size, nil
	}
	return data, int64(len(data)), err
}

// FilesWhere is Files restricted to the directories descend accepts: it
// returns every file of commit's snapshot, path -> blob id, but enters a
// directory (given as its slash-separated path, "" for the root) only when
// descend returns true for it, so a caller that knows where its files can
// live does not read the trees of a large repository's other directories.
// It returns an error wrapping state.ErrNotFound when commit does not exist.
func (s *Store) FilesWhere(commit string, descend func(dir string) bool) (map[string]string, error) {
	files, _, err := s.EntriesWhere(commit, descend)
	return files, err
}

// EntriesWhere is FilesWhere that also says which of the files are
// symbolic links (links, by path): what a commit holds at a path is the
// blob and the kind of entry (attack34b F1, attack34c: a kept file staged
// again as another kind with the same blob id was taken for unchanged).
func (s *Store) EntriesWhere(commit string, descend func(dir string) bool) (map[string]string, map[string]bool, error) {
	c, err := s.resolve(commit)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tree, err := s.commitTree(c)
	if err != nil {
		return nil, nil, fmt.Errorf("files: %w", err)
	}
	out := make(map[string]string)
	links := map[string]bool{}
	if err := s.walkFiles(tree, descend, func(p string, e treeEntry) {
		out[p] = e.Hash.String()
		if e.Mode == filemode.Symlink {
			links[p] = true
		}
	}); err != nil {
		return nil, nil, fmt.Errorf("files: %w", inCommit(err, "", c))
	}
	return out, links, nil
}

// MergeHeads returns the commits of MERGE_HEAD, in its order: the other
// parents of the commit that concludes a merge in progress (several for an
// octopus merge). It is empty when no merge is in progress. MERGE_HEAD
// lives in the work tree's own git directory (a linked worktree's, not the
// common one).
//
// `git merge` runs the pre-merge-commit hook before it writes MERGE_HEAD;
// it names the heads it merges in the environment instead, one
// GITHEAD_<commit id> variable each (its labels for merge messages), with
// GIT_REFLOG_ACTION "merge ..." (or "pull ..." under git pull). Without
// MERGE_HEAD, those are the heads.
func (s *Store) MergeHeads() ([]string, error) {
	data, err := state.ReadRegular(filepath.Join(s.gitDir, "MERGE_HEAD"), 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return envMergeHeads(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MERGE_HEAD: %w", err)
	}
	var out []string
	for _, line := range strings.Fields(string(data)) {
		if !plumbing.IsHash(line) {
			return nil, fmt.Errorf("read MERGE_HEAD: %q is not a commit id", line)
		}
		out = append(out, line)
	}
	return out, nil
}

// envMergeHeads are the heads `git merge` names in the environment of its
// pre-merge-commit hook (MergeHeads), sorted; none outside a merge.
func envMergeHeads() []string {
	if a := os.Getenv("GIT_REFLOG_ACTION"); !strings.HasPrefix(a, "merge") && !strings.HasPrefix(a, "pull") {
		return nil // `git pull` merges with GIT_REFLOG_ACTION "pull ..."
	}
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if id, ok := strings.CutPrefix(k, "GITHEAD_"); ok && plumbing.IsHash(id) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
