package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

func TestInstallClaude(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		changed bool
		want    []string // substrings of the compacted output, in this order
	}{
		{"missing file", ``, true, []string{`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"strata resume --hook"}]}],"PostToolUse":[{"matcher":"Write|Edit|MultiEdit","hooks":[{"type":"command","command":"strata validate --hook"}]}]}}`}},
		{"empty object", `{}`, true, []string{`{"hooks":{"SessionStart":`}},
		{"keys keep their order and text", `{"z":1.50,"a":"\u00e9<>","hooks":{"Stop":[]},"m":null}`, true,
			[]string{`{"z":1.50,"a":"\u00e9<>","hooks":{"Stop":[],"SessionStart":`, `"m":null}`}},
		{"other entries stay first", `{"hooks":{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}`, true,
			[]string{`"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]},{"matcher":"Write|Edit|MultiEdit"`}},
		{"already there, any matcher, any layout", `{ "hooks" : { "SessionStart": [{"matcher":"startup","hooks":[{"type":"command","command":" strata resume --hook "}]}],
			"PostToolUse": [{"matcher":"Write","hooks":[{"type":"command","command":"strata validate --hook"}]}] } }`, false, nil},
		{"null event", `{"hooks":{"SessionStart":null}}`, true, []string{`"SessionStart":[{"hooks"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, rec, err := InstallClaude(SettingsPath, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			changed := rec != nil
			if changed != tt.changed {
				t.Fatalf("changed = %v, want %v", changed, tt.changed)
			}
			if !changed {
				if string(out) != tt.in {
					t.Fatalf("unchanged input rewritten:\n%s", out)
				}
				return
			}
			if !json.Valid(out) {
				t.Fatalf("not JSON:\n%s", out)
			}
			if tt.in == "" && (!bytes.HasSuffix(out, []byte("}\n")) || !bytes.HasPrefix(out, []byte("{\n  \""))) {
				t.Fatalf("a new file is not two-space indented JSON with a final newline:\n%s", out)
			}
			if tt.in != "" && tt.in != "{}" && bytes.Count(out, []byte("\n")) != strings.Count(tt.in, "\n") {
				t.Fatalf("a file on one line was spread over lines:\n%s", out)
			}
			var c bytes.Buffer
			if err := json.Compact(&c, out); err != nil {
				t.Fatal(err)
			}
			rest := c.String()
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %s (in order):\n%s", w, c.String())
				}
				rest = rest[i+len(w):]
			}
			again, rec, err := InstallClaude(SettingsPath, out)
			if err != nil || rec != nil || !bytes.Equal(again, out) {
				t.Fatalf("second install: changed %v, err %v", rec != nil, err)
			}
		})
	}
}

func TestUninstallClaude(t *testing.T) {
	orig := `{"a":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"make"}]}],` +
		`"PostToolUse":[{"matcher":"Write|Edit|MultiEdit","hooks":[{"type":"command","command":"strata validate --hook"},{"type":"command","command":"mine"}]}]},"b":2}`
	// the PostToolUse entry already runs strata validate: only SessionStart is added
	in, rec, err := InstallClaude(SettingsPath, []byte(orig))
	if err != nil || rec == nil {
		t.Fatalf("install: %v %v", rec, err)
	}
	out, changed, left, err := UninstallClaude(SettingsPath, in, rec)
	if err != nil || !changed {
		t.Fatalf("uninstall: %v %v", changed, err)
	}
	// only what install added goes: strata's hook in the entry it shares
	// with the user's own was there before install and stays, and uninstall
	// names it as left (attack33 L2; before, it took it out of the user's
	// entry too)
	if string(out) != orig {
		t.Fatalf("uninstall:\ngot  %s\nwant %s", out, orig)
	}
	if want := []string{`PostToolUse "strata validate --hook"`}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	// an entry of strata's whose matcher the user changed is strata's still
	moved := strings.Replace(string(in), `"hooks":[{"type":"command","command":"strata resume --hook"}]`, `"matcher":"startup","hooks":[{"type":"command","command":"strata resume --hook"}]`, 1)
	if moved == string(in) {
		t.Fatalf("the test did not change the matcher:\n%s", in)
	}
	if out2, changed, _, err := UninstallClaude(SettingsPath, []byte(moved), rec); err != nil || !changed || strings.Contains(string(out2), "resume") {
		t.Fatalf("uninstall with a changed matcher: %v %v\n%s", changed, err, out2)
	}
	// a hook that is not an object beside strata's does not hide it
	// (attack18-final F3: "has no strata hooks", and nothing changed); the
	// record is one of an install into {} (both entries added), as any
	// strata since records began writes it
	odd := `{"hooks":{"PostToolUse":[{"matcher":"Write|Edit|MultiEdit","hooks":[42,{"type":"command","command":"strata validate --hook"},"x",[1]]}]}}`
	intoEmpty := &Added{Existed: true, Before: []byte("{}"), After: "not this file"}
	if out3, changed, left, err := UninstallClaude(SettingsPath, []byte(odd), intoEmpty); err != nil || !changed || len(left) != 0 ||
		string(out3) != `{"hooks":{"PostToolUse":[{"matcher":"Write|Edit|MultiEdit","hooks":[42,"x",[1]]}]}}` {
		t.Fatalf("uninstall beside odd hooks: %v %v %q\n%s", changed, err, left, out3)
	}
	if _, changed, _, _ := UninstallClaude(SettingsPath, out, rec); changed {
		t.Fatal("second uninstall changed something")
	}

	// our entries alone: the arrays and then the "hooks" install created
	// go; without the record of the install, everything stays (the
	// entries may be the team's, committed; the empty objects the user's)
	fresh, rec, _ := InstallClaude(SettingsPath, []byte(`{"x":true}`))
	out, _, _, err = UninstallClaude(SettingsPath, fresh, rec)
	if err != nil || string(out) != `{"x":true}` {
		t.Fatalf("got %q, %v", out, err)
	}
	out, changed, left, err = UninstallClaude(SettingsPath, fresh, nil)
	if err != nil || changed || string(out) != string(fresh) || len(left) != 2 {
		t.Fatalf("without the record: got %q, %v, %q, %v", out, changed, left, err)
	}
	if out, changed, _, err := UninstallClaude(SettingsPath, nil, nil); err != nil || changed || out != nil {
		t.Fatalf("missing file: %q %v %v", out, changed, err)
	}
}

// uninstall takes out only the entries this clone's install added
// (attack33 L2): strata's entries committed by a teammate, which install
// found there and so did not add, stay byte for byte, and are named as
// left; where install added one of the two, that one goes and the file
// comes back as it was.
func TestUninstallClaudeLeavesWhatInstallDidNotAdd(t *testing.T) {
	committed := "{\n  \"hooks\": {\n    \"SessionStart\": [{\"hooks\":[{\"type\":\"command\",\"command\":\"strata resume --hook\"}]}],\n" +
		"    \"PostToolUse\": [{\"matcher\":\"Write|Edit|MultiEdit\",\"hooks\":[{\"type\":\"command\",\"command\":\"strata validate --hook\"}]}]\n  }\n}\n"
	out, rec, err := InstallClaude(SettingsPath, []byte(committed))
	if err != nil || rec != nil || string(out) != committed {
		t.Fatalf("install: %v %v", rec, err)
	}
	back, changed, left, err := UninstallClaude(SettingsPath, []byte(committed), nil)
	if err != nil || changed || string(back) != committed {
		t.Fatalf("uninstall with no record: changed %v, %v\n%s", changed, err, back)
	}
	if want := []string{`SessionStart "strata resume --hook"`, `PostToolUse "strata validate --hook"`}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}

	half := "{\"hooks\": {\"SessionStart\": [{\"hooks\":[{\"type\":\"command\",\"command\":\"strata resume --hook\"}]}]}}\n"
	out, rec, err = InstallClaude(SettingsPath, []byte(half))
	if err != nil || rec == nil {
		t.Fatalf("install into half: %v %v", rec, err)
	}
	back, changed, left, err = UninstallClaude(SettingsPath, out, rec)
	if err != nil || !changed || string(back) != half {
		t.Fatalf("uninstall after install into half: changed %v, %v\n%s", changed, err, back)
	}
	if want := []string{`SessionStart "strata resume --hook"`}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
}

// install and uninstall keep every byte of the user's settings they do not
// change, and lay out what they add as the file is laid out. Before, both
// re-wrote the whole file with two-space indentation and LF line ends
// (attack17-d 9).
func TestClaudeSettingsKeepLayout(t *testing.T) {
	claudes := "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(make:*)\"\n    ]\n  },\n  \"hooks\": {\n    \"PostToolUse\": [\n" +
		"      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"make lint\"\n" +
		"          }\n        ]\n      }\n    ]\n  }\n}\n"
	for name, in := range map[string]string{
		"Claude Code's own layout":        claudes,
		"CRLF, four spaces, no final EOL": "{\r\n    \"model\": \"opus\",\r\n    \"env\": {\"A\": \"1\"}\r\n}",
		"one line":                        `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}`,
		"tabs and a BOM":                  "\xef\xbb\xbf{\n\t\"hooks\": {\n\t\t\"SessionStart\": []\n\t}\n}\n",
	} {
		out, rec, err := InstallClaude(SettingsPath, []byte(in))
		if err != nil || rec == nil {
			t.Fatalf("%s: install %v %v", name, rec, err)
		}
		if strings.Contains(in, "\r\n") && bytes.Count(out, []byte("\n")) != bytes.Count(out, []byte("\r\n")) {
			t.Errorf("%s: a line end is not CRLF:\n%q", name, out)
		}
		if in == claudes {
			var c, b bytes.Buffer
			json.Compact(&c, out)
			json.Indent(&b, c.Bytes(), "", "  ")
			if b.String()+"\n" != string(out) {
				t.Errorf("%s: the new entries are not laid out as Claude Code lays out the rest:\n%s", name, out)
			}
		}
		back, changed, _, err := UninstallClaude(SettingsPath, out, rec)
		if err != nil || !changed {
			t.Fatalf("%s: uninstall %v %v", name, changed, err)
		}
		if string(back) != in {
			t.Errorf("%s: uninstall did not give back the file byte for byte:\n%q\nwant\n%q", name, back, in)
		}
	}
}

func TestClaudeSettingsErrors(t *testing.T) {
	for in, ptr := range map[string]string{
		`[]`:                             "",
		`"x"`:                            "",
		`{"hooks":[]}`:                   "/hooks",
		`{"hooks":{"SessionStart":{}}}`:  "/hooks/SessionStart",
		`{"hooks":{"PostToolUse":"no"}}`: "/hooks/PostToolUse",
		`{} {}`:                          "",
	} {
		_, _, errI := InstallClaude(SettingsPath, []byte(in))
		_, _, _, errU := UninstallClaude(SettingsPath, []byte(in), nil)
		for _, err := range []error{errI, errU} {
			var ps state.Problems
			if !errors.As(err, &ps) || ps[0].Pointer != ptr || ps[0].Path != SettingsPath {
				t.Errorf("%s: got %v, want a problem at %q", in, err, ptr)
			}
		}
	}
}

// FuzzInstallClaude: for any JSON object, install keeps every top-level key
// in order, yields valid JSON, and is idempotent.
func FuzzInstallClaude(f *testing.F) {
	for _, s := range []string{`{}`, `{"hooks":{}}`, `{"a":[1,2,{"b":null}],"hooks":{"Stop":[{"hooks":[]}]}}`, `{"k":"\ud83d\ude00","hooks":{"PostToolUse":[1,"x",null]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v map[string]any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		out, _, err := InstallClaude(SettingsPath, in)
		if err != nil {
			return // hooks of another shape: reported, fine
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q", out)
		}
		before, _ := decodeObject(in)
		after, err := decodeObject(out)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, m := range after {
			if i < len(before) && m.key == before[i].key {
				i++
			}
		}
		if i != len(before) {
			t.Fatalf("keys lost or reordered: %q -> %q", in, out)
		}
		again, rec, err := InstallClaude(SettingsPath, out)
		if err != nil || rec != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent on %q", in)
		}
	})
}

