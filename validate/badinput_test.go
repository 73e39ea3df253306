package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInput covers docs/contract.md §13: each bad file gets exactly one clear problem.
func TestBadInput(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepObj := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	cases := []struct {
		name, schema, doc, want string
	}{
		{"empty", "workflow-state", "", ws + `: /: file is empty`},
		{"blank", "workflow-state", " \n\t\n", ws + `: /: file is empty`},
		{"truncated", "workflow-state", "{\n  \"type\": \"APEX\",\n  \"phase\": \"pl", ws + `:3:15: /phase: invalid JSON: unexpected end of input`},
		{"malformed", "workflow-state", "{\n  \"type\" \"APEX\"\n}", ws + `:2:10: /: invalid JSON: unexpected character '"' after object key, want ':'`},
		{"trailing garbage", "workflow-state", "{}\n}", ws + `:2:1: /: invalid JSON: unexpected character '}' after the top-level value`},
		{"duplicate key", "workflow-state", "{\n  \"type\": \"APEX\",\n  \"type\": \"DEBUG\"\n}", ws + `:3:3: /: duplicate key "type" (first at line 2)`},
		{"control char", "json", "{\"a\": \"x\ty\"}", ws + `:1:9: /a: invalid JSON: control character U+0009 in string`},
		{"bad escape", "json", `{"a": "\q"}`, ws + `:1:8: /a: invalid JSON: invalid escape "\\q" in string`},
		{"binary", "workflow-state", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ws + `:3:1: /: file is binary (NUL byte)`},
		// invalid UTF-8 is named at the value that holds it (attack25 hostile)
		{"not utf8", "workflow-state", "{\"type\": \"\xc3\x28\"}", ws + `:1:11: /type: file is not valid UTF-8`},
		{"not utf8 nested", "json", "{\"a\": 1,\n \"b\": {\"c\": [\"ok\", \"x\xffy\"]}}", ws + `:2:22: /b/c/1: file is not valid UTF-8`},
		{"not utf8 in a key", "json", "{\"a\": {\"k\xff\": 1}}", ws + `:1:10: /a: file is not valid UTF-8`},
		{"not utf8 outside a string", "json", "{\"a\": [1, \xff]}", ws + `:1:11: /a/1: file is not valid UTF-8`},
		{"not utf8 jsonl", "mcp-memory", "{\"type\":\"entity\",\"name\":\"a\",\"entityType\":\"t\",\"observations\":[]}\n{\"type\":\"entity\",\"name\":\"b\",\"entityType\":\"t\",\"observations\":[\"o\xff\"]}\n", `.claude/memory.jsonl:2:64: /observations/0: file is not valid UTF-8`},
		{"utf16", "workflow-state", "\xff\xfe{\x00}\x00", ws + `:1:1: /: file is UTF-16 encoded, want UTF-8`},
		{"deep arrays", "json", deep, ws + ":1:1001: /0/0/0/0/0/0/…(991 more)…/0/0/0: nesting deeper than 1000 levels"},
		{"huge exponent", "workflow-state", `{"ttl": 1e999999999}`, ws + `:1:9: /ttl: number out of range: more than 100 characters or an exponent beyond ±400`},
		{"huge number", "json", "[" + strings.Repeat("9", 5<<20) + "]", ws + `:1:2: /0: number out of range: more than 100 characters or an exponent beyond ±400`},
		{"deep objects", "workflow-state", deepObj, ""},
		{"yaml alias bomb", "yaml", billionLaughs, ""},
		{"yaml duplicate", "phase-outcome", "phase: a\nfeature: f\nphase: b\n", `PhaseOutcomes/f/001-implement.yaml:3:1: /phase: duplicate key "phase" (first at line 1)`},
		{"yaml two documents", "decision-resolution", "resolves: D-1\n---\nresolves: D-2\n", `PhaseOutcomes/f/002-resolution-D-001.yaml:3:1: /: multiple YAML documents, want one per file`},
		{"yaml deep", "yaml", strings.Repeat("[", 100000), ""},
		{"yaml nan", "yaml", "a: .nan\n", `x.yaml:1:4: /a: value .nan has no JSON equivalent (NaN or infinity)`},
		{"yaml complex key", "yaml", "? [a]\n: b\n", `x.yaml:1:3: /: mapping key must be a scalar, not a mapping or list`},
		{"yaml tab", "yaml", "a:\n\tb: 1\n", `x.yaml:2:1: /: invalid YAML: found character that cannot start any token`},
		// a key's C1 controls and format characters are quoted in the
		// pointer as in the message (attack34b F3: U+009B, the terminal's
		// CSI, and U+202E went raw into every problem line)
		{"key with C1 and bidi", "json", "{\"a\u009b2J\u202eb\": {\"x\": 1, \"x\": 2}}", ws + `:1:21: /a\u009b2J\u202eb: duplicate key "x" (first at line 1)`},
		{"key with zero width", "yaml", "\"k\u200bz\":\n  x: 1\n  x: 2\n", `x.yaml:3:3: /k\u200bz/x: duplicate key "x" (first at line 2)`},
	}
	v := newValidator(t, Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := defaultPaths[c.schema]
			if c.schema == "json" || c.schema == "workflow-state" {
				path = ws
			}
			start := time.Now()
			got := v.Validate(path, []byte(c.doc), c.schema)
			assert.Less(t, time.Since(start), 5*time.Second)
			require.Len(t, got, 1, "%q", lines(got))
			if c.want != "" {
				assert.Equal(t, c.want, got[0].Error())
			}
			assert.False(t, got[0].Warning)
		})
	}
}

