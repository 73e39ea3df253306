package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// canonical is what JSON.stringify(v, null, 2) and json.Indent write, as
// Claude Code writes its settings.
func canonical(t *testing.T, doc string) string {
	t.Helper()
	var c, b bytes.Buffer
	if err := json.Compact(&c, []byte(doc)); err != nil {
		t.Fatalf("%v in %q", err, doc)
	}
	json.Indent(&b, c.Bytes(), "", "  ")
	return b.String() + "\n"
}

var entry = json.RawMessage(`{"matcher":"Write","hooks":[{"type":"command","command":"strata validate --hook"}]}`)

func TestAppendKeepsLayout(t *testing.T) {
	settings := canonical(t, `{"model":"x","hooks":{"Stop":[],"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"make"}]}]},"env":{"A":"1"}}`)
	for _, path := range [][]string{
		{"hooks", "PostToolUse"},  // after an entry
		{"hooks", "Stop"},         // into an empty array
		{"hooks", "SessionStart"}, // a new member of hooks
		{"other", "deep", "list"}, // new objects on the way
	} {
		out, err := Append([]byte(settings), path, entry)
		if err != nil {
			t.Fatal(err)
		}
		// Claude Code's own layout stays its layout, new parts included
		if got := string(out); got != canonical(t, got) {
			t.Errorf("%v: not laid out as the rest:\n%s", path, got)
		}
		// and what was there is there, byte for byte, after Filter takes the entry out
		back, n, err := Filter(out, path, func(raw []byte) bool { return bytes.Equal(compact(t, raw), compact(t, entry)) })
		if err != nil || n != 1 {
			t.Fatalf("%v: filter %d, %v", path, n, err)
		}
		if path[1] == "PostToolUse" && string(back) != settings {
			t.Errorf("filter did not undo append:\n%s", back)
		}
	}

	for _, tt := range []struct{ name, in, want string }{
		{"one line stays one line", `{"hooks": {"Stop": [1]}}`, `{"hooks": {"Stop": [1,` + string(entry) + `]}}`},
		{"one line, empty array", `{"a":1,"hooks":{"Stop":[]}}`, `{"a":1,"hooks":{"Stop":[` + string(entry) + `]}}`},
		{"null replaced", `{"hooks": {"Stop": null}}`, `{"hooks": {"Stop": [` + string(entry) + `]}}`},
		{"CRLF and tabs", "{\r\n\t\"hooks\": {\r\n\t\t\"Stop\": []\r\n\t}\r\n}",
			"{\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [\r\n\t\t\t{\r\n\t\t\t\t\"matcher\": \"Write\",\r\n\t\t\t\t\"hooks\": [\r\n\t\t\t\t\t{\r\n\t\t\t\t\t\t\"type\": \"command\",\r\n" +
				"\t\t\t\t\t\t\"command\": \"strata validate --hook\"\r\n\t\t\t\t\t}\r\n\t\t\t\t]\r\n\t\t\t}\r\n\t\t]\r\n\t}\r\n}"},
		{"after a plain value on a line of its own: over lines", "{\n  \"model\": \"opus\"\n}\n",
			"{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"matcher\": \"Write\",\n        \"hooks\": [\n          {\n" +
				"            \"type\": \"command\",\n            \"command\": \"strata validate --hook\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"},
		{"an array laid out on one line inside lines keeps its line", "{\n  \"args\": [\"-y\", \"x\"]\n}\n", "{\n  \"args\": [\"-y\", \"x\", 3]\n}\n"},
	} {
		elem := any(entry)
		if strings.Contains(tt.name, "its line") {
			elem = 3
		}
		path := []string{"hooks", "Stop"}
		if strings.Contains(tt.in, "args") {
			path = []string{"args"}
		}
		out, err := Append([]byte(tt.in), path, elem)
		if err != nil || string(out) != tt.want {
			t.Errorf("%s:\ngot  %q (%v)\nwant %q", tt.name, out, err, tt.want)
		}
	}
}

func compact(t *testing.T, v []byte) []byte {
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		t.Fatal(err)
	}
	return c.Bytes()
}

