package odb

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCommitFaultAsGitFsck writes commit objects of many shapes with
// `git hash-object --literally` and compares CommitFault with what
// git fsck --strict (a fetch's and a push's check) says of each: the same
// message id, or nothing from either.
func TestCommitFaultAsGitFsck(t *testing.T) {
	const tree = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	const parent = "parent 1111111111111111111111111111111111111111\n"
	const author = "author A U Thor <a@example.com> 1700000000 +0000\n"
	const committer = "committer C O Mitter <c@example.com> 1700000000 +0000\n"
	ident := func(who, v string) string { return who + " " + v + "\n" }
	cases := map[string]string{
		"ok":                tree + author + committer + "\nmsg\n",
		"ok parents":        tree + parent + parent + author + committer + "\nmsg\n",
		"ok no body":        tree + author + committer,
		"ok gpgsig":         tree + author + committer + "gpgsig -----BEGIN-----\n x\n -----END-----\n\nmsg\n",
		"ok zero date":      tree + author + ident("committer", "C <c@x> 0 +0000") + "\nm\n",
		"ok big date":       tree + author + ident("committer", "C <c@x> 9223372036854775807 +0000") + "\nm\n",
		"ok no name":        tree + ident("author", " <a@x> 1 +0000") + committer + "\nm\n",
		"ok spaces date":    tree + ident("author", "A <a@x>   5 +0000") + committer + "\nm\n",
		"ok plus date":      tree + ident("author", "A <a@x> +5 +0000") + committer + "\nm\n",
		"ok minus zero":     tree + ident("author", "A <a@x> -0 +0000") + committer + "\nm\n",
		"no author":         tree + committer + "\nmsg\n",
		"two authors":       tree + author + author + committer + "\nm\n",
		"no committer":      tree + author + "\nm\n",
		"no tree":           author + committer + "\nm\n",
		"tree second":       parent + tree + author + committer + "\nm\n",
		"bad tree":          "tree 4b825dc642cb6eb9a060e54bf8d69288fbee49\n" + author + committer + "\nm\n",
		"bad parent":        tree + "parent 12345\n" + author + committer + "\nm\n",
		"nul in header":     tree + author + "committer C <c@x> 1 +0000\x00\n\nm\n",
		"nul in body":       tree + author + committer + "\nm\x00sg\n",
		"unterminated":      tree + author + "committer C <c@x> 1 +0000",
		"missing email":     tree + ident("author", "A U Thor 1 +0000") + committer + "\nm\n",
		"bad name":          tree + ident("author", "A > <a@x> 1 +0000") + committer + "\nm\n",
		"name before <":     tree + ident("author", "<a@x> 1 +0000") + committer + "\nm\n",
		"no space email":    tree + ident("author", "A<a@x> 1 +0000") + committer + "\nm\n",
		"bad email":         tree + ident("author", "A <a<x> 1 +0000") + committer + "\nm\n",
		"no space date":     tree + ident("author", "A <a@x>1 +0000") + committer + "\nm\n",
		"zero padded":       tree + ident("author", "A <a@x> 01 +0000") + committer + "\nm\n",
		"overflow":          tree + ident("author", "A <a@x> 99999999999999999999 +0000") + committer + "\nm\n",
		"overflow signed":   tree + ident("author", "A <a@x> 9223372036854775808 +0000") + committer + "\nm\n",
		"negative":          tree + ident("author", "A <a@x> -5 +0000") + committer + "\nm\n",
		"bad date":          tree + ident("author", "A <a@x> x1 +0000") + committer + "\nm\n",
		"no zone":           tree + ident("author", "A <a@x> 1") + committer + "\nm\n",
		"bad zone":          tree + ident("author", "A <a@x> 1 0000") + committer + "\nm\n",
		"short zone":        tree + ident("author", "A <a@x> 1 +000") + committer + "\nm\n",
		"long zone":         tree + ident("author", "A <a@x> 1 +00000") + committer + "\nm\n",
		"zone junk":         tree + ident("author", "A <a@x> 1 +0000 x") + committer + "\nm\n",
		"committer bad":     tree + author + ident("committer", "C <c@x> x +0000") + "\nm\n",
		"committer zero":    tree + author + ident("committer", "C <c@x> 0") + "\nm\n",
		"author after c":    tree + committer + author + "\nm\n",
		"only zero date":    tree + ident("author", "A <a@x> 0") + committer + "\nm\n",
		"extra headers":     tree + author + committer + "encoding latin1\nmergetag x\n\nm\n",
		"empty":             "",
		"newline only":      "\n",
		"header no body nl": tree + author + committer + "\n",
	}
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "--bare", ".")
	names := map[string]string{} // object id → case
	for name, raw := range cases {
		id := strings.TrimSpace(string(git(t, dir, []byte(raw), "hash-object", "-t", "commit", "--literally", "-w", "--stdin")))
		names[id] = name
	}
	out, _ := gitCmd(dir, "fsck", "--strict", "--no-dangling").CombinedOutput() // fails when any object is faulted
	said := map[string]string{}                                                 // case → git's message id
	re := regexp.MustCompile(`(?m)^error in commit ([0-9a-f]{40}): (\w+):`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		if _, ok := said[names[m[1]]]; !ok {
			said[names[m[1]]] = m[2]
		}
	}
	// a commit git cannot parse at all is "bogus", before fsck's checks:
	// any fault of CommitFault's answers it
	bogus := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^error: (?:bogus commit object|bad parents in commit) ([0-9a-f]{40})`).FindAllStringSubmatch(string(out), -1) {
		bogus[names[m[1]]] = true
	}
	for name, raw := range cases {
		got := CommitFault([]byte(raw))
		gotID, _, _ := strings.Cut(got, ":")
		if bogus[name] && said[name] == "" {
			if got == "" {
				t.Errorf("%s: CommitFault says nothing, git fsck calls it a bogus commit", name)
			}
			continue
		}
		if gotID != said[name] {
			t.Errorf("%s: CommitFault says %q, git fsck %q", name, got, said[name])
		}
	}
	if len(said) == 0 {
		t.Fatalf("git fsck faulted nothing:\n%s", out)
	}
}

// TestParseCommitAsGit writes commits whose header repeats a tree or
// parent line after the place git reads it from and compares ParseCommit's
// tree, parents and time with git's (rev-parse C^{tree}, rev-list
// --parents, %ct): strata must check, show and restore the tree git keeps,
// never one a peer wrote after the committer line (attack35c M1). A fetched
// one is refused all the same (CommitFault: repeatedHeader).
func TestParseCommitAsGit(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "--bare", ".")
	const empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	git(t, dir, []byte(""), "hash-object", "-w", "--stdin")
	other := strings.TrimSpace(string(git(t, dir, []byte("100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\tx\n"), "mktree")))
	const author = "author A <a@x> 1700000000 +0000\n"
	const committer = "committer C <c@x> 1700000001 +0000\n"
	commit := func(raw string) string {
		return strings.TrimSpace(string(git(t, dir, []byte(raw), "hash-object", "-t", "commit", "--literally", "-w", "--stdin")))
	}
	root := commit("tree " + empty + "\n" + author + committer + "\nroot\n")
	root2 := commit("tree " + other + "\n" + author + committer + "\nroot2\n")
	cases := map[string]string{
		"second tree after committer": "tree " + empty + "\nparent " + root + "\n" + author + committer + "tree " + other + "\n\nm\n",
		"parent after author":         "tree " + empty + "\nparent " + root + "\n" + author + "parent " + root2 + "\n" + committer + "\nm\n",
		"plain":                       "tree " + other + "\nparent " + root + "\nparent " + root2 + "\n" + author + committer + "\nm\n",
	}
	// a second committer line: git's own readers disagree on it (a
	// pretty format's %ct takes the last), so a fetched one is refused
	if f := CommitFault([]byte("tree " + empty + "\n" + author + committer + "committer D <d@x> 1800000000 +0000\n\nm\n")); !strings.HasPrefix(f, "repeatedHeader: a committer line") {
		t.Errorf("a second committer line: CommitFault says %q", f)
	}
	for name, raw := range cases {
		id := commit(raw)
		ci, err := ParseCommit([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tree := strings.TrimSpace(string(git(t, dir, nil, "rev-parse", id+"^{tree}")))
		parents := strings.Fields(string(git(t, dir, nil, "rev-list", "--parents", "-n", "1", id)))[1:]
		when := strings.TrimSpace(string(git(t, dir, nil, "log", "-1", "--format=%ct", id)))
		var got []string
		for _, p := range ci.Parents {
			got = append(got, p.String())
		}
		if f := CommitFault([]byte(raw)); (name == "plain") != (f == "") {
			t.Errorf("%s: CommitFault says %q", name, f)
		}
		if ci.Tree.String() != tree || strings.Join(got, " ") != strings.Join(parents, " ") || strconv.FormatInt(ci.Time, 10) != when {
			t.Errorf("%s: ParseCommit gives tree %s, parents %v, time %d; git %s, %v, %s", name, ci.Tree, got, ci.Time, tree, parents, when)
		}
	}
}
