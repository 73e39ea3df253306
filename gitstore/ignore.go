package gitstore

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
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
	base      []gitignore.Pattern  // excludesFile, info/exclude, read with the root's rules
	baseM     gitignore.Matcher    // base alone (excludedHere)
	dirs      map[string]*dirRules // by repo-relative dir ("" = root)
	tracked   map[string]bool      // the index's paths, read on first need
	// fold is core.ignorecase: patterns, paths and the index's paths are
	// compared lowercased, as git compares them case-insensitively.
	fold bool

	store    *Store     // reads the rule sets of earlier HEADs (IgnoredBefore)
	sets     []*ruleSet // HEAD's and earlier HEADs' .gitignore files, read on first need
	setsRead bool
	setsErr  error // the earlier rule sets could not be read: untracked files count as ignored by them
}

// Ignores returns the ignore rules of this work tree. Nothing is read until
// the first question: a command that asks none (`strata show --at`) reads no
// git configuration.
func (s *Store) Ignores() *Ignores {
	return &Ignores{root: s.root, gitDir: s.gitDir, commonDir: s.commonDir, settings: s.ruleSettings, dirs: map[string]*dirRules{}, store: s}
}

// Ignored reports whether git ignores the repo-relative, slash-separated path.
func (ig *Ignores) Ignored(rel string) bool {
	if ig == nil || rel == "" {
		return false
	}
	segs := strings.Split(rel, "/")
	ig.mu.Lock()
	defer ig.mu.Unlock()
	d := ig.dir(segs[:len(segs)-1])
	if !d.ignored && !d.m.Match(ig.folded(segs), false) && !ig.excludedHere(segs) {
		return false
	}
	return !ig.isTracked(rel)
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
	if ig.baseM == nil {
		ig.baseM = gitignore.NewMatcher(ig.base)
	}
	folded := ig.folded(segs)
	for i := 1; i < len(folded); i++ {
		if ig.baseM.Match(folded[:i], true) {
			return true
		}
	}
	return ig.baseM.Match(folded, false)
}

// dirRules are the patterns that apply inside one directory, and whether
// the directory itself (or one above it) is ignored: git does not descend
// into an ignored directory, so nothing below it is re-included.
type dirRules struct {
	ps      []gitignore.Pattern
	m       gitignore.Matcher
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
		ig.base = append(ig.base, ig.readIgnoreFile(excludesFile(set.excludesFile, ig.root), nil)...)
		ig.base = append(ig.base, ig.readIgnoreFile(filepath.Join(ig.commonDir, "info", "exclude"), nil)...)
		d = &dirRules{ps: ig.base}
	} else {
		parent := ig.dir(segs[:len(segs)-1])
		d = &dirRules{ps: parent.ps, ignored: parent.ignored || parent.m.Match(ig.folded(segs), true)}
	}
	name := filepath.Join(append([]string{ig.root}, append(append([]string{}, segs...), ".gitignore")...)...)
	raw, ok := readRuleFileRaw(name)
	if ok {
		d.blob = plumbing.ComputeHash(plumbing.BlobObject, raw)
	}
	if own := ig.parseRules(strings.TrimPrefix(string(raw), "\ufeff"), ig.folded(segs)); len(own) > 0 {
		d.ps = append(append([]gitignore.Pattern{}, d.ps...), own...)
	}
	d.m = gitignore.NewMatcher(d.ps)
	ig.dirs[key] = d
	return d
}

func (ig *Ignores) isTracked(rel string) bool {
	if ig.tracked == nil {
		ig.tracked = map[string]bool{}
		s := &Store{gitDir: ig.gitDir}
		if files, err := s.Staged(""); err == nil {
			for p := range files {
				if ig.fold {
					p = strings.ToLower(p)
				}
				ig.tracked[p] = true
			}
		}
	}
	if ig.fold {
		rel = strings.ToLower(rel)
	}
	return ig.tracked[rel]
}

// folded returns segs as the patterns are matched against them: a
// lowercased copy under core.ignorecase, else a copy.
func (ig *Ignores) folded(segs []string) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		if ig.fold {
			s = strings.ToLower(s)
		}
		out[i] = s
	}
	return out
}

// readIgnoreFile parses one ignore file; a missing or unreadable one is
// empty. Under core.ignorecase its patterns are lowercased (domain already
// is, see folded).
func (ig *Ignores) readIgnoreFile(name string, domain []string) []gitignore.Pattern {
	if name == "" {
		return nil
	}
	return ig.parseRules(readRuleFile(name), domain)
}

// parseRules parses the text of one ignore file whose patterns apply in
// the folder domain.
func (ig *Ignores) parseRules(data string, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for rest := data; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if ig.fold {
			line = strings.ToLower(line)
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
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
	f, err := os.Open(name)
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
