package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// refNameCases are names git's check_refname_format takes or refuses, some
// of each rule's edges.
var refNameCases = []string{
	"refs/heads/main", "refs/heads//main", "refs//heads/main", "refs/heads/main/", "/refs/heads/main",
	"refs/./heads/main", "refs/heads/./main", "refs/heads/main/.", "refs/heads/../heads/main", "refs/heads/a..b",
	"refs/heads/main.lock", "refs/heads/a.lock/b", "refs/heads/x.lock.y", "refs/heads/.lock", "refs/heads/.main",
	"refs/heads/main.", "refs/heads/x./y", "refs/heads/@{x}", "refs/heads/x@{", "refs/heads/@", "refs/heads/@x",
	"refs/heads/a{b}", "refs/heads/ma in", "refs/heads/ma\tin", "refs/heads/ma\x01in", "refs/heads/ma\x7fin",
	"refs/heads/a~b", "refs/heads/a^b", "refs/heads/a:b", "refs/heads/a?b", "refs/heads/a*b", "refs/heads/a[b",
	"refs/heads/a\\b", "refs/heads/a]b", "refs/heads/-x", "refs/heads/é", "refs/heads/a\xffb", "refs/", "refs",
	"refs/main", "HEAD", "FETCH_HEAD", "@", "HEAD.", "HEAD.lock", "foo", "",
}