// A settings file that starts with a UTF-8 byte-order mark (an editor's;
// validate accepts it) is installed into and uninstalled from, the mark
// kept; before, install refused it as "expected an object".
func TestClaudeSettingsWithBOM(t *testing.T) {
	in := []byte("\xef\xbb\xbf{\"model\": \"x\"}\n")
	out, rec, err := InstallClaude(".claude/settings.json", in)
	if err != nil || rec == nil || !bytes.HasPrefix(out, []byte("\xef\xbb\xbf{")) || !json.Valid(bytes.TrimPrefix(out, []byte("\xef\xbb\xbf"))) {
		t.Fatalf("install: %q, %v, %v", out, rec, err)
	}
	back, changed, _, err := UninstallClaude(".claude/settings.json", out, rec)
	if err != nil || !changed || !bytes.HasPrefix(back, []byte("\xef\xbb\xbf{")) || !bytes.Contains(back, []byte(`"model": "x"`)) {
		t.Fatalf("uninstall: %q, %v, %v", back, changed, err)
	}
	if again, rec, err := InstallClaude(".claude/settings.json", out); err != nil || rec != nil || !bytes.Equal(again, out) {
		t.Errorf("install again: %q, %v, %v; want no change", again, rec, err)
	}
}

// uninstall after install gives back the file byte for byte, taking out
// only what install added: the user's own empty "hooks" or event array
// stays, the file's layout of an empty object comes back, and an entry the
// user wrote that runs strata's command with a field of its own, or as a
// prompt, is theirs (attack23 F6).
func TestClaudeRoundTripKeepsTheUsers(t *testing.T) {
	for _, in := range []string{
		"{\"model\":\"x\",\n \"hooks\":{}}\n",
		`{ "a": 1, "hooks": { "PostToolUse": [ ] } }` + "\n",
		"{\n}\n",
		`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"strata resume --hook","timeout":30}]}]}}`,
		`{"hooks":{"SessionStart":[{"hooks":[{"type":"prompt","command":"strata resume --hook"}]}]}}`,
	} {
		out, rec, err := InstallClaude(SettingsPath, []byte(in))
		if err != nil || rec == nil {
			t.Fatalf("%q: install %v %v", in, rec, err)
		}
		back, changed, _, err := UninstallClaude(SettingsPath, out, rec)
		if err != nil || !changed || string(back) != in {
			t.Errorf("%q: uninstall gave %q, %v, %v", in, back, changed, err)
		}
	}
	// a prompt hook is not strata's: install adds the command hook
	out, _, _ := InstallClaude(SettingsPath, []byte(`{"hooks":{"SessionStart":[{"hooks":[{"type":"prompt","command":"strata resume --hook"}]}]}}`))
	if !strings.Contains(string(out), `{"type":"command","command":"strata resume --hook"}`) {
		t.Errorf("a prompt counted as installed:\n%s", out)
	}
}