func TestDeepNestingMessages(t *testing.T) {
	v := newValidator(t, Options{})
	deepObj := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	got := v.Validate(ws, []byte(deepObj), "workflow-state")
	require.Len(t, got, 1)
	assert.Equal(t, 1, got[0].Line)
	assert.Equal(t, 5001, got[0].Col)
	assert.Equal(t, "nesting deeper than 1000 levels", got[0].Message)
	assert.Equal(t, strings.Repeat("/a", 1000), got[0].Pointer)

	// YAML: the library caps flow nesting itself; block nesting reaches ours.
	got = v.Validate("x.yaml", []byte(strings.Repeat("[", 100000)), "yaml")
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Message, "exceeded max depth of 10000")
	var block strings.Builder
	for i := range 1100 {
		block.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	got = v.Validate("x.yaml", []byte(block.String()), "yaml")
	require.Len(t, got, 1)
	assert.Equal(t, "nesting deeper than 1000 levels", got[0].Message)
	assert.Equal(t, 1001, got[0].Line)
}

const billionLaughs = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

func TestAliasBombMessage(t *testing.T) {
	_, ps := DecodeYAML("bomb.yaml", []byte(billionLaughs))
	require.Len(t, ps, 1)
	assert.Equal(t, "YAML aliases expand to too many values (alias bomb)", ps[0].Message)
	assert.Greater(t, ps[0].Line, 0)
}

func TestMaxSize(t *testing.T) {
	v := newValidator(t, Options{MaxSize: 100})
	got := v.Validate(ws, bytes.Repeat([]byte(" "), 101), "workflow-state")
	assert.Equal(t, []string{ws + ": /: file is 101 bytes, larger than max_size 100"}, lines(got))

	// 100 MB is refused by the default limit before any decoding.
	big := make([]byte, 100<<20)
	v = newValidator(t, Options{})
	start := time.Now()
	got = v.Validate(ws, big, "workflow-state")
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	assert.Equal(t, []string{ws + ": /: file is 104857600 bytes, larger than max_size 10485760"}, lines(got))
	_, ps := DecodeYAML("x.yaml", big)
	assert.Len(t, ps, 1)
	_, ps = DecodeJSON("x.json", big)
	assert.Len(t, ps, 1)
}

func TestBOMIsSkipped(t *testing.T) {
	v := newValidator(t, Options{})
	assert.Empty(t, v.Validate(ws, []byte("\xEF\xBB\xBF{}"), "workflow-state"))
	got := v.Validate(ws, []byte("\xEF\xBB\xBF{\"type\": 1}"), "json")
	assert.Empty(t, got)
}

