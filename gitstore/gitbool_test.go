package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gitBoolCases are values with git 2.39.5's reading of them
// (git_parse_maybe_bool, behind git_env_bool and git_config_bool): "true",
// "false", or "" for a value git dies on ("bad boolean config value").
// Each was checked with GIT_DISCOVERY_ACROSS_FILESYSTEM=VALUE git rev-parse;
// TestParseGitBool checks them against the git on PATH too.
var gitBoolCases = []struct{ v, want string }{
	{"", "false"}, {"true", "true"}, {"TRUE", "true"}, {"Yes", "true"},
	{"oN", "true"}, {"OFF", "false"}, {"no", "false"}, {"false", "false"},
	{" true", ""}, {"true ", ""}, {"maybe", ""}, {"yeſ", ""}, {"\u212a", ""},
	{"1", "true"}, {"0", "false"}, {"-1", "true"}, {"+1", "true"}, {"-0", "false"},
	{" 1", "true"}, {"\t1", "true"}, {"\n1", "true"}, {"\v1", "true"},
	{"\f1", "true"}, {"\r1", "true"}, {"1 ", ""}, {"1\n", ""}, {" ", ""},
	{"- 1", ""}, {"+", ""}, {"00", "false"}, {"010", "true"}, {"08", ""},
	{"09", ""}, {"0x1", "true"}, {"0X1A", "true"}, {"-0x1", "true"},
	{"0x0", "false"}, {"0x", ""}, {"0xg", ""}, {"+0x", ""}, {"0x1k", "true"},
	{"0x1G", "true"}, {"1k", "true"}, {"1K", "true"}, {"1m", "true"},
	{"1M", "true"}, {"1g", "true"}, {"1G", "true"}, {"0k", "false"},
	{"k", ""}, {"K", ""}, {"g", ""}, {"-k", ""}, {" k", ""}, {"1kb", ""},
	{"1 k", ""}, {"2147483647", "true"}, {"2147483648", ""},
	{"-2147483647", "true"}, {"-2147483648", ""}, {"0x7fffffff", "true"},
	{"0x80000000", ""}, {"017777777777", "true"}, {"020000000000", ""},
	{"2097151k", "true"}, {"2097152k", ""}, {"2g", ""}, {"-2g", ""},
	{"9223372036854775807", ""}, {"-9223372036854775808", ""},
	{"99999999999999999999", ""}, {"99999999999999999999k", ""},
}

// TestParseGitBool: parseGitBool reads a value as git does, refusing what
// git refuses: strata read " true" as true and "maybe" as false where git
// dies, and "0x1" or "1k" as false where git reads true.
func TestParseGitBool(t *testing.T) {
	_, lookErr := exec.LookPath("git")
	for _, c := range gitBoolCases {
		got := ""
		if b, ok := parseGitBool(c.v); ok {
			got = map[bool]string{true: "true", false: "false"}[b]
		}
		if got != c.want {
			t.Errorf("parseGitBool(%q) = %q, want %q (\"\": refused)", c.v, got, c.want)
		}
		if lookErr != nil {
			continue
		}
		// git's own reading: git config --type=bool of a value given as
		// is (GIT_CONFIG_VALUE_0 is not trimmed)
		cmd := exec.Command("git", "config", "--type=bool", "x.y")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=x.y", "GIT_CONFIG_VALUE_0="+c.v)
		out, err := cmd.Output()
		if g := strings.TrimSpace(string(out)); err == nil && g != c.want || err != nil && c.want != "" {
			t.Errorf("git config --type=bool of %q: %q, %v; the table says %q", c.v, g, err, c.want)
		}
	}
}

// TestGitBoolConfig: gitBool, which reads the configuration's booleans,
// gives a value git reads git's meaning (git -c core.bare=0x1 is bare), and
// refuses one git refuses: it read " true" and "08" as true and "maybe" as
// false.
func TestGitBoolConfig(t *testing.T) {
	for _, c := range []struct {
		v          string
		hasVal     bool
		want, isOK bool
	}{
		{"", false, true, true}, {"", true, false, true}, {"true", true, true, true}, {"0x1", true, true, true},
		{"1k", true, true, true}, {"010", true, true, true}, {" 1", true, true, true}, {"0k", true, false, true},
		{" true", true, false, false}, {"maybe", true, false, false}, {"08", true, false, false}, {"1 ", true, false, false},
	} {
		if got, ok := gitBool(c.v, c.hasVal); got != c.want || ok != c.isOK {
			t.Errorf("gitBool(%q, %v) = %v, %v, want %v, %v", c.v, c.hasVal, got, ok, c.want, c.isOK)
		}
	}
}

