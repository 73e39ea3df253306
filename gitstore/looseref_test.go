package gitstore

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLooseRefReadAsGit: a loose ref file is read as git 2.39's files
// backend reads it (parse_loose_ref_contents), asked of git itself for each
// content: an object ID followed by its end or by white space (" ", \t,
// \n, \r) is the ID, whatever follows ("ID junk", "ID\tjunk", "ID   ",
// "ID\r\n", no newline, "ID\x00junk"); white space before it, another
// character right after it, \v or \f after it is a broken ref. strata took
// every ID with text after it for a broken ref. The branch HEAD names
// (through HEAD), refs/strata/state and a detached HEAD agree with git,
// and readHeadFile reads a HEAD as git does.
func TestLooseRefReadAsGit(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	state := mustRecord(t, s, change("f.json", "1", t0))[0].Commit
	head := runGit(t, r.wt, "rev-parse", "HEAD")
	contents := []string{
		"%s\n", "%s", "%s junk\n", "%s\tjunk\n", "%s   \n", "%s\r\n", "%s\n\n\n", "%s\njunk\n", "%s\x00junk\n", "%s x",
		"%sjunk\n", " %s\n", "\n%s\n", "%s\v\n", "%s\f\n", "%s\xc2\xa0\n", "junk\n", "",
	}
	for _, c := range contents {
		// what git reads
		for _, ref := range []struct{ name, file, id, rev string }{
			{"refs/heads/main", filepath.Join(r.common, "refs", "heads", "main"), head, "HEAD"},
			{s.StateRef(), filepath.Join(r.common, filepath.FromSlash(s.StateRef())), state, s.StateRef()},
		} {
			writeFile(t, ref.file, strings.ReplaceAll(c, "%s", ref.id))
			got, gitErr := gitOut(r.wt, nil, "rev-parse", "--verify", "-q", ref.name)
			gitReads := gitErr == nil
			if gitReads && got != ref.id {
				t.Fatalf("%q in %s: git rev-parse reads %s", c, ref.name, got)
			}
			h, err := s.Resolve(ref.rev)
			switch {
			case gitReads && (err != nil || h != ref.id):
				t.Errorf("%q in %s: git reads %s, strata's Resolve(%s) = %s, %v", c, ref.name, ref.id, ref.rev, h, err)
			case !gitReads && (err == nil || !strings.Contains(err.Error(), "not an object ID: a broken ref")):
				t.Errorf("%q in %s: git calls it broken, strata's Resolve(%s) = %s, %v; want a broken ref", c, ref.name, ref.rev, h, err)
			}
			writeFile(t, ref.file, ref.id+"\n")
		}

		// a detached HEAD (one git does not refuse as HEAD at all)
		headFile := filepath.Join(r.gitDir, "HEAD")
		writeFile(t, headFile, strings.ReplaceAll(c, "%s", head))
		got, gitErr := gitOut(r.wt, nil, "rev-parse", "--verify", "-q", "HEAD")
		notRepo := gitErr != nil && strings.Contains(gitErr.Error(), "not a git repository")
		if !notRepo {
			gitReads := gitErr == nil && got == head
			h, err := s.Resolve("HEAD")
			if gitReads != (err == nil && h == head) {
				t.Errorf("%q in HEAD: git reads it: %v; strata's Resolve(HEAD) = %s, %v", c, gitReads, h, err)
			}
			if ref, h := readHeadFile(headFile); ref != "" || gitReads != (h.String() == head) {
				t.Errorf("%q in HEAD: git reads it: %v; readHeadFile = %q, %s", c, gitReads, ref, h)
			}
		}
		writeFile(t, headFile, "ref: refs/heads/main\n")
	}

	// HEAD naming a branch, as git's onbranch: and git symbolic-ref read it
	for _, c := range []string{
		"ref: refs/heads/main\n", "ref:refs/heads/main", "ref:\t refs/heads/main \r\n", "ref: refs/heads/main\x00junk",
		"ref: refs/heads/main\njunk\n", "ref: refs/heads/main junk\n",
	} {
		headFile := filepath.Join(r.gitDir, "HEAD")
		writeFile(t, headFile, c)
		got, gitErr := gitOut(r.wt, nil, "symbolic-ref", "-q", "HEAD")
		want := ""
		if gitErr == nil {
			want = got
		}
		if _, err := gitOut(r.wt, nil, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
			want = "" // git resolves no such name
		}
		if ref, _ := readHeadFile(headFile); ref != want {
			t.Errorf("%q in HEAD: readHeadFile names %q, git %q", c, ref, want)
		}
	}
	writeFile(t, filepath.Join(r.gitDir, "HEAD"), "ref: refs/heads/main\n")
}
