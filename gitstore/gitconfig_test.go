package gitstore

import (
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

// TestWildRegexp matches includeIf patterns as git's wildmatch does.
func TestWildRegexp(t *testing.T) {
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
	} {
		re := wildRegexp(c.pat, c.fold)
		if re == nil || re.MatchString(c.s) != c.want {
			t.Errorf("%q ~ %q (fold %v): want %v", c.pat, c.s, c.fold, c.want)
		}
	}
}
