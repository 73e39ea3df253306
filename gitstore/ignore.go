package gitstore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// Ignores answers git's question "is this path ignored?" for the work tree,
// with git's own rules: core.excludesFile (as readIgnoreSettings finds it,
// else $XDG_CONFIG_HOME/git/ignore), .git/info/exclude,
// and every .gitignore from the root down to the file's directory, the deeper
// winning; a file under an ignored directory is ignored whatever a later
// pattern says; a file git tracks is never ignored; with core.ignorecase
// case does not count. .gitignore files are
// read lazily, once per directory a question reaches, and the index only
// when a path is ignored by pattern, so asking about a few kept files costs
// a few small reads.
type Ignores struct {
	root      string
	gitDir    string
	commonDir string
	settings  func() ignoreSettings // git's configuration for the rules, read once per store (Store.ruleSettings)
	mu        sync.Mutex
	base      ignoreList                      // excludesFile, info/exclude, read with the root's rules
	baseWhy   string                          // why git stops at the excludes file (excludesUnusable), read with base
	dirs      map[string]*dirRules            // by repo-relative dir ("" = root)
	tracked   map[string]bool                 // the index's paths (folded under core.ignorecase), read on first need
	exact     map[string]bool                 // the index's paths as written
	hidden    map[string]string               // the index's paths with a local-changes flag (SkipWorktree, AssumeUnchanged)
	validToo  map[string]bool                 // of the skip-worktree ones, those with the assume-unchanged bit too
	indexNote string                          // why the index was asked of git rather than read in-process ("" when it was not)
	indexLost bool                            // neither the in-process reader nor git could read the index
	headTree  plumbing.Hash                   // HEAD's tree, read on first need (Committed); zero: none
	headTrees map[string]map[string]odb.Entry // HEAD's folders read so far, by repo-relative path ("" = root), by name; nil: not a tree
	headRead  bool
	// fold is core.ignorecase: patterns, paths and the index's paths are
	// compared lowercased, as git compares them case-insensitively.
	fold bool
	// steps is the wildmatch steps this Ignores may still take
	// (ignoreBudget; ignorePattern.wild).
	steps int

	store      *Store     // reads the rule sets of earlier HEADs (IgnoredBefore)
	sets       []*ruleSet // HEAD's and earlier HEADs' .gitignore files, read on first need
	kept       *keptIndex // the sets kept on refs/strata/gitrules, indexed (keptindex.go)
	setsRead   bool
	setsErr    error                   // the earlier rule sets could not be read: untracked files count as ignored by them
	attrs      *Attributes             // this machine's attribute files, read once for every set (FilteredBefore)
	chains     map[string]*setDir      // the rules of each chain of .gitignore files (chainDir)
	attrChains map[string]*Attributes  // the rules of each chain of .gitattributes files (chainAttrs)
	groups     map[string][]chainGroup // the different chains of the sets along a folder's path (chainGroups)
	setChains  int                     // chains of a set found (setChain), for the tests
}

// Ignores returns the ignore rules of this work tree. Nothing is read until
// the first question: a command that asks none (`strata show --at`) reads no
// git configuration.
func (s *Store) Ignores() *Ignores {
	return &Ignores{root: s.root, gitDir: s.gitDir, commonDir: s.commonDir, settings: s.ruleSettings, dirs: map[string]*dirRules{}, store: s, steps: ignoreBudget}
}

// Ignored reports whether git ignores the repo-relative, slash-separated path.
func (ig *Ignores) Ignored(rel string) bool {
	if ig == nil || rel == "" {
		return false
	}
	segs := strings.Split(rel, "/")
	ig.mu.Lock()
	defer ig.mu.Unlock()
	return ig.byPattern(segs) && !ig.isTracked(rel)
}

// Unread says why git's rules cannot be read as git reads them, when they
// cannot and rel is a path git does not track: a core.excludesFile,
// core.attributesFile or include.path value git fails to expand ("~nobody/…",
// an unknown user), or an excludes file git cannot use (a folder:
// excludesUnusable), where git itself refuses to run. Every file git does
// not track is then private; "" otherwise.
func (ig *Ignores) Unread(rel string) string {
	if ig == nil || rel == "" || strings.HasPrefix(rel, "~") {
		return ""
	}
	why := ig.settings().unread
	ig.mu.Lock()
	defer ig.mu.Unlock()
	ig.dir(nil) // core.ignorecase, for isTracked; the excludes file, for baseWhy
	if why == "" {
		why = ig.baseWhy
	}
	if why == "" || ig.isTracked(rel) {
		return ""
	}
	return why
}

