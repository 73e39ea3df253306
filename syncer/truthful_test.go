package syncer

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// commitTruthful writes, in the repository at dir, a commit of tree with
// parent (none when ""), whose message has subject and one trailer block
// per path the tree changes from the parent's, as git diff-tree gives them:
// the commit a peer running strata would write for that change.
func commitTruthful(tb testing.TB, dir, tree, parent, subject string) string {
	tb.Helper()
	from := "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree
	if parent != "" {
		from = git(tb, dir, "rev-parse", parent+"^{tree}")
	}
	out := git(tb, dir, "diff-tree", "-r", "-z", "--no-renames", "--name-status", from, tree)
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	f := strings.Split(strings.Trim(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		action := map[string]string{"A": "add", "D": "delete"}[f[i]]
		if action == "" {
			action = "update"
		}
		b.WriteString("Strata-Path: " + trailerPath(f[i+1]) + "\nStrata-Action: " + action + "\nStrata-Class: x\nStrata-Source: record\nStrata-Schema: \n")
	}
	b.WriteString("Strata-Time: 2026-11-22T10:00:00.000000000Z\n")
	args := []string{"commit-tree", tree, "-m", b.String()}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return git(tb, dir, args...)
}

// trailerPath quotes p as strata's trailers do (docs/format.md).
func trailerPath(p string) string {
	q := p == "" || p[0] == '"' || p != strings.TrimSpace(p) || !utf8.ValidString(p)
	for i := 0; i < len(p); i++ {
		q = q || p[i] < 0x20 || p[i] == 0x7f
	}
	if q {
		return strconv.Quote(p)
	}
	return p
}
