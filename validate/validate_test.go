package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

func newValidator(t testing.TB, opts Options) *Validator {
	t.Helper()
	v, err := New(opts)
	require.NoError(t, err)
	return v
}

// lines renders problems as strata prints them.
func lines(ps state.Problems) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Error())
	}
	return out
}

// validFixtures maps each file of testdata/valid to its schema.
var validFixtures = map[string]string{
	"workflow-state.json":      "workflow-state",
	"initiative.json":          "initiative",
	"interview-state.json":     "interview-state",
	"delegation-log.json":      "delegation-log",
	"phase-03-search.json":     "phase-output",
	"phase-outcome.yaml":       "phase-outcome",
	"decision-resolution.yaml": "decision-resolution",
	"memory.jsonl":             "jsonl-mcp",
	"MEMORY.md":                "markdown",
}

func TestValidFixtures(t *testing.T) {
	v := newValidator(t, Options{})
	for name, schema := range validFixtures {
		data, err := os.ReadFile(filepath.Join("testdata", "valid", name))
		require.NoError(t, err)
		assert.Empty(t, lines(v.Validate(name, data, schema)), name)
	}
}

func TestEmptyWorkflowStateIsValid(t *testing.T) {
	v := newValidator(t, Options{})
	assert.Empty(t, v.Validate(".claude/workflow-state.json", []byte("{}\n"), "workflow-state"))
}

type schemaCase struct {
	name   string
	schema string
	path   string // default: a path fitting the schema
	doc    string
	want   []string
}

var defaultPaths = map[string]string{
	"workflow-state":      ".claude/workflow-state.json",
	"initiative":          ".claude/initiative.json",
	"interview-state":     ".claude/interview-state.json",
	"delegation-log":      ".claude/delegation-log.json",
	"phase-output":        "PhaseOutputs/s1/phase-03-search.json",
	"phase-outcome":       "PhaseOutcomes/f/001-implement.yaml",
	"decision-resolution": "PhaseOutcomes/f/002-resolution-D-001.yaml",
	"jsonl-mcp":           ".claude/memory.jsonl",
	"mcp-memory":          ".claude/memory.jsonl",
	"json":                ".claude/settings.json",
	"yaml":                "x.yaml",
	"markdown":            "MEMORY.md",
}

func runCases(t *testing.T, v *Validator, cases []schemaCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			if path == "" {
				path = defaultPaths[c.schema]
			}
			got := v.Validate(path, []byte(c.doc), c.schema)
			assert.Equal(t, c.want, lines(got))
		})
	}
}

const ws = ".claude/workflow-state.json"

