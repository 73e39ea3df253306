package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A repository strata would damage is refused on open, before anything is
// written; the extensions strata can work under are not.
func TestOpenRefusesFormatsItWouldDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		init   []string
		config [][2]string
		refuse string // "" when Open must succeed
	}{
		{"sha256", []string{"--object-format=sha256"}, nil, "extensions.objectformat = sha256"},
		{"unknown extension", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.futurething", "yes"}}, "extensions.futurething"},
		{"reftable", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.refstorage", "reftable"}}, "extensions.refstorage = reftable"},
		{"version 2", nil, [][2]string{{"core.repositoryformatversion", "2"}}, "format version 2"},
		{"worktree config", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.worktreeConfig", "true"}}, ""},
		{"sha1 said", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.objectFormat", "sha1"}}, ""},
		{"version 0 ignores extensions", nil, [][2]string{{"extensions.futurething", "yes"}}, ""},
		{"version 01", nil, [][2]string{{"core.repositoryformatversion", "01"}, {"extensions.worktreeConfig", "true"}}, ""},
		{"version -1", nil, [][2]string{{"core.repositoryformatversion", "-1"}}, ""},
		{"version not a number", nil, [][2]string{{"core.repositoryformatversion", "one"}}, "is not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := realPath(t, t.TempDir())
			runGit(t, dir, append([]string{"init", "-q"}, tc.init...)...)
			for _, kv := range tc.config {
				runGit(t, dir, "config", kv[0], kv[1])
			}
			s, err := Open(dir)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				s.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("open: %v, want an error naming %q", err, tc.refuse)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "strata")); !os.IsNotExist(err) {
				t.Fatalf(".git/strata exists after a refused open: %v", err)
			}
		})
	}
}