func TestDecodeYAML(t *testing.T) {
	doc := `# comment
when: 2026-01-31T13:20:00Z
date: 2026-01-31
1: one
true: yes
null: ~
ints: [0x1F, 1_000, -3, 12345678901234567890]
floats: [1.5, 1e3]
base: &base {x: 1, y: 2}
merged:
  <<: *base
  y: 3
multi: [*base]
`
	v, ps := DecodeYAML("x.yaml", []byte(doc))
	require.Empty(t, ps)
	want := map[string]any{
		"when":   "2026-01-31T13:20:00Z",
		"date":   "2026-01-31",
		"1":      "one",
		"true":   "yes",
		"null":   nil,
		"ints":   []any{json.Number("31"), json.Number("1000"), json.Number("-3"), json.Number("12345678901234567890")},
		"floats": []any{json.Number("1.5"), json.Number("1e3")}, // kept as written, as the JSON decoder keeps it,
		"base":   map[string]any{"x": json.Number("1"), "y": json.Number("2")},
		"merged": map[string]any{"x": json.Number("1"), "y": json.Number("3")},
		"multi":  []any{map[string]any{"x": json.Number("1"), "y": json.Number("2")}},
	}
	assert.Equal(t, want, v)

	v, ps = DecodeYAML("x.yaml", []byte("# only a comment\n"))
	assert.Empty(t, ps)
	assert.Nil(t, v)
}

func TestCustomSchema(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("schemas/my-state.json", `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {"phase": {"$ref": "defs.json#/$defs/phase"}, "at": {"type": "string", "format": "date-time"}},
  "required": ["phase"]
}`)
	write("schemas/defs.json", `{"$defs": {"phase": {"enum": ["plan", "build"]}}}`)
	write("schemas/broken.json", `{"type": "object",`)
	write("schemas/not-schema.json", `{"type": "objekt"}`)
	write("schemas/outside.json", `{"$ref": "../../etc/passwd.json"}`)
	write("schemas/remote.json", `{"$ref": "https://example.com/s.json"}`)

	v := newValidator(t, Options{Root: root})
	const f = "state/a.json"
	assert.Empty(t, v.Validate(f, []byte(`{"phase": "plan"}`), "schemas/my-state.json"))
	assert.Equal(t, []string{
		f + `:1:11: /phase: value must be one of "plan", "build"`,
		f + `:1:25: /at: value must be a valid date-time (RFC 3339, e.g. 2026-01-31T13:20:00Z), got "soon"`,
	}, lines(v.Validate(f, []byte(`{"phase": "ship", "at": "soon"}`), "schemas/my-state.json")))
	// Syntax errors are reported before the schema is consulted.
	assert.Equal(t, []string{f + `: /: file is empty`}, lines(v.Validate(f, nil, "schemas/my-state.json")))

	for schema, want := range map[string]string{
		"schemas/missing.json":    f + `: /: schema "schemas/missing.json" cannot be read: no such file`,
		"schemas/broken.json":     f + `: /: schema schemas/broken.json:1:19: /: invalid JSON: unexpected end of input`,
		"../outside.json":         f + `: /: schema "../outside.json" is not a repo-relative path inside the repository`,
		"/etc/x.json":             f + `: /: schema "/etc/x.json" is not a repo-relative path inside the repository`,
		"schemas/not-schema.json": "",
		"schemas/outside.json":    "",
		"schemas/remote.json":     "",
	} {
		got := v.Validate(f, []byte(`{}`), schema)
		require.Len(t, got, 1, schema)
		assert.NotContains(t, got[0].Message, root, schema)
		assert.NotContains(t, got[0].Message, "\n", schema)
		assert.Contains(t, got[0].Message, schema, schema)
		if want != "" {
			assert.Equal(t, want, got[0].Error(), schema)
		}
		// cached: the same problem again
		assert.Equal(t, got, v.Validate(f, []byte(`{}`), schema))
	}
}