// TestRefNameFormatAsGit: refnameFormat takes the names git check-ref-format
// --allow-onelevel takes (check_refname_format, as git's ref reading calls
// it), and refName only those, under refs/ or in capitals. strata took
// "refs/./heads/main", "refs/heads/main.lock", "refs/heads/.x", "x.",
// "@{" and "*" in a ref's name, which git refuses to read.
func TestRefNameFormatAsGit(t *testing.T) {
	dir := t.TempDir()
	for _, name := range refNameCases {
		_, err := gitOut(dir, nil, "check-ref-format", "--allow-onelevel", name)
		gitTakes := err == nil
		if got := refnameFormat(name); got != gitTakes {
			t.Errorf("refnameFormat(%q) = %v; git check-ref-format --allow-onelevel takes it: %v", name, got, gitTakes)
		}
		want := gitTakes && (allCaps(name) || strings.HasPrefix(name, "refs/"))
		if got := refName(name); got != want {
			t.Errorf("refName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestResolveRefusesRefNamesGitRefuses: a revision whose ref name git
// refuses is no ref for strata either, though a file of that path is there
// ("refs/./heads/main" is the file of refs/heads/main; a main.lock is a
// writer's lock): git rev-parse finds none, and strata's Resolve says no
// such ref (state.ErrNotFound), as it says of "refs/../x". strata read
// "refs/./heads/main" as main.
func TestResolveRefusesRefNamesGitRefuses(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	head := runGit(t, dir, "rev-parse", "HEAD")
	heads := filepath.Join(dir, ".git", "refs", "heads")
	for _, f := range []string{"main.lock", ".x", "x.", "a.lock/b", "a*b", "a?b", "a[b", "a\\b", "x.lock.y", "-x", "é"} {
		writeFile(t, filepath.Join(heads, f), head+"\n")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, rev := range []string{
		"refs/heads/main", "heads/main", "main", "refs/./heads/main", "refs/heads/./main", "heads/./main", "./main",
		"refs/heads//main", "refs//heads/main", "refs/heads/main/", "main/", "refs/heads/main/.", "/refs/heads/main",
		"refs/heads/../heads/main", "refs/heads/main.lock", "main.lock", "refs/heads/.x", ".x", "refs/heads/x.", "x.",
		"refs/heads/a.lock/b", "a*b", "refs/heads/a?b", "a[b", "a\\b", "x.lock.y", "refs/heads/-x", "é",
	} {
		got, gitErr := gitOut(dir, nil, "rev-parse", "--verify", "-q", "--end-of-options", rev)
		h, err := s.Resolve(rev)
		switch {
		case gitErr == nil && (err != nil || h != got):
			t.Errorf("Resolve(%q) = %s, %v; git rev-parse: %s", rev, h, err, got)
		case gitErr != nil && !errors.Is(err, state.ErrNotFound):
			t.Errorf("Resolve(%q) = %s, %v; git rev-parse finds none, want state.ErrNotFound", rev, h, err)
		}
	}
}

// TestHeadRefNameReadAsGit: a HEAD naming a branch ("ref: NAME", or a
// symbolic link to NAME) is read as git reads it, for each of
// refNameCases, with a file at each path that can hold one: readHeadFile
// names the branch git symbolic-ref HEAD names, or the commit git rev-parse
// HEAD reads when it names none; Resolve("HEAD") reads what git rev-parse
// reads; validHead takes the HEAD exactly when git takes the directory for
// a repository (validate_headref). strata's HEAD check refused "..", "//"
// and git's bad characters only: "ref: refs/heads/main.lock" (a writer's
// lock) or "ref: refs/heads/./main" was the branch and its commit, where
// git reads no branch and no commit; and a link to such a name, which git
// follows to the file, was no commit at all.
func TestHeadRefNameReadAsGit(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	head := runGit(t, dir, "rev-parse", "HEAD")
	gitDir := filepath.Join(dir, ".git")
	for _, name := range refNameCases {
		if strings.HasPrefix(name, "refs/heads/") && !strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(gitDir, name)), 0o755); err == nil {
				os.WriteFile(filepath.Join(gitDir, name), []byte(head+"\n"), 0o644)
			}
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	headFile := filepath.Join(gitDir, "HEAD")
	for _, name := range refNameCases {
		for _, form := range []string{"file", "link"} {
			os.Remove(headFile)
			if form == "file" {
				writeFile(t, headFile, "ref: "+name+"\n")
			} else if err := os.Symlink(name, headFile); err != nil {
				continue
			}
			// git --git-dir checks the directory as discovery does (is_git_directory)
			_, gitErr := gitOut(dir, nil, "--git-dir=.git", "rev-parse", "--git-dir")
			repo := gitErr == nil
			if got := validHead(headFile); got != repo {
				t.Errorf("%s %q: validHead = %v; git takes the repository: %v (%v)", form, name, got, repo, gitErr)
			}
			if !repo {
				continue
			}
			wantRef, gitErr := gitOut(dir, nil, "--git-dir=.git", "symbolic-ref", "-q", "HEAD")
			if gitErr != nil {
				wantRef = ""
			}
			gitHash, gitErr := gitOut(dir, nil, "--git-dir=.git", "rev-parse", "--verify", "-q", "HEAD")
			wantHash := plumbing.ZeroHash
			if gitErr == nil && wantRef == "" {
				wantHash = plumbing.NewHash(gitHash)
			}
			if ref, h := readHeadFile(headFile); ref != wantRef || h != wantHash {
				t.Errorf("%s %q: readHeadFile = %q, %s; git symbolic-ref HEAD: %q, rev-parse HEAD: %s", form, name, ref, h, wantRef, wantHash)
			}
			h, err := s.Resolve("HEAD")
			if gitErr == nil && (err != nil || h != gitHash) || gitErr != nil && err == nil {
				t.Errorf("%s %q: Resolve(HEAD) = %s, %v; git rev-parse HEAD: %q, %v", form, name, h, err, gitHash, gitErr)
			}
		}
	}
	os.Remove(headFile)
	writeFile(t, headFile, "ref: refs/heads/main\n")
}

// TestValidHeadAsGit: validHead takes a HEAD exactly when git takes its
// directory for a repository (validate_headref, asked of git --git-dir).
// git reads 255 bytes of the file; strata read 256, so "ref:", 247 spaces
// and "refs/heads/main" made a repository for strata only.
func TestValidHeadAsGit(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	head := runGit(t, dir, "rev-parse", "HEAD")
	headFile := filepath.Join(dir, ".git", "HEAD")
	cases := []string{
		"ref: refs/heads/main\n", "ref:refs/heads/main", "ref:\t\r\n refs/heads/main", "ref:\vrefs/heads/main",
		"ref: refs/", "ref: refs", "ref: HEAD\n", "ref:\x00refs/heads/main", "ref: refs/\x00", "ref: ",
		"ref:" + strings.Repeat(" ", 246) + "refs/heads/main", "ref:" + strings.Repeat(" ", 247) + "refs/heads/main",
		head, head + "junk", head[:39], strings.ToUpper(head), " " + head, head[:20] + "\x00" + head[21:], "", "refs/heads/main",
	}
	for _, c := range cases {
		os.Remove(headFile)
		writeFile(t, headFile, c)
		_, gitErr := gitOut(dir, nil, "--git-dir=.git", "rev-parse", "--git-dir")
		if got := validHead(headFile); got != (gitErr == nil) {
			t.Errorf("%q in HEAD (%d bytes): validHead = %v; git takes the repository: %v (%v)", c, len(c), got, gitErr == nil, gitErr)
		}
	}
	for _, target := range []string{"refs/heads/main", "refs/nowhere", "refs", "refsx", "../x", filepath.Join(dir, ".git", "refs", "heads", "main")} {
		os.Remove(headFile)
		if err := os.Symlink(target, headFile); err != nil {
			t.Fatal(err)
		}
		_, gitErr := gitOut(dir, nil, "--git-dir=.git", "rev-parse", "--git-dir")
		if got := validHead(headFile); got != (gitErr == nil) {
			t.Errorf("HEAD linked to %q: validHead = %v; git takes the repository: %v (%v)", target, got, gitErr == nil, gitErr)
		}
	}
	os.Remove(headFile)
	if err := os.Mkdir(headFile, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, gitErr := gitOut(dir, nil, "--git-dir=.git", "rev-parse", "--git-dir"); validHead(headFile) != (gitErr == nil) {
		t.Errorf("HEAD a folder: validHead = %v; git takes the repository: %v", validHead(headFile), gitErr == nil)
	}
	os.Remove(headFile)
	writeFile(t, headFile, "ref: refs/heads/main\n")
}