// TestExtensionsReadAsGit: the extensions are judged as git 2.39 judges
// them (setup.c), asked of git itself for each config: under version 0 an
// extension git knows only under version 1 (objectformat, even sha1, and
// noop-v1) is refused, others ignored; an objectformat git cannot read
// (no value, "SHA1", "sha-1") is refused at any version, also where no
// version is set and every other extension is ignored; strata refuses
// sha256 under version 1 besides (its own rule, tested above). strata took
// every extension for ignored under version 0, and wrote SHA-1 objects into
// a SHA-256 repository whose version was lowered to 0 (attack37 M3).
func TestExtensionsReadAsGit(t *testing.T) {
	for _, tc := range []struct{ version, ext, refuse string }{
		{"0", "objectformat = sha256", "extensions.objectformat, an extension of version 1 only"},
		{"0", "objectformat = sha1", "extensions.objectformat, an extension of version 1 only"},
		{"0", "objectFormat = \"sha1\"", "extensions.objectformat, an extension of version 1 only"},
		{"0", "noop-v1 = yes", "extensions.noop-v1, an extension of version 1 only"},
		{"0", "objectformat = SHA1", `extensions.objectformat "SHA1" is no object format git knows`},
		{"0", "objectformat", "extensions.objectformat has no value"},
		{"1", "objectformat = SHA1", `extensions.objectformat "SHA1" is no object format git knows`},
		{"1", "objectformat = sha-1", `extensions.objectformat "sha-1" is no object format git knows`},
		{"1", "objectformat = \"sha1 \"", `extensions.objectformat "sha1 " is no object format git knows`},
		{"1", "objectformat", "extensions.objectformat has no value"},
		{"NONE", "objectformat = SHA1", `extensions.objectformat "SHA1" is no object format git knows`},
		{"-1", "objectformat = sha-1", `extensions.objectformat "sha-1" is no object format git knows`},
		{"0", "futurething = yes", ""},
		{"0", "refstorage = files", ""},
		{"0", "noop = yes", ""},
		{"0", "worktreeconfig = true", ""},
		{"1", "objectformat = sha1 ", ""},
		{"1", "objectformat = \"sha1\"", ""},
		{"1", "noop-v1 = yes", ""},
		{"NONE", "objectformat = sha256", ""},
		{"-1", "objectformat = sha256", ""},
		// a subsection is part of the extension's name, case kept, and
		// no git knows such a name (attack37d L8)
		{"1", "[extensions \"x\"]\n\tobjectformat = sha256", `extensions.x.objectformat, which strata does not know (git 2.39 refuses it too: "unknown repository extension found: x.objectformat")`},
		{"1", "[extensions \"X\"]\n\tnoop = yes", `extensions.X.noop, which strata does not know`},
		{"1", "[extensions.x]\n\tnoop = yes", `extensions.x.noop, which strata does not know`},
		{"1", "futurething = yes", `extensions.futurething, which strata does not know (git 2.39 refuses it too: "unknown repository extension found: futurething")`},
		{"0", "[extensions \"x\"]\n\tobjectformat = sha256", ""},
		{"NONE", "[extensions \"x\"]\n\tobjectformat = sha256", ""},
		// lines git's parser cannot read: git dies on them ("bad config
		// line N"); the others it reads
		{"1", "[core]\nextensions.objectformat = sha256", "config:6: a line git cannot read (git refuses the repository too: \"bad config line 6\")"},
		{"0", "[core]\nfoo_bar = 1", "config:6: a line git cannot read"},
		{"0", "noop # comment", "config:5: a line git cannot read"},
		{"0", "noop = a\\qb", "config:5: a line git cannot read"},
		{"0", "noop = \"open", "config:5: a line git cannot read"},
		{"0", "[]", "config:5: a line git cannot read"},
		{"0", "[core \"x\" ]", "config:5: a line git cannot read"},
		{"0", "[co_re]", "config:5: a line git cannot read"},
		{"0", "1noop = yes", "config:5: a line git cannot read"},
		{"0", "[core\n]", "config:5: a line git cannot read"},
		{"0", "[core \"a\nb\"]", "config:5: a line git cannot read"},
		{"0", "noop = \"a\\\nb\" ; \\q", ""},
		{"0", "noop = a \\\n  b", ""},
		{"0", "noop = \"a\\\"b\\\\\\t\\n\\b\"", ""},
		{"0", "noop=1;c\r\n\tx-y\t=\t# c", ""},
		{"0", "[ \"x\"]", ""},
		{"0", "[core \t \"a\\]b\"] noop", ""},
		{"0", "[a.B-c.D]", ""},
		{"0", "  ; comment \\q \"", ""},
	} {
		dir := realPath(t, t.TempDir())
		runGit(t, dir, "init", "-q")
		cfg := "\xef\xbb\xbf[core]\n\tbare = false\n"
		if tc.version != "NONE" {
			cfg += "\trepositoryformatversion = " + tc.version + "\n"
		}
		cfg += "[extensions]\n\t" + tc.ext + "\n"
		writeFile(t, filepath.Join(dir, ".git", "config"), cfg)
		name := "version " + tc.version + ", " + tc.ext

		_, gitErr := gitOut(dir, nil, "rev-parse", "--git-dir")
		s, err := Open(dir)
		if err == nil {
			s.Close()
		}
		if (gitErr == nil) != (err == nil) {
			t.Errorf("%s: git: %v, strata: %v", name, gitErr, err)
		}
		// git also ends a refused value with this line: only strata's
		// refusals of a line are compared
		if m := regexp.MustCompile(`bad config line \d+`).FindString(fmt.Sprint(gitErr)); m != "" && strings.Contains(fmt.Sprint(err), "bad config line") && !strings.Contains(fmt.Sprint(err), `"`+m+`"`) {
			t.Errorf("%s: git says %q, strata: %v", name, m, err)
		}
		var fe *FormatError
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: Open = %v, want the repository", name, err)
		case tc.refuse != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tc.refuse) || strings.Contains(err.Error(), "\n") || fe.Fix == ""):
			t.Errorf("%s: Open = %v, want a one-line *FormatError with a fix saying %q", name, err, tc.refuse)
		}
	}

	// a SHA-256 repository whose version was lowered to 0: nothing written
	dir := realPath(t, t.TempDir())
	runGit(t, dir, "init", "-q", "--object-format=sha256")
	runGit(t, dir, "config", "core.repositoryformatversion", "0")
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "extensions.objectformat, an extension of version 1 only") {
		t.Fatalf("SHA-256 repository at version 0: Open = %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "strata")); !os.IsNotExist(err) {
		t.Fatalf(".git/strata exists after a refused open: %v", err)
	}
}