// duplicate keys are refused with their position, in .mcp.json as in
// settings.json: an edit names one occurrence and a removal takes all
// (attack23 F5: the user's first mcpServers was lost).
func TestDuplicateKeysRefused(t *testing.T) {
	dup := []byte(`{"mcpServers":{"mine":{"command":"my-server"}},"mcpServers":{}}`)
	for name, err := range map[string]error{
		"install mcp":   func() error { _, _, err := InstallMCP(MCPPath, dup); return err }(),
		"uninstall mcp": func() error { _, _, _, err := UninstallMCP(MCPPath, dup, nil); return err }(),
		"install":       func() error { _, _, err := InstallClaude(SettingsPath, []byte(`{"hooks":{},"hooks":{}}`)); return err }(),
	} {
		var ps state.Problems
		if !errors.As(err, &ps) || ps[0].Line != 1 || !strings.Contains(ps[0].Message, "duplicate key") {
			t.Errorf("%s: got %v, want a positioned duplicate key", name, err)
		}
	}
}

// a wrong-typed hooks member is reported at its line and column (attack23
// F13).
func TestClaudeSettingsErrorsPositioned(t *testing.T) {
	_, _, err := InstallClaude(SettingsPath, []byte("{\n  \"model\": \"x\",\n  \"hooks\": []\n}\n"))
	if err == nil || err.Error() != ".claude/settings.json:3:12: /hooks: expected an object, found an array" {
		t.Errorf("got %v", err)
	}
	_, _, _, err = UninstallClaude(SettingsPath, []byte("{\n  \"hooks\": null\n}\n"), nil)
	if err == nil || err.Error() != ".claude/settings.json:2:12: /hooks: expected an object, found null" {
		t.Errorf("got %v", err)
	}
}