func TestWorkflowState(t *testing.T) {
	runCases(t, newValidator(t, Options{}), []schemaCase{
		{name: "spec example", schema: "workflow-state", doc: "{\n  \"phase\": \"plan\",\n  \"type\": \"APEX!\",\n  \"lastUpdated\": \"2026-01-31T13:20:00Z\"\n}",
			want: []string{ws + `:3:11: /type: value must be one of "APEX", "ONESHOT", "DEBUG", "BRAINSTORM"`}},
		{name: "non-empty needs type phase lastUpdated", schema: "workflow-state", doc: `{"context": "x"}`,
			want: []string{
				ws + `:1:1: /: missing required property "lastUpdated"`,
				ws + `:1:1: /: missing required property "phase"`,
				ws + `:1:1: /: missing required property "type"`,
			}},
		{name: "types and formats", schema: "workflow-state", doc: `{
  "type": "DEBUG",
  "phase": "",
  "lastUpdated": "2026-01-31 13:20",
  "ttl": "1w",
  "status": "done",
  "phases": [{"name": "plan", "approved": "yes"}]
}`,
			want: []string{
				ws + `:3:12: /phase: value must not be empty`,
				ws + `:4:18: /lastUpdated: value must be a valid date-time (RFC 3339, e.g. 2026-01-31T13:20:00Z), got "2026-01-31 13:20"`,
				ws + `:5:10: /ttl: value "1w" must match pattern ^[0-9]+[smhd]$`,
				ws + `:6:13: /status: value must be one of "in_progress", "completed"`,
				ws + `:7:43: /phases/0/approved: value must be boolean, got string`,
			}},
		{name: "completedAt required when completed", schema: "workflow-state", doc: `{
  "type": "ONESHOT", "phase": "review", "lastUpdated": "2026-01-31T13:20:00Z",
  "status": "completed"
}`,
			want: []string{ws + `:1:1: /: missing required property "completedAt"`}},
		{name: "completed with completedAt", schema: "workflow-state", doc: `{"type": "ONESHOT", "phase": "review", "lastUpdated": "2026-01-31T13:20:00Z",
  "status": "completed", "completedAt": "2026-01-31T14:00:00Z"}`},
		{name: "violation code and severity", schema: "workflow-state", doc: `{"type": "APEX", "phase": "x", "lastUpdated": "2026-01-31T13:20:00Z",
  "enforcement": {"violations": [
    {"code": "TEST-03", "severity": "high"},
    {"details": "x"}
  ], "blocking": false}}`,
			want: []string{
				ws + `:3:14: /enforcement/violations/0/code: value "TEST-03" must match pattern ^V-[A-Z]+-[0-9]+$`,
				ws + `:3:37: /enforcement/violations/0/severity: value must be one of "CRITICAL", "HIGH", "MEDIUM", "LOW"`,
				ws + `:4:5: /enforcement/violations/1: missing required property "code"`,
				ws + `:4:5: /enforcement/violations/1: missing required property "severity"`,
			}},
		{name: "blocking false with CRITICAL", schema: "workflow-state", doc: `{"type": "APEX", "phase": "x", "lastUpdated": "2026-01-31T13:20:00Z",
  "enforcement": {
    "violations": [{"code": "V-SEC-1", "severity": "LOW"}, {"code": "V-SEC-2", "severity": "CRITICAL"}],
    "blocking": false
  }
}`,
			want: []string{ws + `:4:17: /enforcement/blocking: value must be true because /enforcement/violations/1 is CRITICAL`}},
		{name: "blocking true without severe", schema: "workflow-state", doc: `{"type": "APEX", "phase": "x", "lastUpdated": "2026-01-31T13:20:00Z",
  "enforcement": {"violations": [{"code": "V-SEC-1", "severity": "MEDIUM"}], "blocking": true}}`,
			want: []string{ws + `:2:90: /enforcement/blocking: value must be false because no violation is CRITICAL or HIGH`}},
		{name: "blocking missing with HIGH", schema: "workflow-state", doc: `{"type": "APEX", "phase": "x", "lastUpdated": "2026-01-31T13:20:00Z",
  "enforcement": {"violations": [{"code": "V-SEC-1", "severity": "HIGH"}]}}`,
			want: []string{ws + `:2:18: /enforcement: missing required property "blocking": must be true because /enforcement/violations/0 is HIGH`}},
		{name: "not an object", schema: "workflow-state", doc: `[1]`,
			want: []string{ws + `:1:1: /: value must be object, got array`}},
	})
}

func TestOtherL1Schemas(t *testing.T) {
	const ini, iv, dl = ".claude/initiative.json", ".claude/interview-state.json", ".claude/delegation-log.json"
	runCases(t, newValidator(t, Options{}), []schemaCase{
		{name: "initiative", schema: "initiative", doc: `{"name": "", "status": "paused", "lastUpdated": "2026-01-31T13:20:00Z", "milestone": "2", "progress": 5}`,
			want: []string{
				ini + `:1:10: /name: value must not be empty`,
				ini + `:1:24: /status: value must be one of "created", "in_progress", "blocked", "completed", "archived"`,
				ini + `:1:86: /milestone: value "2" must match pattern ^M[0-9]+$`,
				ini + `:1:103: /progress: value must be object, got number`,
			}},
		{name: "initiative missing", schema: "initiative", doc: "\n\n  {}", want: []string{
			ini + `:3:3: /: missing required property "lastUpdated"`,
			ini + `:3:3: /: missing required property "name"`,
			ini + `:3:3: /: missing required property "status"`,
		}},
		{name: "interview ranges", schema: "interview-state", doc: `{"skill": "s", "confidence": 1.5, "dimensions": {"a": -0.1, "b": "x"}, "questions_asked": 2.5, "timestamp": "2026-01-31T13:20:00Z"}`,
			want: []string{
				iv + `:1:30: /confidence: value must be <= 1, got 1.5`,
				iv + `:1:55: /dimensions/a: value must be >= 0, got -0.1`,
				iv + `:1:66: /dimensions/b: value must be number, got string`,
				iv + `:1:91: /questions_asked: value must be integer, got number`,
			}},
		{name: "delegation entries", schema: "delegation-log", doc: `{"entries": [{"agent": "a", "model": "m", "task_type": "t", "complexity": 3, "outcome": "ok", "duration_ms": -1, "timestamp": "now"}, {}]}`,
			want: []string{
				dl + `:1:110: /entries/0/duration_ms: value must be >= 0, got -1`,
				dl + `:1:127: /entries/0/timestamp: value must be a valid date-time (RFC 3339, e.g. 2026-01-31T13:20:00Z), got "now"`,
				dl + `:1:135: /entries/1: missing required property "agent"`,
				dl + `:1:135: /entries/1: missing required property "complexity"`,
				dl + `:1:135: /entries/1: missing required property "duration_ms"`,
				dl + `:1:135: /entries/1: missing required property "model"`,
				dl + `:1:135: /entries/1: missing required property "outcome"`,
				dl + `:1:135: /entries/1: missing required property "task_type"`,
				dl + `:1:135: /entries/1: missing required property "timestamp"`,
			}},
	})
}