// TestObjectDirectoryEnvGitFindsNoRepository: $GIT_OBJECT_DIRECTORY under
// which git finds no repository is refused with a *FormatError, as git
// refuses ("not a git repository"): set but empty (strata took it for
// unset), or naming no folder from where strata runs (".git/objects" in a
// subfolder: strata took it from the top of the work tree). A relative value
// naming the own store from the subfolder but another from the top, where
// git takes it once it found the repository, is another store. What names
// the own store where git takes it is accepted.
func TestObjectDirectoryEnvGitFindsNoRepository(t *testing.T) {
	r := realPath(t, t.TempDir())
	initRepo(t, r, true)
	sub := filepath.Join(r, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(r, ".git", "objects")
	for _, tc := range []struct{ dir, env, refuse string }{
		{r, "", "$GIT_OBJECT_DIRECTORY is set but empty: git finds no repository under it"},
		{sub, "", "$GIT_OBJECT_DIRECTORY is set but empty: git finds no repository under it"},
		{sub, ".git/objects", "$GIT_OBJECT_DIRECTORY = .git/objects names no folder from " + sub},
		{r, filepath.Join(r, "nowhere"), "names no folder: git finds no repository"},
		{sub, "../.git/objects", "own object store (" + own + "), and git takes a relative value from the top of the work tree (" + r + ")"},
		{r, ".git/objects", ""},
		{r, "./.git/objects/", ""},
		{sub, own, ""},
	} {
		t.Setenv("GIT_OBJECT_DIRECTORY", tc.env)
		_, err := Open(tc.dir)
		var fe *FormatError
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("GIT_OBJECT_DIRECTORY=%q in %s: Open = %v, want the repository", tc.env, tc.dir, err)
		case tc.refuse != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tc.refuse) || !strings.HasPrefix(fe.Fix, "unset GIT_OBJECT_DIRECTORY")):
			t.Errorf("GIT_OBJECT_DIRECTORY=%q in %s: Open = %v, want a *FormatError saying %q", tc.env, tc.dir, err, tc.refuse)
		}
	}
	// under $GIT_DIR, git checks the value from the current folder too
	t.Setenv("GIT_DIR", filepath.Join(r, ".git"))
	t.Setenv("GIT_WORK_TREE", "")
	for _, env := range []string{"", ".git/objects"} {
		t.Setenv("GIT_OBJECT_DIRECTORY", env)
		var fe *FormatError
		if _, err := Open(sub); !errors.As(err, &fe) {
			t.Errorf("GIT_OBJECT_DIRECTORY=%q under $GIT_DIR in %s: Open = %v, want refused", env, sub, err)
		}
	}
}

// TestRepositoryFormatVersionReadAsGit: core.repositoryformatversion is
// read as git 2.39 reads it (git_config_int, parseGitInt), asked of git
// itself for each value written into .git/config, with and without an
// extension git does not know: "0x1", "01", "+1" and "1" quoted with a
// space before it are version 1 (the extension refused), "0x0", "0k" and
// "-1" version 0 (the extension ignored), "010", "1k" and "0x2" past 1;
// "0x", "1x", "08", "1.0", "", "1 " quoted, a value left out and one out of
// an int's range are no number, refused even when a readable value
// follows, and a readable value past 1 followed by "0" is read as 0.
// strata read the version with strconv (base 10): "0x1" and "0x0" were
// refused as no number, "08" was version 8.
func TestRepositoryFormatVersionReadAsGit(t *testing.T) {
	for _, v := range []string{
		"0", "1", "0x1", "0X1", "01", "+1", `" 1"`, " 1 ", "0x0", "0k", "-1", "010", "1k", "0x2", "2", "08",
		"0x", "1x", "1.0", "abc", "", `"1 "`, "NONE", "4294967297",
		"abc\n\trepositoryformatversion = 0", "5\n\trepositoryformatversion = 0", "0\n\trepositoryformatversion = 0x1",
	} {
		for _, ext := range []bool{false, true} {
			dir := realPath(t, t.TempDir())
			runGit(t, dir, "init", "-q")
			cfgFile := filepath.Join(dir, ".git", "config")
			b, err := os.ReadFile(cfgFile)
			if err != nil {
				t.Fatal(err)
			}
			line := "repositoryformatversion = " + v
			if v == "NONE" {
				line = "repositoryformatversion"
			}
			cfg := strings.Replace(string(b), "repositoryformatversion = 0", line, 1)
			if ext {
				cfg += "[extensions]\n\tfuturething = yes\n"
			}
			writeFile(t, cfgFile, cfg)

			_, gitErr := gitOut(dir, nil, "rev-parse", "--git-dir")
			s, err := Open(dir)
			if err == nil {
				s.Close()
			}
			var fe *FormatError
			what := func(e error) string {
				switch {
				case e == nil:
					return "accepted"
				case strings.Contains(e.Error(), "bad numeric config value"):
					return "no number"
				case strings.Contains(e.Error(), "Expected git repo version"), strings.Contains(e.Error(), "is newer than strata knows"):
					return "past 1"
				case strings.Contains(e.Error(), "futurething"):
					return "unknown extension"
				default:
					return "other: " + e.Error()
				}
			}
			if err != nil && !errors.As(err, &fe) {
				t.Errorf("%q (extension %v): Open = %v, want a *FormatError", v, ext, err)
			}
			if g, s := what(gitErr), what(err); g != s {
				t.Errorf("%q (extension %v): git: %s (%v), strata: %s (%v)", v, ext, g, gitErr, s, err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%q (extension %v): a refusal of more than one line: %q", v, ext, err)
			}
		}
	}
}