func TestSetAndDelete(t *testing.T) {
	mcp := "{\r\n    \"mcpServers\": {\r\n        \"mem\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]}\r\n    }\r\n}\r\n"
	out, err := Set([]byte(mcp), []string{"mcpServers", "strata"}, json.RawMessage(`{"command":"strata","args":["mcp"]}`))
	if err != nil {
		t.Fatal(err)
	}
	// the server before it is on one line, with spaces: so is the new one
	want := "{\r\n    \"mcpServers\": {\r\n        \"mem\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]},\r\n" +
		"        \"strata\": {\"command\": \"strata\", \"args\": [\"mcp\"]}\r\n    }\r\n}\r\n"
	if string(out) != want {
		t.Fatalf("set:\ngot  %q\nwant %q", out, want)
	}
	if again, _ := Set(out, []string{"mcpServers", "strata"}, map[string]any{"args": []string{"mcp"}, "command": "strata"}); !bytes.Equal(again, out) {
		t.Fatal("setting the value it holds rewrote it")
	}
	back, err := Delete(out, []string{"mcpServers", "strata"})
	if err != nil || string(back) != mcp {
		t.Fatalf("delete did not undo set:\n%q (%v)", back, err)
	}
	if same, err := Delete([]byte(mcp), []string{"nothing", "here"}); err != nil || string(same) != mcp {
		t.Fatalf("deleting what is absent: %q %v", same, err)
	}
	dup, err := Delete([]byte(`{"s": {"a": 1, "b": 2, "a": 3}}`), []string{"s", "a"})
	if err != nil || string(dup) != `{"s": {"b": 2}}` {
		t.Fatalf("duplicates: %s %v", dup, err)
	}
}

func TestPathRefusesOtherShapes(t *testing.T) {
	for in, ptr := range map[string]string{
		`{"hooks": []}`:            "/hooks",
		`{"hooks": {"Stop": {}}}`:  "/hooks/Stop",
		`{"hooks": {"Stop": "x"}}`: "/hooks/Stop",
		`{"hooks": 3}`:             "/hooks",
	} {
		_, err := Append([]byte(in), []string{"hooks", "Stop"}, 1)
		if !errors.Is(err, ErrNotObject) || !strings.Contains(err.Error(), ptr+" is not") {
			t.Errorf("%s: %v, want an error naming %s", in, err, ptr)
		}
	}
	if _, _, err := Filter([]byte(`{"a": {"b": 1}}`), []string{"a", "b"}, nil); !errors.Is(err, ErrNotObject) {
		t.Errorf("filter of a number: %v", err)
	}
}

// FuzzAppendFilter: on any object, Append adds exactly the element (the
// decoded document is the old one with it) and Filter takes it out again.
func FuzzAppendFilter(f *testing.F) {
	for _, s := range []string{`{}`, "{\n  \"a\": {\n    \"b\": [\n      1\n    ]\n  }\n}\n", `{"a":{"b":null}}`, "{\r\n\t\"a\": {}\r\n}", `{"a": {"b": [], "b": [2]}}`} {
		f.Add([]byte(s), "a", "b")
	}
	f.Fuzz(func(t *testing.T, in []byte, k1, k2 string) {
		var before map[string]any
		if json.Unmarshal(in, &before) != nil || parseErr(in) || !utf8.ValidString(k1) || !utf8.ValidString(k2) {
			t.Skip()
		}
		out, err := Append(in, []string{k1, k2}, "zz-new")
		if err != nil {
			if errors.Is(err, ErrNotObject) {
				return
			}
			t.Fatal(err)
		}
		var after map[string]any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%q -> invalid %q", in, out)
		}
		inner, _ := after[k1].(map[string]any)
		arr, _ := inner[k2].([]any)
		if len(arr) == 0 || arr[len(arr)-1] != "zz-new" {
			t.Fatalf("%q -> %q: element not last", in, out)
		}
		if old, ok := before[k1].(map[string]any); ok {
			if oldArr, ok := old[k2].([]any); ok {
				inner[k2] = arr[:len(arr)-1]
				if !reflect.DeepEqual(after, before) {
					t.Fatalf("%q -> %q: more than the element changed", in, out)
				}
				inner[k2] = append(oldArr[:0:0], oldArr...)
			}
		}
		back, n, err := Filter(out, []string{k1, k2}, func(raw []byte) bool { return string(raw) == `"zz-new"` })
		if err != nil || n < 1 {
			t.Fatalf("filter: %d %v", n, err)
		}
		var b2 map[string]any
		if json.Unmarshal(back, &b2) != nil {
			t.Fatalf("filter gave invalid %q", back)
		}
		kept := []any{}
		for _, v := range arr {
			if v != "zz-new" {
				kept = append(kept, v)
			}
		}
		inner[k2] = kept
		if got, _ := b2[k1].(map[string]any); len(kept) != len(got[k2].([]any)) {
			t.Fatalf("%q: filter left %v, want %v", out, got[k2], kept)
		}
	})
}

func parseErr(in []byte) bool { _, err := parse(in); return err != nil }
