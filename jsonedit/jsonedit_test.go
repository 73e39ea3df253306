package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func set(key string, v any) Edit { return Edit{Key: key, Value: v} }
func del(key string) Edit        { return Edit{Key: key, Delete: true} }

func TestEditMembers(t *testing.T) {
	const crlf = "{\r\n    \"type\": \"APEX\",\r\n    \"phase\": \"plan\",\r\n    \"zeta\": {\"b\": 1, \"a\": 2},\r\n" +
		"    \"bigId\": 12345678901234567890,\r\n    \"ratio\": 1.0,\r\n    \"note\": \"caf\\u00e9\"\r\n}\r\n"
	tests := []struct {
		name, in string
		edits    []Edit
		want     string
	}{
		{"CRLF, 4 spaces: one value replaced, the rest byte for byte", crlf,
			[]Edit{set("phase", "implement")},
			strings.Replace(crlf, `"plan"`, `"implement"`, 1)},
		{"CRLF: a new member after the last, in its layout", crlf,
			[]Edit{set("context", "auth <x> & y")},
			strings.Replace(crlf, "\"caf\\u00e9\"\r\n}", "\"caf\\u00e9\",\r\n    \"context\": \"auth <x> & y\"\r\n}", 1)},
		{"same value in another spelling is kept", crlf,
			[]Edit{set("note", "café"), set("bigId", json.Number("12345678901234567890")), set("ratio", json.Number("1.0")),
				set("zeta", map[string]any{"a": json.Number("2"), "b": json.Number("1")})},
			crlf},
		{"2 spaces, no final newline", "{\n  \"a\": 1,\n  \"b\": \"x\"\n}",
			[]Edit{set("b", "y"), set("c", true)},
			"{\n  \"a\": 1,\n  \"b\": \"y\",\n  \"c\": true\n}"},
		{"tabs", "{\n\t\"a\": 1\n}\n", []Edit{set("b", nil)}, "{\n\t\"a\": 1,\n\t\"b\": null\n}\n"},
		{"no indentation", `{"a":1,"b":2}`, []Edit{set("c", "z")}, `{"a":1,"b":2,"c":"z"}`},
		{"one line, one member, spaced", `{"a": 1}` + "\n", []Edit{set("c", "z")}, `{"a": 1, "c": "z"}` + "\n"},
		{"one line, one member, compact", `{"a":1}`, []Edit{set("c", "z")}, `{"a":1,"c":"z"}`},
		{"one line with spaces inside the braces", `{ "a": 1 }`, []Edit{set("c", 2)}, `{ "a": 1, "c": 2 }`},
		{"empty object", "{}\n", []Edit{set("a", "x"), set("b", "y")}, "{\n  \"a\": \"x\",\n  \"b\": \"y\"\n}\n"},
		{"empty object over lines, CRLF", "{\r\n}\r\n", []Edit{set("a", 1)}, "{\r\n  \"a\": 1\r\n}\r\n"},
		{"byte order mark kept", "\xef\xbb\xbf{\n  \"a\": 1\n}\n", []Edit{set("a", 2)}, "\xef\xbb\xbf{\n  \"a\": 2\n}\n"},
		{"escaped strings elsewhere untouched", `{"s": "\u003c\/p\u003e", "t": "a"}`, []Edit{set("t", "<b>")}, `{"s": "\u003c\/p\u003e", "t": "<b>"}`},
		{"a key needing escapes", `{"a": 1}`, []Edit{set("k\"\n", 1)}, `{"a": 1, "k\"\n": 1}`},
		{"nested object replaced whole, siblings kept", "{\n  \"n\": {\"x\": [1, 2]},\n  \"m\": {\"y\": 1.50}\n}",
			[]Edit{set("n", map[string]any{"x": "new"})}, "{\n  \"n\": {\"x\":\"new\"},\n  \"m\": {\"y\": 1.50}\n}"},
		{"remove a middle member with its comma", "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n", []Edit{del("b")}, "{\n  \"a\": 1,\n  \"c\": 3\n}\n"},
		{"remove the last member", "{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}", []Edit{del("b")}, "{\r\n  \"a\": 1\r\n}"},
		{"remove the first member", "{\n  \"a\": 1,\n  \"b\": 2\n}", []Edit{del("a")}, "{\n  \"b\": 2\n}"},
		{"remove the only member", "{\n  \"a\": 1\n}\n", []Edit{del("a")}, "{}\n"},
		{"remove an absent member", `{"a": 1}`, []Edit{del("z")}, `{"a": 1}`},
		{"remove every duplicate", `{"a": 1, "b": 2, "a": 3}`, []Edit{del("a")}, `{"b": 2}`},
		{"set the last duplicate", `{"a": 1, "a": 3}`, []Edit{set("a", 4)}, `{"a": 1, "a": 4}`},
		{"space before the colon kept for new members", "{\n  \"a\" : 1\n}", []Edit{set("b", 2)}, "{\n  \"a\" : 1,\n  \"b\" : 2\n}"},
		{"white space before the comma", "{\"a\": 1 ,\n \"b\": 2\n}", []Edit{set("c", 3)}, "{\"a\": 1 ,\n \"b\": 2,\n \"c\": 3\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EditMembers([]byte(tt.in), tt.edits)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if !json.Valid(bytes.TrimPrefix(got, bom)) {
				t.Errorf("result is not valid JSON: %q", got)
			}
		})
	}
}