// A user schema's $ref cycle is named by the schema's repo-relative path,
// as a compile error is, never by its absolute file:// URL (attack25
// hostile observation); a root with a space, which a URL escapes, too.
func TestCustomSchemaRefCycle(t *testing.T) {
	root := filepath.Join(t.TempDir(), "my repo")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "schemas"), 0o755))
	for name, body := range map[string]string{
		"schemas/self.json": `{"$ref": "#"}`,
		"schemas/a.json":    `{"$ref": "b.json"}`,
		"schemas/b.json":    `{"$ref": "a.json"}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(body), 0o644))
	}
	v := newValidator(t, Options{Root: root})
	for schema, want := range map[string]string{
		"schemas/self.json": `x.json:1:1: /: schema $ref cycle: both /$ref and / resolve to "schemas/self.json#"`,
		"schemas/a.json":    `x.json:1:1: /: schema $ref cycle: both /$ref/$ref and / resolve to "schemas/a.json#"`,
	} {
		assert.Equal(t, []string{want}, lines(v.Validate("x.json", []byte(`{"a": 1}`), schema)), schema)
	}
}

func TestCustomSchemaSymlinkNotFollowed(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(outside, []byte(`{}`), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link.json")))
	v := newValidator(t, Options{Root: root})
	got := v.Validate("a.json", []byte(`{}`), "link.json")
	assert.Equal(t, []string{`a.json: /: schema "link.json" cannot be read: not a regular file`}, lines(got))
}

// No schema is read from a git directory, by name, by $ref or through a
// symlinked directory: .git/config and the objects are not schemas, and a
// committed configuration must not make strata apply (or print parts of)
// what is there. Each refusal is one problem naming the schema.
func TestCustomSchemaNotFromGitDir(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	const marker = `{"required": ["FROM_GIT_DIR"]}`
	write(".git/x.json", marker)
	write("gd/x.json", marker) // a git dir inside the work tree under another name
	write("schemas/ref-git.json", `{"$ref": "../.git/x.json"}`)
	write("schemas/ref-upper.json", `{"$ref": "../.GIT/x.json"}`)
	write("schemas/ref-ntfs.json", `{"$ref": "../git~1/x.json"}`)
	write("schemas/ref-config.json", `{"$ref": "../.git/config"}`)
	write("schemas/ref-link.json", `{"$ref": "link/x.json"}`)
	write("schemas/ref-gd.json", `{"$ref": "../gd/x.json"}`)
	require.NoError(t, os.Symlink("../.git", filepath.Join(root, "schemas", "link")))
	require.NoError(t, os.Symlink("../gd", filepath.Join(root, "schemas", "gdlink")))

	v := newValidator(t, Options{Root: root, GitDirs: []string{filepath.Join(root, "gd")}})
	const f = "a.json"
	for schema, want := range map[string]string{
		".git/x.json":             `schema ".git/x.json" is inside .git; not read`,
		".Git./x.json":            `schema ".Git./x.json" is inside .git; not read`,
		"schemas/link/x.json":     `schema "schemas/link/x.json" cannot be read: resolves inside the git directory; not read`,
		"gd/x.json":               `schema "gd/x.json" cannot be read: resolves inside the git directory; not read`,
		"schemas/gdlink/x.json":   `schema "schemas/gdlink/x.json" cannot be read: resolves inside the git directory; not read`,
		"schemas/ref-git.json":    `.git/x.json: inside .git; not read`,
		"schemas/ref-upper.json":  `.GIT/x.json: inside .git; not read`,
		"schemas/ref-ntfs.json":   `git~1/x.json: inside .git; not read`,
		"schemas/ref-config.json": `.git/config: inside .git; not read`,
		"schemas/ref-link.json":   `schemas/link/x.json: resolves inside the git directory; not read`,
		"schemas/ref-gd.json":     `gd/x.json: resolves inside the git directory; not read`,
	} {
		got := v.Validate(f, []byte(`{}`), schema)
		require.Len(t, got, 1, schema)
		assert.Contains(t, got[0].Message, want, schema)
		assert.NotContains(t, got[0].Message, "FROM_GIT_DIR", schema)
		assert.NotContains(t, got[0].Message, "\n", schema)
	}
}

func TestCheckTransition(t *testing.T) {
	const ini = ".claude/initiative.json"
	doc := func(status string) []byte {
		return []byte("{\n  \"name\": \"n\",\n  \"status\": \"" + status + "\",\n  \"lastUpdated\": \"2026-01-31T13:20:00Z\"\n}\n")
	}
	allowed := [][2]string{
		{"created", "in_progress"}, {"in_progress", "blocked"}, {"in_progress", "completed"},
		{"blocked", "in_progress"}, {"completed", "archived"}, {"archived", "archived"}, {"created", "created"},
	}
	for _, tr := range allowed {
		assert.Empty(t, CheckTransition(ini, doc(tr[0]), doc(tr[1])), "%v", tr)
	}
	assert.Empty(t, CheckTransition(ini, nil, doc("completed")), "no previous version")
	assert.Empty(t, CheckTransition(ini, []byte("not json"), doc("completed")), "unreadable previous version")
	assert.Empty(t, CheckTransition(ini, doc("created"), doc("weird")), "unknown status is the schema's business")

	const hint = `to start a new initiative, write one with another "name" and status "created"`
	rejected := map[[2]string]string{
		{"completed", "in_progress"}: ini + `:3:13: /status: status cannot change from "completed" to "in_progress": a completed initiative is not reopened, only archived; ` + hint,
		{"completed", "created"}:     ini + `:3:13: /status: status cannot change from "completed" to "created": a completed initiative is not reopened, only archived; ` + hint,
		{"archived", "in_progress"}:  ini + `:3:13: /status: status cannot change from "archived" to "in_progress": an archived initiative is final; ` + hint,
		{"archived", "created"}:      ini + `:3:13: /status: status cannot change from "archived" to "created": an archived initiative is final; ` + hint,
		{"created", "completed"}:     ini + `:3:13: /status: status cannot change from "created" to "completed", want "created" or "in_progress"`,
		{"in_progress", "archived"}:  ini + `:3:13: /status: status cannot change from "in_progress" to "archived", want "in_progress" or "blocked" or "completed"`,
	}
	for tr, want := range rejected {
		assert.Equal(t, []string{want}, lines(CheckTransition(ini, doc(tr[0]), doc(tr[1]))), "%v", tr)
	}

	// another name is another initiative: it starts at "created", whatever
	// the status of the one it replaces
	named := func(name, status string) []byte {
		return []byte(`{"name": "` + name + `", "status": "` + status + `", "lastUpdated": "2026-01-31T13:20:00Z"}`)
	}
	for _, from := range []string{"created", "in_progress", "blocked", "completed", "archived"} {
		assert.Empty(t, CheckTransition(ini, named("auth", from), named("billing", "created")), from)
		assert.Equal(t, []string{ini + `:1:31: /status: a new initiative starts at status "created", got "in_progress": "billing" is another name than the last initiative's "auth" (keep "auth" to move that one on)`},
			lines(CheckTransition(ini, named("auth", from), named("billing", "in_progress"))), from)
	}
	assert.Equal(t, []string{ini + ": /: file is empty"}, lines(CheckTransition(ini, doc("created"), nil)))
}