// phaseOutput returns a valid phase output with some fields replaced.
func phaseOutput(repl ...string) string {
	data, err := os.ReadFile(filepath.Join("testdata", "valid", "phase-03-search.json"))
	if err != nil {
		panic(err)
	}
	return strings.NewReplacer(repl...).Replace(string(data))
}

func TestPhaseOutput(t *testing.T) {
	const po = "PhaseOutputs/s1/phase-03-search.json"
	runCases(t, newValidator(t, Options{}), []schemaCase{
		{name: "schema tag phase range", schema: "phase-output",
			doc: phaseOutput(`"phase-output-v2.0.0"`, `"phase-output-v1"`, `"phase": 3`, `"phase": 9`),
			want: []string{
				po + `:2:14: /$schema: value must be "phase-output-v2.0.0"`,
				po + `:3:12: /phase: value must be <= 8, got 9`,
			}},
		{name: "workers and metrics", schema: "phase-output",
			doc: phaseOutput(`"W01"`, `"w1"`, `"duration_seconds": 8}`, `"duration_seconds": -8}`, `"accuracy": 1`, `"accuracy": 1.01`, `"status": "completed"`, `"status": "done"`),
			want: []string{
				po + `:7:12: /workers_executed/0/id: value "w1" must match pattern ^W[0-9]+$`,
				po + `:8:78: /workers_executed/1/duration_seconds: value must be >= 0, got -8`,
				po + `:14:56: /quality_metrics/accuracy: value must be <= 1, got 1.01`,
				po + `:15:13: /status: value must be one of "completed", "failed", "partial"`,
			}},
		{name: "tier label of phase", schema: "phase-output", path: "PhaseOutputs/s1/phase-04-extraction.json",
			doc:  phaseOutput(`"phase": 3`, `"phase": 4`),
			want: []string{`PhaseOutputs/s1/phase-04-extraction.json:5:17: /tier_label: value must be "extraction", the label of phase 4, got "search"`}},
		{name: "file name", schema: "phase-output", path: "PhaseOutputs/s1/phase-3-search.json", doc: phaseOutput(),
			want: []string{`PhaseOutputs/s1/phase-3-search.json:3:12: /phase: file name must be "phase-03-search.json" for phase 3, got "phase-3-search.json"`}},
		{name: "completed before started", schema: "phase-output",
			doc:  phaseOutput(`"completed_at": "2026-01-31T13:21:00+07:00"`, `"completed_at": "2026-01-31T06:19:59Z"`),
			want: []string{po + `:11:19: /completed_at: value must not be before started_at 2026-01-31T13:20:00+07:00`}},
	})
}

