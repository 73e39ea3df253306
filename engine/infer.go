package engine

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// Example is one version of a file, an input to `strata schema infer`.
type Example struct {
	Path     string
	Commit   string // the commit it was recorded in; "" for the work tree's version
	Rejected bool   // quarantined on the rejected ref
	Format   string // the rule's format: key, "" for the file's extension
	Content  []byte
}

// Examples returns every distinct version of the files matching any of the
// globs (path.Match syntax per segment, repository-relative): the work
// tree's, every version on the state ref and every quarantined one on the
// rejected ref (a file that fails the built-in schema it does not follow is
// kept there). Private files (git-ignored, *.local.json) are never read
// unless a rule keeps them; files no rule keeps are read from the work tree
// only. Versions are returned by path, then newest first; a version equal
// to one already returned for the same path is left out. A bad glob is a
// *PathError.
func (e *Engine) Examples(globs []string) ([]Example, error) {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" || strings.HasPrefix(g, "/") || strings.Contains("/"+g+"/", "/../") {
			return nil, &PathError{Path: g, Reason: "not a repository-relative glob"}
		}
	}
	match := func(p string) bool {
		for _, g := range globs {
			if ok, _ := path.Match(g, p); ok {
				return true
			}
		}
		return false
	}
	seen := map[string]map[string]bool{}
	var out []Example
	add := func(x Example) {
		if seen[x.Path] == nil {
			seen[x.Path] = map[string]bool{}
		}
		if seen[x.Path][string(x.Content)] {
			return
		}
		seen[x.Path][string(x.Content)] = true
		out = append(out, x)
	}
	for _, p := range e.diskMatches(globs) {
		k, kept := e.cfg.Classify(p)
		if !kept {
			if e.cfg.Private(p) != "" || config.Transient(path.Base(p)) {
				continue
			}
			k = config.Kept{Path: p}
		}
		f, prob := e.Read(k)
		if prob != nil {
			return nil, prob
		}
		if f.Exists {
			add(Example{Path: p, Format: k.Format, Content: f.Content})
		}
	}
	for _, rejected := range []bool{false, true} {
		log := e.Log
		if rejected {
			log = e.RejectedLog
		}
		entries, err := log(state.LogQuery{})
		if err != nil {
			return nil, err
		}
		for _, ent := range entries {
			if ent.Action == state.ActionDelete || !match(ent.Path) || OutsideTree(ent.Path) {
				continue
			}
			k, ok := e.cfg.Classify(ent.Path)
			if !ok {
				continue // no longer kept: ignored or private now
			}
			data, err := e.FileAt(ent.Commit, ent.Path)
			if err != nil {
				return nil, fmt.Errorf("read %s at %s: %w", ent.Path, ent.Commit, err)
			}
			add(Example{Path: ent.Path, Commit: ent.Commit, Rejected: rejected, Format: k.Format, Content: data})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// diskMatches lists the regular files of the work tree matching the globs,
// repository-relative, never inside .git.
func (e *Engine) diskMatches(globs []string) []string {
	var out []string
	for _, g := range globs {
		names, _ := filepath.Glob(filepath.Join(e.cfg.Root, filepath.FromSlash(g)))
		for _, n := range names {
			rel, err := filepath.Rel(e.cfg.Root, n)
			if err != nil {
				continue
			}
			rel = filepath.ToSlash(rel)
			if first, _, _ := strings.Cut(rel, "/"); strings.EqualFold(first, ".git") {
				continue
			}
			if st, err := os.Lstat(n); err != nil || !st.Mode().IsRegular() {
				continue
			}
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
