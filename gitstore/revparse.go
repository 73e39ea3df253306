package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// revParse resolves the revisions Resolve accepts, as git rev-parse does for
// them: a full hash; a ref by git's rules (the name itself, refs/NAME,
// refs/tags/NAME, refs/heads/NAME, refs/remotes/NAME, refs/remotes/NAME/HEAD),
// which wins over an abbreviated hash of 4 or more digits naming one object;
// then any run of ~N, ^N (N = 0, 1 or 2 parents' rank) and ^{} / ^{commit}.
// Annotated tags are peeled to their commit. It is strata's own so that the
// binary does not link go-git's repository package and its transports (ssh,
// http, openpgp), which cost every start-up. Callers hold s.mu.
func (s *Store) revParse(rev string) (plumbing.Hash, error) {
	base, rest := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		base, rest = rev[:i], rev[i:]
	}
	var h plumbing.Hash
	var err error
	switch {
	case reflogRev(base):
		h, err = s.gitRevParse(base) // a reflog entry, an upstream; ~N and ^N are read here
	case base == "" || strings.ContainsAny(base, ":@{} \t\n") && base != "@":
		return plumbing.ZeroHash, errRevSyntax
	case base == "@":
		h, err = s.revBase("HEAD")
	default:
		h, err = s.revBase(base)
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// an object a ref or a parent names that the store lacks is damage, not
	// an unknown revision; one whose full id was given may simply not be here
	named := !plumbing.IsHash(base)
	damage := func(err error) error {
		var m *missingObject
		switch {
		case named:
			return missingErr(err)
		case errors.As(err, &m):
			return fmt.Errorf("no such commit: %w", state.ErrNotFound) // as resolve says of a bare id
		}
		return err
	}
	if h, err = s.peel(h); err != nil {
		return plumbing.ZeroHash, damage(err)
	}
	for rest != "" {
		op := rest[0]
		rest = rest[1:]
		if op != '~' && op != '^' { // "HEAD~1x", "HEAD^!": not a revision of ours, never a guess
			return plumbing.ZeroHash, errRevSyntax
		}
		if op == '^' && strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 || (rest[1:end] != "" && rest[1:end] != "commit") {
				return plumbing.ZeroHash, errRevSyntax
			}
			rest = rest[end+1:]
			continue
		}
		n := 1
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 {
			if n, err = strconv.Atoi(rest[:j]); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("unknown revision: %w", state.ErrNotFound)
			}
			rest = rest[j:]
		}
		steps, rank := n, 0 // ~N: N first parents; ^N: the N-th parent
		if op == '^' {
			steps, rank = min(n, 1), n-1
		}
		for ; steps > 0; steps-- {
			ci, err := s.readCommit(h)
			if err != nil {
				return plumbing.ZeroHash, damage(err)
			}
			if rank >= len(ci.parents) {
				return plumbing.ZeroHash, fmt.Errorf("no such parent: %w", state.ErrNotFound)
			}
			h = ci.parents[rank]
			named = true
		}
	}
	if _, err := s.commitTree(h); err != nil {
		return plumbing.ZeroHash, damage(err)
	}
	return h, nil
}

// revBase resolves the part of a revision before its ~ and ^ suffixes.
func (s *Store) revBase(base string) (plumbing.Hash, error) {
	if plumbing.IsHash(base) {
		return plumbing.NewHash(base), nil
	}
	for _, rule := range []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"} {
		name := fmt.Sprintf(rule, base)
		if !strings.HasPrefix(name, "refs/") && name != "HEAD" && name != "FETCH_HEAD" && name != "ORIG_HEAD" && name != "MERGE_HEAD" {
			continue
		}
		h, err := s.readRef(name)
		if err == nil {
			return h, nil
		}
		if !errors.Is(err, state.ErrNotFound) {
			return plumbing.ZeroHash, err
		}
	}
	if len(base) >= 4 {
		hs, err := s.objects.Prefix(strings.ToLower(base))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch len(hs) {
		case 1:
			return hs[0], nil
		case 0:
		default:
			return plumbing.ZeroHash, fmt.Errorf("short hash %s is ambiguous: %w", base, state.ErrNotFound)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("unknown revision (not a commit id, a branch, a tag or HEAD): %w", state.ErrNotFound)
}

// peel follows annotated tags to the object they name.
func (s *Store) peel(h plumbing.Hash) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		t, raw, err := s.readObject(h)
		if err != nil || t != plumbing.TagObject {
			return h, err
		}
		line, _, _ := bytes.Cut(raw, []byte("\n"))
		target, ok := bytes.CutPrefix(line, []byte("object "))
		if !ok || !plumbing.IsHash(string(target)) {
			return plumbing.ZeroHash, fmt.Errorf("tag %s: malformed", h)
		}
		h = plumbing.NewHash(string(target))
	}
	return plumbing.ZeroHash, fmt.Errorf("tag %s: chain too long", h)
}

// errRevSyntax refuses a revision of a shape strata neither reads nor
// gives to git, saying which it takes.
var errRevSyntax = fmt.Errorf("unsupported revision syntax (a commit id, a ref, HEAD, with ~N or ^N; HEAD@{1}, stash@{0}, main@{upstream}): %w", state.ErrNotFound)

// reflogRev reports whether base is the one shape of "@{...}" revision
// given to git: a ref name (or nothing, for the current branch) holding no
// space, colon, "@", brace, "~" or "^", then one "@{...}" holding no space,
// colon or brace, ending base. Anything after it must be ~N or ^N, which
// revParse reads itself: git would read "HEAD@{1}:path" or "HEAD@{1} HEAD"
// as a date it does not know, "now", and answer HEAD's commit without a
// word. (Read by hand, not by a regular expression: every command resolves
// a revision, and compiling one cost each process more than the match.)
func reflogRev(base string) bool {
	const space = " \t\n\f\r" // what \s matches
	at := strings.IndexByte(base, '@')
	if at < 0 || !strings.HasPrefix(base[at:], "@{") || !strings.HasSuffix(base, "}") || len(base)-at < 4 {
		return false
	}
	name, inner := base[:at], base[at+2:len(base)-1]
	return !strings.ContainsAny(name, space+":{}~^") && !strings.ContainsAny(inner, space+":{}")
}

// gitRevParse asks the git binary for the forms strata does not read
// itself: a reflog entry (HEAD@{1}, stash@{0}, main@{2.days.ago}) or an
// upstream (main@{u}). git only reads
// here; --end-of-options keeps a revision that starts with "-" a revision.
func (s *Store) gitRevParse(rev string) (plumbing.Hash, error) {
	if strings.ContainsAny(rev, "\x00\n") {
		return plumbing.ZeroHash, errRevSyntax
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := s.git(ctx, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || !plumbing.IsHash(strings.TrimSpace(out)) {
		return plumbing.ZeroHash, fmt.Errorf("no such commit (git rev-parse found none): %w", state.ErrNotFound)
	}
	return plumbing.NewHash(strings.TrimSpace(out)), nil
}