// YAML numbers follow the JSON decoder's limits: what float64 cannot hold
// is neither turned into a string nor into zero (issue 16.8).
func TestDecodeYAMLNumberRange(t *testing.T) {
	for _, tc := range []struct{ in, want, problem string }{
		{"n: 1e400", "1e400", ""},
		{"n: -1e400", "-1e400", ""},
		{"n: 1e-400", "1e-400", ""},
		{"n: 99999999999999999999999", "99999999999999999999999", ""},
		{"n: +.5", "0.5", ""},
		{"n: 1e401", "", "x.yaml:1:4: /n: number out of range"},
		{"n: '1e401'", "", ""},
	} {
		v, ps := DecodeYAML("x.yaml", []byte(tc.in))
		if tc.problem != "" {
			if len(ps) != 1 || !strings.HasPrefix(ps[0].Error(), tc.problem) {
				t.Errorf("%s: problems %v, want %s", tc.in, ps, tc.problem)
			}
			continue
		}
		if ps != nil {
			t.Errorf("%s: %v", tc.in, ps)
			continue
		}
		got := v.(map[string]any)["n"]
		if tc.want == "" {
			if _, ok := got.(string); !ok {
				t.Errorf("%s: %#v, want a string", tc.in, got)
			}
		} else if got != json.Number(tc.want) {
			t.Errorf("%s: %#v, want number %s", tc.in, got, tc.want)
		}
	}
}

// A schema folder swapped for a link out of the work tree between the
// checks and the read (attack25 K1) is not read through: the outside
// file is neither applied nor quoted.
func TestCustomSchemaFolderSwappedOutIsNotRead(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "schemas"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "schemas", "s.json"), []byte(`{}`), 0o644))
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "s.json"), []byte(`{"required": ["OUTSIDE"]}`), 0o644))
	beforeSchemaRead = func(string) {
		d := filepath.Join(root, "schemas")
		require.NoError(t, os.Rename(d, d+".real"))
		require.NoError(t, os.Symlink(outside, d))
	}
	t.Cleanup(func() { beforeSchemaRead = nil })
	v := newValidator(t, Options{Root: root})
	got := v.Validate("a.json", []byte(`{}`), "schemas/s.json")
	assert.Equal(t, []string{`a.json: /: schema "schemas/s.json" cannot be read: resolves outside the repository through a symbolic link`}, lines(got))
}