// byPattern reports whether the work tree's rules ignore the path segs by
// its patterns (a folder of it ignored, its own pattern, or this machine's
// exclusions), tracked or not. Callers hold ig.mu.
func (ig *Ignores) byPattern(segs []string) bool {
	d := ig.dir(segs[:len(segs)-1])
	return d.ignored || d.ps.excluded(ig.joined(segs), false, ig.fold, &ig.steps) || ig.excludedHere(segs)
}

// excludedHere reports whether the ignore files of this machine alone
// (core.excludesFile and .git/info/exclude, which no clone brings) exclude
// the path or a folder of it. git lets a .gitignore of the repository
// re-include such a file (`!secrets.env`), but a .gitignore may come from
// anyone who can push: for strata the user's own exclusion stands, so the
// file stays private and never goes to the remote (attack19 verify-remote
// N5). Callers hold ig.mu and have read the root's rules (dir).
func (ig *Ignores) excludedHere(segs []string) bool {
	if len(ig.base) == 0 {
		return false
	}
	folded := ig.folded(segs)
	for i := 1; i < len(folded); i++ {
		if ig.base.excluded(strings.Join(folded[:i], "/"), true, ig.fold, &ig.steps) {
			return true
		}
	}
	return ig.base.excluded(strings.Join(folded, "/"), false, ig.fold, &ig.steps)
}

// dirRules are the patterns that apply inside one directory, and whether
// the directory itself (or one above it) is ignored: git does not descend
// into an ignored directory, so nothing below it is re-included.
type dirRules struct {
	ps      ignoreList
	ignored bool
	blob    plumbing.Hash // the blob of the folder's own .gitignore, zero when it has none (IgnoredBefore)
}

func (ig *Ignores) dir(segs []string) *dirRules {
	key := strings.Join(segs, "/")
	if d, ok := ig.dirs[key]; ok {
		return d
	}
	var d *dirRules
	if len(segs) == 0 {
		set := ig.settings()
		ig.fold = set.ignoreCase
		excludes := excludesFile(set.excludesFile, ig.root)
		ig.baseWhy = excludesUnusable(excludes, set.excludesFile)
		ig.base = append(ig.base, ig.readIgnoreFile(excludes)...)
		ig.base = append(ig.base, ig.readIgnoreFile(filepath.Join(ig.commonDir, "info", "exclude"))...)
		d = &dirRules{ps: ig.base}
	} else {
		parent := ig.dir(segs[:len(segs)-1])
		d = &dirRules{ps: parent.ps, ignored: parent.ignored || parent.ps.excluded(ig.joined(segs), true, ig.fold, &ig.steps)}
	}
	name := filepath.Join(append([]string{ig.root}, append(append([]string{}, segs...), ".gitignore")...)...)
	raw, ok := readRuleFileRaw(name)
	if ok {
		d.blob = plumbing.ComputeHash(plumbing.BlobObject, raw)
	}
	if own := parseIgnoreLines(strings.TrimPrefix(string(raw), "\ufeff"), strings.Join(segs, "/"), ig.fold); len(own) > 0 {
		d.ps = append(append(ignoreList{}, d.ps...), own...)
	}
	ig.dirs[key] = d
	return d
}

func (ig *Ignores) isTracked(rel string) bool {
	ig.readIndex()
	if ig.fold {
		rel = asciiLower(rel)
	}
	return ig.tracked[rel]
}

