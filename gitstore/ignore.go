package gitstore

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Ignores answers git's question "is this path ignored?" for the work tree,
// with git's own rules: core.excludesFile (from the repository's config, the
// global config, or $XDG_CONFIG_HOME/git/ignore by default), .git/info/exclude,
// and every .gitignore from the root down to the file's directory, the deeper
// winning; a file under an ignored directory is ignored whatever a later
// pattern says; and a file git tracks is never ignored. .gitignore files are
// read lazily, once per directory a question reaches, and the index only
// when a path is ignored by pattern, so asking about a few kept files costs
// a few small reads.
type Ignores struct {
	root      string
	gitDir    string
	commonDir string
	mu        sync.Mutex
	base      []gitignore.Pattern  // excludesFile, info/exclude, read with the root's rules
	dirs      map[string]*dirRules // by repo-relative dir ("" = root)
	tracked   map[string]bool      // the index's paths, read on first need
}

// Ignores returns the ignore rules of this work tree. Nothing is read until
// the first question: a command that asks none (`strata show --at`) reads no
// git configuration.
func (s *Store) Ignores() *Ignores {
	return &Ignores{root: s.root, gitDir: s.gitDir, commonDir: s.commonDir, dirs: map[string]*dirRules{}}
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
	if !d.ignored && !d.m.Match(segs, false) {
		return false
	}
	return !ig.isTracked(rel)
}

// dirRules are the patterns that apply inside one directory, and whether
// the directory itself (or one above it) is ignored: git does not descend
// into an ignored directory, so nothing below it is re-included.
type dirRules struct {
	ps      []gitignore.Pattern
	m       gitignore.Matcher
	ignored bool
}

func (ig *Ignores) dir(segs []string) *dirRules {
	key := strings.Join(segs, "/")
	if d, ok := ig.dirs[key]; ok {
		return d
	}
	var d *dirRules
	if len(segs) == 0 {
		ig.base = append(ig.base, readIgnoreFile(excludesFile(ig.commonDir), nil)...)
		ig.base = append(ig.base, readIgnoreFile(filepath.Join(ig.commonDir, "info", "exclude"), nil)...)
		d = &dirRules{ps: ig.base}
	} else {
		parent := ig.dir(segs[:len(segs)-1])
		d = &dirRules{ps: parent.ps, ignored: parent.ignored || parent.m.Match(segs, true)}
	}
	name := filepath.Join(append([]string{ig.root}, append(append([]string{}, segs...), ".gitignore")...)...)
	if own := readIgnoreFile(name, append([]string{}, segs...)); len(own) > 0 {
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
				ig.tracked[p] = true
			}
		}
	}
	return ig.tracked[rel]
}

// readIgnoreFile parses one ignore file; a missing or unreadable one is empty.
func readIgnoreFile(name string, domain []string) []gitignore.Pattern {
	if name == "" {
		return nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// excludesFile finds core.excludesFile as git does: the repository's config
// over the global ones, else $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore).
func excludesFile(commonDir string) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		configs = append(configs, "/etc/gitconfig")
	}
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	configs = append(configs, filepath.Join(commonDir, "config"))
	found := ""
	for _, c := range configs { // later files win, as in git
		data, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		raw := gitconfig.New()
		if gitconfig.NewDecoder(strings.NewReader(string(data))).Decode(raw) != nil {
			continue
		}
		if v := raw.Section("core").Options.Get("excludesfile"); v != "" {
			found = v
		}
	}
	if found == "" && xdg != "" {
		return filepath.Join(xdg, "git", "ignore")
	}
	if rest, ok := strings.CutPrefix(found, "~/"); ok && home != "" {
		found = filepath.Join(home, rest)
	}
	return found
}