func TestEditMembersRefuses(t *testing.T) {
	for _, in := range []string{"", "[]", `"s"`, `{"a": 1} x`, `{"a": }`, `{"a": 1}{}`, "{\"a\": 1"} {
		_, err := EditMembers([]byte(in), []Edit{set("a", 2)})
		if !errors.Is(err, ErrNotObject) {
			t.Errorf("%q: err %v, want ErrNotObject", in, err)
		}
	}
}

// corpusDir is the shared corpus of real state files beside the
// repository (never copied into it), or "".
func corpusDir() string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return ""
	}
	for i := 0; i < 3; i++ {
		c := filepath.Join(dir, "shared", "corpus")
		if st, err := os.Stat(filepath.Join(c, "MANIFEST.tsv")); err == nil && st.Mode().IsRegular() {
			return c
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// TestCorpusEdits sets the workflow members strata maps back from L3 in
// every real workflow-state file: only those values change.
func TestCorpusEdits(t *testing.T) {
	corpus := corpusDir()
	if corpus == "" {
		t.Skip("no shared/corpus beside the repository: skipped")
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "workflow-state", "*.json"))
	if len(files) == 0 {
		t.Skip("no workflow-state files in the corpus: skipped")
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		edits := []Edit{set("phase", "implement"), set("type", "APEX"), set("lastUpdated", "2026-11-22T10:00:00Z")}
		got, err := EditMembers(in, edits)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		checkEdit(t, in, got, edits)
	}
}

// checkEdit is the property of EditMembers: the result is valid JSON, the
// members no edit names keep their bytes and order, and the edited ones
// decode to their new values (a removed one is gone).
func checkEdit(t *testing.T, in, got []byte, edits []Edit) {
	t.Helper()
	if !json.Valid(bytes.TrimPrefix(got, bom)) {
		t.Fatalf("result is not valid JSON: %q", got)
	}
	if bytes.HasPrefix(in, bom) != bytes.HasPrefix(got, bom) {
		t.Fatalf("byte order mark not kept: %q", got)
	}
	before, err := parse(in)
	if err != nil {
		t.Fatal(err)
	}
	after, err := parse(got)
	if err != nil {
		t.Fatalf("result does not parse: %v", err)
	}
	named := map[string]bool{}
	for _, e := range edits {
		named[e.Key] = true
	}
	untouched := func(o object) (out [][2]string) {
		for _, m := range o.members {
			if !named[m.key] {
				out = append(out, [2]string{m.key, string(m.raw)})
			}
		}
		return out
	}
	if a, b := untouched(before), untouched(after); !reflect.DeepEqual(a, b) {
		t.Fatalf("members no edit names changed:\n%q\n%q", a, b)
	}
	if !bytes.Equal(in[:before.open], got[:after.open]) || !bytes.Equal(in[before.close:], got[after.close:]) {
		t.Fatalf("bytes outside the braces changed: %q -> %q", in, got)
	}
	final := map[string]*Edit{}
	for i := range edits {
		final[edits[i].Key] = &edits[i]
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(got, bom)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for k, e := range final {
		v, ok := doc[k]
		if e.Delete {
			if ok {
				t.Fatalf("member %q not removed: %q", k, got)
			}
			continue
		}
		want, _ := encode(e.Value)
		if have, _ := encode(v); !ok || !holds(have, want) {
			t.Fatalf("member %q = %s, want %s", k, have, want)
		}
	}
}

func FuzzEditMembers(f *testing.F) {
	seeds := []string{
		"{}", "{}\n", "{\r\n    \"a\": 1,\r\n    \"b\": \"x\"\r\n}\r\n", `{"a":1,"b":{"c":[1,2]}}`,
		"\xef\xbb\xbf{\n\t\"a\": 12345678901234567890,\n\t\"r\": 1.0\n}", `{"a": 1, "a": 2}`, `{ "n": "caf\u00e9" }`,
	}
	if corpus := corpusDir(); corpus != "" {
		files, _ := filepath.Glob(filepath.Join(corpus, "workflow-state", "*.json"))
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil && len(b) < 20000 {
				seeds = append(seeds, string(b))
			}
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s), "phase", `"implement"`, "a", "new", `{"k":[true,null]}`)
	}
	f.Fuzz(func(t *testing.T, in []byte, k1, v1, k2, k3, v3 string) {
		if _, err := parse(in); err != nil {
			t.Skip()
		}
		var val1, val3 any
		if json.Unmarshal([]byte(v1), &val1) != nil || json.Unmarshal([]byte(v3), &val3) != nil {
			t.Skip()
		}
		if !utf8.ValidString(k1) || !utf8.ValidString(k2) || !utf8.ValidString(k3) { // each: "\xd9"+"\xb0" is valid together
			t.Skip() // keys are matched as decoded: invalid UTF-8 reads as U+FFFD
		}
		edits := []Edit{set(k1, val1), del(k2), set(k3, val3)}
		got, err := EditMembers(in, edits)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		checkEdit(t, in, got, edits)
	})
}
