package gitstore

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfig reads the forms of git's configuration syntax that the
// ignore settings may be written in.
func TestParseConfig(t *testing.T) {
	src := "# c\n[core]\n\texcludesFile = \"/a b/x\" # c\n\tIgnoreCase\n" +
		"[Core] excludesfile = /one\\\n/two ; c\n" +
		"[includeIf \"gitdir:~/w \\\"q\\\"/\"]\n\tpath = p.cfg\n" +
		"[include.Sub]\n\tpath=x\n;[core]\n\tkey = \"quoted ; not a comment\"\n"
	var got []string
	parseConfig(src, func(sec, sub, key, val string, hasVal bool) {
		v := "<none>"
		if hasVal {
			v = val
		}
		got = append(got, sec+"|"+sub+"|"+key+"|"+v)
	})
	want := []string{
		"core||excludesfile|/a b/x",
		"core||ignorecase|<none>",
		"core||excludesfile|/one/two",
		`includeif|gitdir:~/w "q"/|path|p.cfg`,
		"include|sub|path|x",
		"include|sub|key|quoted ; not a comment",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestIncludeIfPatterns: includeIf patterns (gitdir:, onbranch:,
// hasconfig:remote.*.url:) match as git's wildmatch does under WM_PATHNAME,
// POSIX classes and a "**" not between slashes included (attack40d F4).
func TestIncludeIfPatterns(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		fold   bool
		want   bool
	}{
		{"/home/u/work/**", "/home/u/work/a/.git", false, true},
		{"**/repo/**", "/x/repo/.git", false, true},
		{"**/repo/**", "/x/other/.git", false, false},
		{"/home/*/.git", "/home/u/.git", false, true},
		{"/home/*/.git", "/home/u/v/.git", false, false},
		{"/h/[a-c]?/.git", "/h/b1/.git", false, true},
		{"/h/[!a-c]?/.git", "/h/b1/.git", false, false},
		{"**/REPO/**", "/x/repo/.git", true, true},
		{"ma*", "main", false, true},
		{"dev/**", "dev/x/y", false, true},
		{"git@example.com:**", "git@example.com:team/repo.git", false, false},
		{"git@example.com:team/**", "git@example.com:team/repo.git", false, true},
		{"https://[[:alpha:]]*.example.com/**", "https://git.example.com/a/b", false, true},
		{"https://[[:digit:]]*.example.com/**", "https://git.example.com/a/b", false, false},
		{"https://example.com[/]x", "https://example.com/x", false, false},
	} {
		if wildmatch(c.pat, c.s, true, c.fold) != c.want {
			t.Errorf("%q ~ %q (fold %v): want %v", c.pat, c.s, c.fold, c.want)
		}
	}
}

// TestInterpolatePath expands a leading "~" as git's interpolate_path
// does: "~/" is $HOME, "~USER/" that user's home directory, and an
// unknown user or no $HOME is an error (git stops: "failed to expand user
// dir"); attack31 F7.
func TestInterpolatePath(t *testing.T) {
	me, err := user.Current()
	if err != nil || me.Username == "" || me.HomeDir == "" {
		t.Skipf("no current user in the password database: %v", err)
	}
	for _, c := range []struct {
		p, home, want string
		fails         bool
	}{
		{"~/ign", "/h/u", "/h/u/ign", false},
		{"~", "/h/u", "/h/u", false},
		{"~/w/", "/h/u", "/h/u/w/", false}, // the trailing slash stays: gitdir:~/w/ is a folder
		{"~/ign", "", "", true},
		{"~" + me.Username + "/ign", "/h/u", me.HomeDir + "/ign", false},
		{"~" + me.Username, "/h/u", me.HomeDir, false},
		{"~no-such-user-strata/ign", "/h/u", "", true},
		{"a/~/b", "/h/u", "a/~/b", false},
		{"/abs", "", "/abs", false},
	} {
		got, err := interpolatePath(c.p, c.home)
		if (err != nil) != c.fails || got != c.want {
			t.Errorf("interpolatePath(%q, %q) = %q, %v; want %q (fails %v)", c.p, c.home, got, err, c.want, c.fails)
		}
	}
}

// TestGitdirTildeFolder matches [includeIf "gitdir:~/work/"] against a
// repository under ~/work, $HOME named through a symbolic link: git
// expands "~/" to the real path of $HOME there, and keeps the trailing
// slash (the folder's whole tree). The slash was lost (filepath.Join), so
// only ~/work/.git itself matched.
func TestGitdirTildeFolder(t *testing.T) {
	base := realPath(t, t.TempDir())
	gitDir := filepath.Join(base, "home", "work", "r", ".git")
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "home"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	r := &configReader{gitDir: gitDir, home: filepath.Join(base, "link")}
	for cond, want := range map[string]bool{
		"gitdir:~/work/":   true,
		"gitdir/i:~/WORK/": true,
		"gitdir:~/other/":  false,
	} {
		if got := r.met(cond, ""); got != want {
			t.Errorf("%s: met %v, want %v", cond, got, want)
		}
	}
}

// TestGitdirDotRelative takes a "gitdir:./…" pattern from the folder of
// the including file's real path, as git does: with ~/.gitconfig a link to
// dotfiles/gitconfig, "./work/" is dotfiles/work/, not ~/work/.
func TestGitdirDotRelative(t *testing.T) {
	base := realPath(t, t.TempDir())
	for _, d := range []string{"dotfiles/work/r/.git", "home/work/r/.git"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(base, "dotfiles", "gitconfig"), "")
	link := filepath.Join(base, "home", ".gitconfig")
	if err := os.Symlink(filepath.Join(base, "dotfiles", "gitconfig"), link); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{"dotfiles/work/r/.git": true, "home/work/r/.git": false} {
		r := &configReader{gitDir: filepath.Join(base, d)}
		if got := r.met("gitdir:./work/", link); got != want {
			t.Errorf("%s: met %v, want %v", d, got, want)
		}
	}
}