// TestConfigBoolRefusedAsGit: a boolean of the repository's config that
// git refuses, and dies on ("bad boolean config value"), makes Open refuse
// the repository with a *FormatError naming the file, the key and the
// value; one git reads is taken. Each is asked of git itself: git status
// in a repository with that line in .git/config. strata read each refused
// value as false (core.sparseCheckout, core.ignoreCase: other rules than
// git's) or, " true", as true.
func TestConfigBoolRefusedAsGit(t *testing.T) {
	keys := []struct{ sec, key, name string }{
		{"[core]", "bare", "core.bare"}, {"[core]", "ignoreCase", "core.ignorecase"},
		{"[core]", "sparseCheckout", "core.sparsecheckout"},
		{"[sparse]", "expectFilesOutsideOfPatterns", "sparse.expectfilesoutsideofpatterns"},
		{"[extensions]", "worktreeConfig", "extensions.worktreeconfig"},
		{"[extensions]", "preciousObjects", "extensions.preciousobjects"},
		{"[remote \"origin\"]\n\turl = ../nowhere\n", "promisor", "remote.origin.promisor"},
	}
	for _, k := range keys {
		for _, v := range []string{"maybe", "\" true\"", "1 x", "08", "yes", "0x1", "off", "", "(none)"} {
			dir := realPath(t, t.TempDir())
			initRepo(t, dir, true)
			cfg := filepath.Join(dir, ".git", "config")
			base, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			line := "\t" + k.key + " = " + v + "\n"
			if v == "(none)" {
				line = "\t" + k.key + "\n"
			}
			writeFile(t, cfg, string(base)+strings.ReplaceAll(k.sec, "\\n", "\n")+"\n"+line)
			_, gitErr := gitOut(dir, nil, "status", "--short")
			gitDies := gitErr != nil && strings.Contains(gitErr.Error(), "bad boolean config value")
			s, err := Open(dir)
			if err == nil {
				s.Close()
			}
			var fe *FormatError
			refused := errors.As(err, &fe) && strings.Contains(err.Error(), "is not a boolean git reads")
			if refused != gitDies {
				t.Errorf("%s = %s: strata refuses: %v (%v); git dies: %v (%v)", k.name, v, refused, err, gitDies, gitErr)
			}
			if refused {
				value := strings.Trim(v, "\"")
				if want := cfg + ": " + k.name + " " + strconv.Quote(value) + " is not a boolean git reads"; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("%s = %s: %v, want it to start %s", k.name, v, err, want)
				}
			}
		}
	}
}

// TestRuleBoolRefusedElsewhere: a core.sparseCheckout git refuses in a file
// Open does not check (an included one, the global one) leaves git's
// rules unread, as a pathname git cannot expand does: every file git does
// not track is private.
func TestRuleBoolRefusedElsewhere(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	writeFile(t, filepath.Join(dir, "inc.cfg"), "[core]\n\tsparseCheckout = maybe\n")
	runGit(t, dir, "config", "include.path", "../inc.cfg")
	if _, err := gitOut(dir, nil, "status"); err == nil || !strings.Contains(err.Error(), "bad boolean config value 'maybe' for 'core.sparsecheckout'") {
		t.Fatalf("git status: %v, want it to die", err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ruleSettings().unread; !strings.Contains(got, `core.sparsecheckout "maybe": not a boolean git reads`) {
		t.Errorf("unread = %q, want core.sparsecheckout named", got)
	}
}

// TestParseGitInt: the integers git_parse_int reads, with their values.
func TestParseGitInt(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"-7", -7, true}, {" +7", 7, true},
		{"010", 8, true}, {"0x10", 16, true}, {"0X1f", 31, true}, {"1k", 1024, true},
		{"2m", 2 << 20, true}, {"1g", 1 << 30, true}, {"-1g", -1 << 30, true},
		{"0x1g", 1 << 30, true}, {"2147483647", 1<<31 - 1, true},
		{"-2147483647", -(1<<31 - 1), true}, {"2147483648", 0, false},
		{"08", 0, false}, {"0x", 0, false}, {"k", 0, false}, {"", 0, false},
		{"7 ", 0, false}, {"7kb", 0, false}, {"\u212a", 0, false}, {"7\u212a", 0, false},
	} {
		n, ok := parseGitInt(c.v)
		if n != c.want || ok != c.ok {
			t.Errorf("parseGitInt(%q) = %d, %v, want %d, %v", c.v, n, ok, c.want, c.ok)
		}
	}
}
