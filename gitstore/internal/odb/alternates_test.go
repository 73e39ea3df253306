package odb

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// An index written by git in version 1 (`index-pack --index-version=1`)
// is read as git reads it.
func TestMatchesGitIdxV1(t *testing.T) {
	repo := genRepo(t)
	want := catAll(t, repo)
	git(t, repo, nil, "repack", "-adf", "-q")
	for _, idx := range packs(t, repo) {
		pack := strings.TrimSuffix(idx, ".idx") + ".pack"
		git(t, repo, nil, "index-pack", "--index-version=1", "-o", idx+".new", pack)
		if err := os.Rename(idx+".new", idx); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(idx)
		if err != nil || bytes.HasPrefix(b, idxV2Magic) {
			t.Fatalf("index-pack wrote no version-1 index (%v)", err)
		}
	}
	if got := catAll(t, repo); len(got) != len(want) {
		t.Fatalf("git reads %d objects through the version-1 index, %d before", len(got), len(want))
	}
	compare(t, "version-1 index", repo, want)

	// a short prefix is found through it too
	db := Open(filepath.Join(repo, "objects"))
	defer db.Close()
	for h := range want {
		hs, err := db.Prefix(h.String()[:8])
		if err != nil || !containsHash(hs, h) {
			t.Fatalf("prefix of %s: %v %v", h, hs, err)
		}
		break
	}
}