// ClaudeInstalled finds strata's hooks as InstallClaude does: a "command"
// hook running strata's command under its event; a "prompt" hook naming it
// does not count (note23 "Left alone").
func TestClaudeInstalled(t *testing.T) {
	for _, tc := range []struct {
		name, settings string
		want           bool
	}{
		{"none", ``, false},
		{"installed", `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"strata resume --hook"}]}],"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"strata validate --hook","timeout":5}]}]}}`, true},
		{"with a BOM", "\ufeff" + `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"strata resume --hook"}]}],"PostToolUse":[{"hooks":[{"type":"command","command":"strata validate --hook"}]}]}}`, true},
		{"prompt", `{"hooks":{"SessionStart":[{"hooks":[{"type":"prompt","prompt":"strata resume --hook","command":"strata resume --hook"}]}],"PostToolUse":[{"hooks":[{"type":"command","command":"strata validate --hook"}]}]}}`, false},
		{"other event", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"strata resume --hook"}]}],"PostToolUse":[{"hooks":[{"type":"command","command":"strata validate --hook"}]}]}}`, false},
		{"in a string", `{"note":"strata resume --hook strata validate --hook"}`, false},
	} {
		got, err := ClaudeInstalled(SettingsPath, []byte(tc.settings))
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := ClaudeInstalled(SettingsPath, []byte(`{"hooks":{"SessionStart":{}}}`)); err == nil || !strings.Contains(err.Error(), "/hooks/SessionStart") {
		t.Errorf("hooks.SessionStart an object: %v, want an error naming its pointer", err)
	}
}