// Tracked reports whether git tracks the repo-relative path rel: the index
// holds it as written, case included, as `git ls-files -- rel` answers
// (Store.CheckTracked). An index that cannot be read tracks nothing. The
// index is read once per Ignores, with the ignore rules (a watcher's
// engine reads both again for each batch).
func (ig *Ignores) Tracked(rel string) bool {
	if ig == nil || rel == "" {
		return false
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	return ig.isTrackedExact(rel)
}

// Hidden is the local-changes flag of the index entry of the tracked path
// rel (SkipWorktree, AssumeUnchanged), "" when it has none: git was told
// never to look at its version in the work tree, so never to publish it.
//
// In a sparse checkout (core.sparseCheckout true and
// sparse.expectFilesOutsideOfPatterns false) git clears the skip-worktree
// bit of every entry whose file is in the work tree (any lstat answer) as
// it reads the index, and writes that back only when a command writes the
// index (git 2.39's clear_skip_worktree_from_present_files): a file the user
// writes outside the cone is `H` in `git ls-files -v`, tracked, its changes
// seen. Hidden answers the same, asked when the question comes: the bit as
// the index file holds it made such a file private until some git command
// happened to rewrite the index (attack31b D). Outside a sparse checkout a
// bit set by `git update-index --skip-worktree` stands, file present or not.
func (ig *Ignores) Hidden(rel string) string {
	if ig == nil || rel == "" {
		return ""
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	ig.readIndex()
	h := ig.hidden[rel]
	if h == SkipWorktree && ig.root != "" && ig.settings != nil && ig.settings().presentNotSkipped {
		if _, err := os.Lstat(filepath.Join(ig.root, filepath.FromSlash(rel))); err == nil {
			if ig.validToo[rel] {
				return AssumeUnchanged
			}
			return ""
		}
	}
	return h
}

// IndexNote says why the index was not read in-process but asked of git
// (a split index, a sparse index...), or that neither could read it; ""
// when the in-process reader read it whole. read is false when no reader
// could: then no file counts as tracked. doctor shows it.
func (ig *Ignores) IndexNote() (note string, read bool) {
	if ig == nil {
		return "", true
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	ig.readIndex()
	return ig.indexNote, !ig.indexLost
}

// isTrackedExact reports whether the index holds rel as written, case
// included: under core.ignorecase a tracked PROD.ENV made an ignored
// prod.env count as tracked where git itself, on a file system that tells
// case apart, still ignores it (attack20-ignore F5).
// Committed reports whether HEAD's commit holds the repo-relative path rel
// as a file (as written, case included): git shares a file once a commit
// holds it, while a file only staged may be unstaged a moment later. HEAD
// is read once per Ignores, as the index is, and each of its folders on
// the paths asked is read once; an unborn HEAD (no commit yet) or one that
// cannot be read holds nothing.
func (ig *Ignores) Committed(rel string) bool {
	if ig == nil || ig.store == nil || rel == "" {
		return false
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	if !ig.headRead {
		ig.headRead, ig.headTrees = true, map[string]map[string]odb.Entry{}
		if c, err := ig.store.resolve("HEAD"); err == nil {
			ig.store.mu.Lock()
			ig.headTree, _ = ig.store.commitTree(c)
			ig.store.mu.Unlock()
		}
	}
	if ig.headTree.IsZero() {
		return false
	}
	segs := strings.Split(rel, "/")
	cur := ig.headTree
	for i, name := range segs {
		dir := strings.Join(segs[:i], "/")
		names, seen := ig.headTrees[dir]
		if !seen {
			// each folder parsed once into a map: a status of 1 000
			// files in one folder asked 1 000 times of its 1 000 entries
			ig.store.mu.Lock()
			t, data, err := ig.store.readObject(cur)
			ig.store.mu.Unlock()
			if err == nil && t == plumbing.TreeObject {
				if entries, err := odb.DecodeTree(data); err == nil {
					names = make(map[string]odb.Entry, len(entries))
					for _, e := range entries {
						names[e.Name] = e
					}
				}
			}
			ig.headTrees[dir] = names
		}
		e, ok := names[name]
		if !ok {
			return false
		}
		if i == len(segs)-1 {
			return notAFile(e) == nil
		}
		if !e.IsDir() {
			return false
		}
		cur = e.Hash
	}
	return false
}

func (ig *Ignores) isTrackedExact(rel string) bool {
	ig.readIndex()
	return ig.exact[rel]
}

// readIndex reads the index's paths and flags once (tracked, exact,
// hidden). An index the in-process reader cannot read whole — a split
// index, whose entries mostly live in a shared file, a sparse index, an
// extension or a version it does not know — is asked of git itself, one
// `git ls-files -v -z`: guessing "not tracked" there called committed
// files private and stopped recording their edits (attack26 F2).
func (ig *Ignores) readIndex() {
	if ig.tracked != nil {
		return
	}
	ig.tracked, ig.exact, ig.hidden, ig.validToo = map[string]bool{}, map[string]bool{}, map[string]string{}, map[string]bool{}
	entries, err := readIndexEntries(filepath.Join(ig.gitDir, "index"))
	var partial *errIndexPartial
	if errors.As(err, &partial) && ig.root != "" {
		ig.indexNote = partial.why
		if entries, err = lsFilesIndex(context.Background(), ig.root); err != nil {
			ig.indexNote, ig.indexLost = partial.why+", and git could not list it ("+err.Error()+")", true
		}
	} else if err != nil {
		ig.indexNote, ig.indexLost = err.Error(), true
	}
	for p, e := range entries {
		ig.exact[p] = true
		if e.hidden != "" {
			ig.hidden[p] = e.hidden
		}
		if e.hidden == SkipWorktree && e.valid {
			ig.validToo[p] = true
		}
		if ig.fold {
			p = asciiLower(p)
		}
		ig.tracked[p] = true
	}
}

// folded returns segs as the patterns are matched against them: a
// lowercased copy under core.ignorecase, else a copy.
func (ig *Ignores) folded(segs []string) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		if ig.fold {
			s = asciiLower(s)
		}
		out[i] = s
	}
	return out
}

// readIgnoreFile parses one ignore file of this machine's (its patterns
// apply from the root); a missing or unreadable one is empty.
func (ig *Ignores) readIgnoreFile(name string) ignoreList {
	if name == "" {
		return nil
	}
	return parseIgnoreLines(readRuleFile(name), "", ig.fold)
}

// joined is the repo-relative path of segs as the patterns are matched
// against it (folded under core.ignorecase).
func (ig *Ignores) joined(segs []string) string {
	return strings.Join(ig.folded(segs), "/")
}

// ruleFileMax is the largest ignore or attributes file read, as git's
// (100 MB); a larger one is skipped whole.
const ruleFileMax = 100 << 20

// readRuleFile reads a .gitignore or .gitattributes (or another file of
// git's rules) as git does: only a regular file — a FIFO or a device would
// block or never end — up to ruleFileMax, without the UTF-8 byte order
// mark an editor may have put first (git skips it, and a pattern starting
// with it would match nothing). Any failure reads as an empty file.
func readRuleFile(name string) string {
	data, _ := readRuleFileRaw(name)
	return strings.TrimPrefix(string(data), "\ufeff")
}

// readRuleFileRaw is readRuleFile's bytes as they are on disk; ok is false
// when there is no such file to read.
func readRuleFileRaw(name string) (data []byte, ok bool) {
	f, err := openRegular(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > ruleFileMax {
		return nil, false
	}
	data, err = io.ReadAll(io.LimitReader(f, ruleFileMax+1))
	if err != nil || len(data) > ruleFileMax {
		return nil, false
	}
	return data, true
}

// xdgGitFile is git's default for a file of its user configuration:
// $XDG_CONFIG_HOME/git/NAME, else ~/.config/git/NAME ("" with no home).
func xdgGitFile(name string) string {
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		xdg = filepath.Join(home, ".config")
	}
	return filepath.Join(xdg, "git", name)
}

// excludesUnusable says why git stops at the excludes file name (the value
// of core.excludesFile it comes from, "" for git's default): a folder, which
// git opens, then fails to read ("fatal: cannot use NAME as an exclude
// file"; attack31b E: strata took it for no rules and recorded every file,
// the one the user meant to exclude included). "" when git reads it or
// skips it: missing, or one it may not open (git warns, and goes on
// without it), or a folder whose size the file system gives as 0 (git
// reads that as an empty file). Never opened unless a folder: a FIFO
// would block.
func excludesUnusable(name, value string) string {
	if name == "" {
		return ""
	}
	fi, err := os.Stat(name)
	if err != nil || !fi.IsDir() || fi.Size() == 0 {
		return ""
	}
	f, err := os.Open(name) // git asks access(R_OK) first
	if err != nil {
		return ""
	}
	f.Close()
	what := "core.excludesFile " + state.TermSafe(value)
	if value == "" {
		what = "git's default excludes file " + state.TermSafe(name)
	} else if value != name {
		what += " (" + state.TermSafe(name) + ")"
	}
	return what + ": a folder, which git cannot use as an exclude file"
}

// excludesFile is the ignore file core.excludesFile (found, as read by
// readIgnoreSettings) names, relative to the work tree as git reads it; when
// unset, $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore).
func excludesFile(found, root string) string {
	if found == "" {
		return xdgGitFile("ignore")
	}
	if !filepath.IsAbs(found) {
		found = filepath.Join(root, found)
	}
	return found
}