func TestPhaseOutcomeAndResolution(t *testing.T) {
	const pf, dr = "PhaseOutcomes/f/001-implement.yaml", "PhaseOutcomes/f/002-resolution-D-001.yaml"
	runCases(t, newValidator(t, Options{}), []schemaCase{
		{name: "outcome", schema: "phase-outcome", doc: `phase: implement
feature: f
produced:
  - artifact: a
findings:
  - type: bug
    title: t
    reasoning: r
    proposed_category: later
pending_decisions:
  - id: D1
    type: design
    question: q?
    options: []
    recommended: x
  - id: D-002
    type: design
    question: q?
    options: [a, b]
    recommended: c
    blocking: "no"
`,
			want: []string{
				pf + `:4:5: /produced/0: missing required property "location"`,
				pf + `:9:24: /findings/0/proposed_category: value must be one of "in-scope-blocking", "in-scope-deferrable", "out-of-scope", "pre-existing"`,
				pf + `:11:9: /pending_decisions/0/id: value "D1" must match pattern ^D-[0-9]+$`,
				pf + `:14:14: /pending_decisions/0/options: array must not be empty`,
				pf + `:20:18: /pending_decisions/1/recommended: value must be one of the decision's options "a", "b", got "c"`,
				pf + `:21:15: /pending_decisions/1/blocking: value must be boolean, got string`,
			}},
		{name: "outcome missing all", schema: "phase-outcome", doc: "note: nothing\n",
			want: []string{
				pf + `:1:1: /: missing required property "feature"`,
				pf + `:1:1: /: missing required property "findings"`,
				pf + `:1:1: /: missing required property "pending_decisions"`,
				pf + `:1:1: /: missing required property "phase"`,
				pf + `:1:1: /: missing required property "produced"`,
			}},
		{name: "resolution", schema: "decision-resolution", doc: "resolves: D-x\noutcome: o.yaml\nchoice: a\nby: bob\nat: yesterday\nnote: 3\n",
			want: []string{
				dr + `:1:11: /resolves: value "D-x" must match pattern ^D-[0-9]+$`,
				dr + `:5:5: /at: value must be a valid date-time (RFC 3339, e.g. 2026-01-31T13:20:00Z), got "yesterday"`,
				dr + `:6:7: /note: value must be string, got number`,
			}},
	})
}

func TestJSONLAndMarkdown(t *testing.T) {
	const mem = ".claude/memory.jsonl"
	runCases(t, newValidator(t, Options{}), []schemaCase{
		{name: "lines", schema: "jsonl-mcp", doc: `{"type":"entity","name":"a","entityType":"t","observations":["x"]}
not json

{"type":"relation","from":"a","to":"b"}
{"type":"entity","name":"a","entityType":"t","observations":[{"text":"x"}]}
{"type":"fact"}
{"name":"a"}
{"type":"entity","name":"a","entityType":"t","observations":["x"]`,
			want: []string{
				mem + `:2:2: /: invalid JSON: unexpected character 'o' in literal null`,
				mem + `:4:1: /: missing required property "relationType"`,
				mem + `:5:62: /observations/0: value must be string, got object`,
				mem + `:6:9: /type: value must be one of "entity", "relation"`,
				mem + `:7:1: /: missing required property "type"`,
				mem + `:8:66: /: invalid JSON: unexpected end of input`,
			}},
		{name: "empty graph", schema: "mcp-memory", doc: ""},
		{name: "crlf", schema: "mcp-memory", doc: "{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\",\"relationType\":\"r\"}\r\n"},
		// the memory server cannot load a graph that starts with a BOM (attack22-final F-1)
		{name: "graph bom", schema: "mcp-memory", doc: "\xEF\xBB\xBF{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\",\"relationType\":\"r\"}\n",
			want: []string{mem + ":1:1: /: a byte order mark starts the file: the MCP memory server cannot load it (each line must be JSON); remove the file's first 3 bytes"}},
		{name: "markdown ok", schema: "markdown", doc: "# Memory\n"},
		{name: "markdown long", schema: "markdown", doc: strings.Repeat("- a line of memory that is long enough to pass 25 KB in total\n", 420),
			want: []string{
				"MEMORY.md: /: warning: file has 420 lines; Claude Code loads only the first 200",
				"MEMORY.md: /: warning: file is 26040 bytes; Claude Code loads only the first 25600 (25 KB)",
			}},
		{name: "markdown not utf8", schema: "markdown", doc: "# ok\nbad \xff byte\n",
			want: []string{"MEMORY.md:2:5: /: file is not valid UTF-8"}},
		{name: "markdown conflict", schema: "markdown", doc: "# Memory\r\n\r\n## Learnings\r\n<<<<<<< HEAD\r\n- ours\r\n||||||| base\r\n=======\r\n- theirs\r\n>>>>>>> feature\r\n",
			want: []string{"MEMORY.md:4:1: /: git conflict markers (<<<<<<< at line 4, >>>>>>> at line 9) from a merge, rebase or stash that stopped on a conflict: resolve it (keep the lines you want, delete the markers)"}},
		{name: "markdown conflict bare markers", schema: "markdown", doc: "<<<<<<<\n=======\n>>>>>>>\n",
			want: []string{"MEMORY.md:1:1: /: git conflict markers (<<<<<<< at line 1, >>>>>>> at line 3) from a merge, rebase or stash that stopped on a conflict: resolve it (keep the lines you want, delete the markers)"}},
		// not a conflict: markers shown in a code fence, a setext heading,
		// an incomplete set, longer runs
		{name: "markdown markers in a fence", schema: "markdown", doc: "# How to merge\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n```\n"},
		// fences as CommonMark reads them: a longer fence quoting a shorter
		// one; a ```bash line inside a fence does not close it
		{name: "markdown four-backtick fence", schema: "markdown", doc: "````\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n```\n````\n"},
		{name: "markdown fence not closed by an info line", schema: "markdown", doc: "```\ncode\n```bash\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n",
			want: []string{"MEMORY.md:5:1: /: git conflict markers (<<<<<<< at line 5, >>>>>>> at line 9) from a merge, rebase or stash that stopped on a conflict: resolve it (keep the lines you want, delete the markers)"}},
		{name: "markdown setext and halves", schema: "markdown", doc: "Title\n=======\n\n<<<<<<< only the start\n>>>>>>> and an end with no middle\n<<<<<<<< eight\n=======\n>>>>>>>> eight\n"},
	})
}