// A clone made with --shared reads what it has not copied from the
// repository it was cloned from, through objects/info/alternates, and from
// that repository's own alternates in turn; git's rules for the file's
// lines (comments, quoting, relative paths, missing and repeated
// directories) are followed, and every object is git's.
func TestMatchesGitAlternates(t *testing.T) {
	base := genRepo(t)
	git(t, base, nil, "repack", "-adq")
	mid := filepath.Join(t.TempDir(), "mid.git")
	git(t, base, nil, "clone", "-q", "--bare", "--shared", base, mid)
	commitOn(t, mid, "mid", 5)
	top := filepath.Join(t.TempDir(), "top.git")
	git(t, mid, nil, "clone", "-q", "--bare", "--shared", mid, top)
	commitOn(t, top, "top", 5)

	// top names mid by a relative path, quoted, among lines git skips;
	// mid names base, a missing directory, itself and top (a cycle).
	rel, err := filepath.Rel(filepath.Join(top, "objects"), filepath.Join(mid, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	writeAlternates(t, top, "# a comment\n\n\""+rel+"\"\n"+filepath.Join(t.TempDir(), "gone")+"\n")
	writeAlternates(t, mid, filepath.Join(base, "objects")+"\n"+filepath.Join(mid, "objects")+"\n"+filepath.Join(top, "objects")+"\n"+filepath.Join(base, "objects")+"/\n")

	want := catAll(t, top)
	own := catAllOwn(t, top)
	if len(own) == 0 || len(own) >= len(want) {
		t.Fatalf("top holds %d of the %d objects it reads; the test proves little", len(own), len(want))
	}
	compare(t, "alternates", top, want)

	db := Open(filepath.Join(top, "objects"))
	defer db.Close()
	if n := len(db.alternates()); n != 2 {
		t.Fatalf("%d alternates linked, want 2 (mid, base)", n)
	}
	for h := range catAllOwn(t, base) {
		hs, err := db.Prefix(h.String()[:10])
		if err != nil || !containsHash(hs, h) {
			t.Fatalf("prefix of %s, held by the alternate's alternate: %v %v", h, hs, err)
		}
		break
	}
}

// $GIT_ALTERNATE_OBJECT_DIRECTORIES is read as git reads it (attack31
// F2: a clone whose objects git found only through it had an unreadable
// HEAD): ':'-separated entries, a comment, a C-quoted path holding a ':',
// an empty entry, a relative path (from where git runs), a missing
// directory; each entry's own alternates are linked too, and the
// variable's entries come with the objects directory's own alternates.
func TestEnvAlternatesAsGit(t *testing.T) {
	base := genRepo(t)
	git(t, base, nil, "repack", "-adq")
	mid := filepath.Join(t.TempDir(), "m:id.git")
	git(t, base, nil, "clone", "-q", "--bare", "--shared", base, mid) // names base in its alternates
	commitOn(t, mid, "mid", 5)
	top := filepath.Join(t.TempDir(), "top.git")
	git(t, mid, nil, "clone", "-q", "--bare", "--shared", mid, top)
	commitOn(t, top, "top", 5)
	if err := os.Remove(filepath.Join(top, "objects", "info", "alternates")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.git")
	git(t, top, nil, "init", "-q", "--bare", other)
	blob := strings.TrimSpace(string(git(t, other, []byte("only in other\n"), "hash-object", "-w", "--stdin")))
	rel, err := filepath.Rel(top, filepath.Join(other, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	env := "#a comment:" + fmt.Sprintf("%q", filepath.Join(mid, "objects")) + "::" + rel + ":" + filepath.Join(t.TempDir(), "gone")
	own := catAllOwn(t, top)
	t.Setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", env)
	want := catAll(t, top)
	if _, ok := want[plumbing.NewHash(blob)]; !ok || len(want) <= len(own)+1 {
		t.Fatalf("git reads %d objects, %d of its own; the test proves little", len(want), len(own))
	}
	for h := range catAllOwn(t, base) {
		if _, ok := want[h]; !ok {
			t.Fatalf("git does not read %s of base through mid's alternates", h)
		}
	}

	db := Open(filepath.Join(top, "objects"))
	defer db.Close()
	db.SetEnvAlternates(env, top)
	compareDB(t, "$GIT_ALTERNATE_OBJECT_DIRECTORIES", db, want)
	if n := len(db.alternates()); n != 3 {
		t.Fatalf("%d alternates linked, want 3 (mid, base, other)", n)
	}
	hs, err := db.Prefix(blob[:10])
	if err != nil || !containsHash(hs, plumbing.NewHash(blob)) {
		t.Fatalf("prefix of %s, held by the relative entry: %v %v", blob, hs, err)
	}
	// without the variable, what only it names is not read
	plain := Open(filepath.Join(top, "objects"))
	defer plain.Close()
	if _, _, err := plain.Read(plumbing.NewHash(blob)); err != ErrNotFound {
		t.Fatalf("read without the variable: %v, want ErrNotFound", err)
	}
}

// altPaths reads an entry as git's parse_alt_odb_entry does.
func TestAltPaths(t *testing.T) {
	for _, c := range []struct {
		list string
		want []string
	}{
		{"/a:/b", []string{"/a", "/b"}},
		{"#/a:/b", []string{"/b"}},
		{`"/a:b":/c`, []string{"/a:b", "/c"}},
		{`"/a\072b"x/c`, []string{"/a:b", "/c"}},        // the character after the quote is taken for the separator
		{`"/a\qb":/c`, []string{`/base/"/a\qb"`, "/c"}}, // badly quoted: as it is, so relative
		{"::/a::", []string{"/a"}},
		{"rel:", []string{"/base/rel"}},
	} {
		got := altPaths(c.list, ':', "/base")
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("altPaths(%q) = %q, want %q", c.list, got, c.want)
		}
	}
}

// A chain of alternates files deeper than git's bound is cut where git
// cuts it: an object only past it is not found, by git or by odb.
func TestAlternatesDepthAsGit(t *testing.T) {
	const n = maxAltDepth + 3
	repos := make([]string, n)
	for i := range repos {
		repos[i] = filepath.Join(t.TempDir(), fmt.Sprintf("r%d.git", i))
		git(t, t.TempDir(), nil, "init", "-q", "--bare", repos[i])
		if i > 0 {
			writeAlternates(t, repos[i-1], filepath.Join(repos[i], "objects")+"\n")
		}
	}
	for i, r := range repos {
		blob := fmt.Sprintf("only in repository %d\n", i)
		id := strings.TrimSpace(string(git(t, r, []byte(blob), "hash-object", "-w", "--stdin")))
		h := plumbing.NewHash(id)
		gitHas := exitsZero(repos[0], "cat-file", "-e", id)
		db := Open(filepath.Join(repos[0], "objects"))
		_, data, err := db.Read(h)
		db.Close()
		if (err == nil) != gitHas || (err == nil && string(data) != blob) {
			t.Fatalf("repository %d of a chain of %d: git finds it: %v; odb: %q %v", i, n, gitHas, data, err)
		}
		if i == 0 && !gitHas || i == n-1 && gitHas {
			t.Fatalf("repository %d: git finds it: %v; the chain proves little", i, gitHas)
		}
	}
}

func writeAlternates(t *testing.T, repo, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(repo, "objects", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "objects", "info", "alternates"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitOn adds n commits to branch b of bare repository repo, on top of
// main, each with a file of its own.
func commitOn(t *testing.T, repo, b string, n int) {
	t.Helper()
	var s bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&s, "commit refs/heads/%s\ncommitter A U Thor <a@example.com> %d +0130\ndata 3\n%s\n", b, 1800000000+i, b[:2])
		if i == 0 {
			s.WriteString("from refs/heads/main\n")
		}
		data := fmt.Sprintf("%s %d\n", b, i)
		fmt.Fprintf(&s, "M 100644 inline %s/%d.txt\ndata %d\n%s\n", b, i, len(data), data)
	}
	git(t, repo, s.Bytes(), "fast-import", "--quiet")
}

// catAllOwn is catAll of the objects repo holds itself, without its
// alternates.
func catAllOwn(t *testing.T, repo string) map[plumbing.Hash]gitObject {
	t.Helper()
	alt := filepath.Join(repo, "objects", "info", "alternates")
	saved, err := os.ReadFile(alt)
	if err != nil {
		return catAll(t, repo)
	}
	os.Remove(alt)
	defer os.WriteFile(alt, saved, 0o644)
	return catAll(t, repo)
}

func exitsZero(dir string, args ...string) bool {
	cmd := gitCmd(dir, args...)
	return cmd.Run() == nil
}

func containsHash(hs []plumbing.Hash, h plumbing.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}