func TestFormatOnly(t *testing.T) {
	runCases(t, newValidator(t, Options{}), []schemaCase{
		{name: "json ok", schema: "json", doc: `{"hooks": {"SessionStart": []}, "n": 1e3, "s": "\u00e9\ud83d\ude00"}`},
		{name: "json bad", schema: "json", doc: "{\n  \"a\": tru\n}",
			want: []string{`.claude/settings.json:2:11: /a: invalid JSON: unexpected character '\n' in literal true`}},
		{name: "yaml ok", schema: "yaml", doc: "a: [1, 2]\nb: {c: d}\n"},
		{name: "yaml bad", schema: "yaml", doc: "a: [1, 2\nb: c\n",
			want: []string{`x.yaml:2:2: /: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence started at 1:4)`}},
		// where the problem is, not where its construct starts, nor none on
		// the first line (attack20-headline H8)
		{name: "yaml tab on line 3", schema: "yaml", doc: "phase: plan\nfeature: feat\n\tproduced: []\n",
			want: []string{`x.yaml:3:1: /: invalid YAML: found a tab character that violates indentation (while scanning a plain scalar started at 2:10)`}},
		{name: "yaml tab on line 1", schema: "yaml", doc: "\tphase: plan\n",
			want: []string{`x.yaml:1:1: /: invalid YAML: found character that cannot start any token`}},
		{name: "yaml stray key in a list", schema: "yaml", doc: "files:\n  - glob: a\n bogus: 1\n",
			want: []string{`x.yaml:3:2: /: invalid YAML: did not find expected key (while parsing a block mapping started at 1:1)`}},
		{name: "unknown", schema: "toml", path: ".claude/settings.json", doc: "a = 1",
			want: []string{`.claude/settings.json: /: unknown schema "toml"`}},
	})
}

// SchemaFile is the one answer to "is this schema name a file?", shared by
// Validate and the configuration's load-time path check.
func TestSchemaFile(t *testing.T) {
	for name, want := range map[string]bool{
		"schemas/s.json": true, ".git/x.json": true, "/abs.json": true, "../s.json": true,
		SchemaJSON: false, SchemaYAML: false, SchemaJSONL: false, SchemaJSONLMCP: false,
		SchemaMCPMemory: false, SchemaMarkdown: false, "workflow-state": false, "s.yaml": false,
	} {
		assert.Equal(t, want, SchemaFile(name), name)
	}
}
