package config

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

func load(t *testing.T, yaml string) *Config {
	t.Helper()
	root := t.TempDir()
	if yaml != "" {
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte(yaml), 0o644))
	}
	t.Setenv("MEMORY_FILE_PATH", "")
	c, err := Load(root)
	require.NoError(t, err)
	return c
}

func TestClassifyDefaults(t *testing.T) {
	c := load(t, "")
	cases := []struct {
		path   string
		kept   bool
		class  state.Class
		schema string
	}{
		{".claude/workflow-state.json", true, state.ClassWorkflowState, "workflow-state"},
		{".claude/initiative.json", true, state.ClassInitiative, "initiative"},
		{".claude/interview-state.json", true, state.ClassInterviewState, "interview-state"},
		{".claude/delegation-log.json", true, state.ClassDelegationLog, "delegation-log"},
		{".claude/settings.json", true, state.ClassClaudeJSON, "json"},
		{".claude/memory.jsonl", true, state.ClassGraph, "mcp-memory"},
		{".claude/memory/MEMORY.md", true, state.ClassMemory, "markdown"},
		{"PhaseOutputs/s1/phase-01-query.json", true, state.ClassPhaseOutput, "phase-output"},
		{"PhaseOutcomes/auth/001-plan.yaml", true, state.ClassPhaseOutcome, "phase-outcome"},
		{"PhaseOutcomes/auth/002-resolution-D-001.yaml", true, state.ClassDecisionResolution, "decision-resolution"},
		{"PhaseOutputs/s1/session-metadata.json", false, "", ""},
		{".claude/sub/x.json", false, "", ""},
		{".claude/.workflow-state.json.swp", false, "", ""},
		{".claude/.#workflow-state.json", false, "", ""},
		{".claude/workflow-state.json~", false, "", ""},
		{".claude/4913", false, "", ""},
		{"../.claude/workflow-state.json", false, "", ""},
		{"/etc/passwd", false, "", ""},
		{".claude/a\nb.json", false, "", ""},
		{"src/main.go", false, "", ""},
		{".claude/my file.json", true, state.ClassClaudeJSON, "json"},
	}
	for _, tc := range cases {
		k, ok := c.Classify(tc.path)
		assert.Equal(t, tc.kept, ok, tc.path)
		assert.Equal(t, tc.class, k.Class, tc.path)
		assert.Equal(t, tc.schema, k.Schema, tc.path)
	}
}

func TestUserRulesComeFirst(t *testing.T) {
	c := load(t, `
version: 1
max_size: 1KB
files:
  - glob: .claude/workflow-state.json
    schema: schemas/mine.json
  - glob: .claude/scratch-*.json
    ignore: true
  - glob: state/*.json
    class: workflow-state
    schema: workflow-state
`)
	assert.EqualValues(t, 1024, c.MaxSize)
	k, ok := c.Classify(".claude/workflow-state.json")
	require.True(t, ok)
	assert.Equal(t, state.ClassWorkflowState, k.Class, "class inherited from the built-in rule")
	assert.Equal(t, "schemas/mine.json", k.Schema)
	_, ok = c.Classify(".claude/scratch-1.json")
	assert.False(t, ok)
	k, ok = c.Classify("state/a.json")
	require.True(t, ok)
	assert.Equal(t, "workflow-state", k.Schema)
	assert.True(t, c.WatchDir("state"))
}

// TestFilteredIsPrivate: a file git passes through a filter driver is
// withheld with the driver named, like an ignored one, unless a user rule
// names it exactly; a wildcard rule does not.
func TestFilteredIsPrivate(t *testing.T) {
	c := load(t, `
files:
  - glob: .claude/token.json
  - glob: state/*.json
`)
	c.Filter = func(rel string) string {
		switch rel {
		case ".claude/settings.json", ".claude/token.json", "state/a.json":
			return "crypt"
		case ".claude/memory/MEMORY.md":
			return "lfs"
		case ".claude/odd.json":
			return "a\x1bb"
		}
		return ""
	}
	for _, tc := range []struct {
		path, why string
		kept      bool
	}{
		{".claude/settings.json", "git filters it (filter=crypt)", false},
		{".claude/memory/MEMORY.md", "git filters it (filter=lfs)", false},
		{".claude/token.json", "git filters it (filter=crypt); .strata.yaml names it, but only your git config keeps a private file (to keep it: git config --add strata.keepPrivate .claude/token.json)", false}, // named exactly: not enough
		{"state/a.json", "git filters it (filter=crypt)", false},
		{"state/b.json", "", true},
		{".claude/workflow-state.json", "", true},
		{".claude/odd.json", `git filters it (filter="a\x1bb")`, false},
		{"src/main.go", "", false}, // no rule: not private, not kept
	} {
		_, ok := c.Classify(tc.path)
		assert.Equal(t, tc.kept, ok, tc.path)
		assert.Equal(t, tc.why, c.Private(tc.path), tc.path)
	}
}

func TestTemplateLoads(t *testing.T) {
	c := load(t, Template)
	assert.EqualValues(t, DefaultMaxSize, c.MaxSize)
	assert.Equal(t, len(DefaultRules), len(c.Rules))
}

func TestBadConfig(t *testing.T) {
	for _, bad := range []string{
		"files:\n  - glob: ../x.json\n",
		"files:\n  - schema: json\n",
		"max_size: huge\n",
		"unknown_key: 1\n",
		"files: [\n",
		"version: 2\n", // a future format is not read under this one's rules (attack18-hooks F10)
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte(bad), 0o644))
		_, err := Load(root)
		assert.Error(t, err, bad)
	}
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte("# mine\nversion: 3\n"), 0o644))
	_, err := Load(root)
	assert.EqualError(t, err, ".strata.yaml:2:10: /version: version 3 is not one this strata reads (1); upgrade strata, or write version: 1")
}

func TestWatchDir(t *testing.T) {
	c := load(t, "")
	for dir, want := range map[string]bool{
		".": true, ".claude": true, ".claude/memory": true, "PhaseOutputs": true,
		"PhaseOutputs/s1": true, "PhaseOutputs/s1/deep": false, "PhaseOutcomes/f": true,
		"src": false, "node_modules": false, ".git": false,
	} {
		assert.Equal(t, want, c.WatchDir(dir), dir)
	}
}

func TestAutoMemory(t *testing.T) {
	assert.Equal(t, "-home-me-my-repo", AutoMemoryKey("/home/me/my_repo"))
	// one dash per UTF-16 code unit, as Claude Code (JavaScript) counts
	// them: before, one per UTF-8 byte missed the real folder (attack18-layers 5)
	assert.Equal(t, "-home-me--------caf--x---", AutoMemoryKey("/home/me/Проект/café/x/\U0001F600"))
	assert.Equal(t, "-w---", AutoMemoryKey("/w/\xff\xfe"))
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := t.TempDir()
	c, err := Load(root)
	require.NoError(t, err)
	assert.Equal(t, ".claude/memory/MEMORY.md", c.Memory, "default when none exists")
	auto := filepath.Join(home, ".claude", "projects", AutoMemoryKey(root), "memory", "MEMORY.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(auto), 0o755))
	require.NoError(t, os.WriteFile(auto, []byte("# Memory\n"), 0o644))
	c, err = Load(root)
	require.NoError(t, err)
	assert.Equal(t, "~/.claude/projects/"+AutoMemoryKey(root)+"/memory/MEMORY.md", c.Memory)
	assert.Equal(t, auto, c.Abs(c.Memory))
	files, err := c.Scan()
	require.NoError(t, err)
	assert.Contains(t, files, c.Memory)
	require.NoError(t, os.WriteFile(filepath.Join(root, "MEMORY.md"), []byte("# M\n"), 0o644))
	c, err = Load(root)
	require.NoError(t, err)
	assert.Equal(t, "MEMORY.md", c.Memory, "a repo candidate comes before the auto-memory file")
}

func TestGraphFromEnv(t *testing.T) {
	root := t.TempDir()
	t.Setenv("MEMORY_FILE_PATH", filepath.Join(root, "kg", "memory.jsonl"))
	c, err := Load(root)
	require.NoError(t, err)
	assert.Equal(t, "kg/memory.jsonl", c.Graph)
	assert.True(t, c.WatchDir("kg"))
}

// $HOME is a symbolic link (Fedora Silverblue: /home -> var/home) and the
// work tree's real top is under where it leads: a name through $HOME of a
// file of the work tree is that tree's file, not a "~/" file (attack33b
// F2: the tree's own graph became a shared home graph), a folder not made
// yet included; a home file named by its real path is a home file.
func TestRelThroughLinkedHome(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(tmp, "var", "home")
	root := filepath.Join(real, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude"), 0o755))
	home := filepath.Join(tmp, "home")
	require.NoError(t, os.Symlink(filepath.Join("var", "home"), home))
	t.Setenv("HOME", home)

	t.Setenv("MEMORY_FILE_PATH", filepath.Join(home, "proj", ".claude", "memory.jsonl"))
	c := loadOwnGraph(t, root)

	assert.Equal(t, "kg/memory.jsonl", c.Rel(root, filepath.Join(home, "proj", "kg", "memory.jsonl")))
	assert.Equal(t, ".claude/workflow-state.json", c.Rel(root, filepath.Join(home, "proj", ".claude", "workflow-state.json")))
	assert.Equal(t, "~/.mem/memory.jsonl", c.Rel(root, filepath.Join(home, ".mem", "memory.jsonl")))
	assert.Equal(t, "~/.mem/memory.jsonl", c.Rel(root, filepath.Join(real, ".mem", "memory.jsonl")))
	assert.Equal(t, filepath.ToSlash(filepath.Join(tmp, "elsewhere", "g.jsonl")), c.Rel(root, filepath.Join(tmp, "elsewhere", "g.jsonl")))
}

// loadOwnGraph loads root's configuration and checks that its graph is
// the tree's own .claude/memory.jsonl, kept as the graph.
func loadOwnGraph(t *testing.T, root string) *Config {
	t.Helper()
	c, err := Load(root)
	require.NoError(t, err)
	assert.Equal(t, ".claude/memory.jsonl", c.Graph)
	k, ok := c.Classify(c.Graph)
	assert.True(t, ok)
	assert.Equal(t, state.ClassGraph, k.Class)
	return c
}

// A home folder that is a symbolic link to a folder of the work tree
// (~/mine -> proj/.claude): a name through it is the tree's file at its
// real place, not a "~/" file (attack33c C3: the tree's own graph became a
// shared home graph, given a repo: line and no longer recorded), a file not
// made yet included; a name through a link from outside into the tree
// names the file where it really is.
func TestRelThroughLinkToSubfolder(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(tmp, "home")
	root := filepath.Join(home, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude", "deep"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join("proj", ".claude"), filepath.Join(home, "mine")))
	require.NoError(t, os.Symlink(filepath.Join(root, ".claude", "deep"), filepath.Join(tmp, "outside")))
	t.Setenv("HOME", home)

	t.Setenv("MEMORY_FILE_PATH", filepath.Join(home, "mine", "memory.jsonl"))
	c := loadOwnGraph(t, root)

	assert.Equal(t, ".claude/new/g.jsonl", c.Rel(root, filepath.Join(home, "mine", "new", "g.jsonl")))
	assert.Equal(t, ".claude/deep/g.jsonl", c.Rel(root, filepath.Join(tmp, "outside", "g.jsonl")))
	assert.Equal(t, "~/.mem/memory.jsonl", c.Rel(root, filepath.Join(home, ".mem", "memory.jsonl")))
	assert.Equal(t, filepath.ToSlash(filepath.Join(tmp, "elsewhere", "g.jsonl")), c.Rel(root, filepath.Join(tmp, "elsewhere", "g.jsonl")))
}

// A graph file named by $MEMORY_FILE_PATH with a control character is not
// kept either: the environment is not checked at load.
func TestGraphFromEnvControl(t *testing.T) {
	root := t.TempDir()
	t.Setenv("MEMORY_FILE_PATH", filepath.Join(root, "kg", "a\nb.jsonl"))
	c, err := Load(root)
	require.NoError(t, err)
	_, ok := c.Classify(c.Graph)
	assert.False(t, ok, "a graph name with a newline is never kept")
}

func TestBadName(t *testing.T) {
	c := load(t, "")
	assert.True(t, c.BadName(".claude/a\nb.json"), "kept but for the newline")
	assert.True(t, c.BadName("PhaseOutputs/s\t1/phase-01-query.json"))
	assert.False(t, c.BadName(".claude/workflow-state.json"), "an ordinary name")
	assert.False(t, c.BadName("src/a\nb.go"), "not kept anyway")
	// C1 controls are control characters too: U+009B is a terminal's CSI.
	assert.True(t, c.BadName(".claude/c1\u009b31mX.json"), "kept but for the C1 CSI")
	assert.True(t, c.BadName(".claude/nel\u0085.json"), "kept but for the C1 NEL")
	_, ok := c.Classify(".claude/c1\u009b31mX.json")
	assert.False(t, ok, "a name with a C1 control is never kept")
	// Bytes that are not UTF-8 are no control character: git keeps such a
	// name, and so does strata, quoting it on output.
	_, ok = c.Classify(".claude/raw\x9b32mY.json")
	assert.True(t, ok, "a raw 0x9B byte is kept")
	assert.False(t, c.BadName(".claude/raw\x9b32mY.json"))
	_, ok = c.Classify(".claude/café.json")
	assert.True(t, ok, "letters of any script are kept")
}

// TestMaxSizeOverflow refuses a size past what an int64 holds, naming the
// file and line, instead of wrapping it to a negative limit.
func TestMaxSizeOverflow(t *testing.T) {
	for _, bad := range []string{
		"max_size: 99999999999GB",
		"max_size: 9223372036854775807KB",
		"max_size: 99999999999999999999",
		"max_size: 99999999999999999999B",
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte("version: 1\n"+bad+"\n"), 0o644))
		c, err := Load(root)
		if assert.Error(t, err, bad) {
			assert.Regexp(t, `^\.strata\.yaml:2:\d+: /max_size: .*too large`, err.Error(), bad)
		} else {
			t.Logf("%s: max size %d", bad, c.MaxSize)
		}
	}
	c := load(t, "max_size: 16MB\n")
	assert.EqualValues(t, int64(16)<<20, c.MaxSize)
}

// max_size has a ceiling a configuration cannot lift: a committed
// .strata.yaml must not make strata read a huge file whole (attack25 K3).
func TestMaxSizeCeiling(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"100GB", `.strata.yaml:2:11: /max_size: size "100GB" is larger than strata reads a kept file: at most 16MB (16777216 bytes)`},
		{"17MB", `.strata.yaml:2:11: /max_size: size "17MB" is larger than strata reads a kept file: at most 16MB (16777216 bytes)`},
		{"16777217", `.strata.yaml:2:11: /max_size: size 16777217 is larger than strata reads a kept file: at most 16MB (16777216 bytes)`},
		{"9223372036854775807", `.strata.yaml:2:11: /max_size: size 9223372036854775807 is larger than strata reads a kept file: at most 16MB (16777216 bytes)`},
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte("version: 1\nmax_size: "+tc.in+"\n"), 0o644))
		_, err := Load(root)
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.in)
		assert.Equal(t, tc.want, err.Error(), tc.in)
	}
	for in, want := range map[string]int64{"16MB": 16 << 20, "16777216": 16 << 20, "16384KB": 16 << 20} {
		c := load(t, "max_size: "+in+"\n")
		assert.Equal(t, want, c.MaxSize, in)
	}
}

// max_size is read as written: a fraction is refused, never rounded down,
// and a number too large is printed as the user wrote it, not as a float.
func TestMaxSizeExact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.5", ".strata.yaml:2:11: /max_size: size 1.5 is not a whole number of bytes: " + sizeHint},
		{"1048576.5", ".strata.yaml:2:11: /max_size: size 1048576.5 is not a whole number of bytes: " + sizeHint},
		{"9223372036854775808", ".strata.yaml:2:11: /max_size: size 9223372036854775808 is too large"},
		{"99999999999999999999", ".strata.yaml:2:11: /max_size: size 99999999999999999999 is too large"},
		{"1e400", ".strata.yaml:2:11: /max_size: invalid size 1e400: " + sizeHint},
		{"-99999999999999999999", ".strata.yaml:2:11: /max_size: size -99999999999999999999 is negative: " + sizeHint},
		{"-1.5", ".strata.yaml:2:11: /max_size: size -1.5 is negative: " + sizeHint},
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte("version: 1\nmax_size: "+tc.in+"\n"), 0o644))
		_, err := Load(root)
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.in)
		assert.Equal(t, tc.want, err.Error(), tc.in)
	}
	for in, want := range map[string]int64{
		"1048576": 1 << 20, `"1048576"`: 1 << 20, "1B": 1, "2KB": 2048, `"16MB"`: 16 << 20,
	} {
		c := load(t, "max_size: "+in+"\n")
		assert.Equal(t, want, c.MaxSize, in)
	}
}

// max_size is a size only as documented: decimal digits, alone or followed
// at once by B, KB, MB or GB in capitals. Other spellings YAML or a reader
// might take for a size (hex, an exponent, a sign, lower
// case, a space) are one config error, not read as some number (attack25
// recheck observation: 0x4000000, 64mb, "64 MB" and 1e9 were accepted).
func TestMaxSizeWrittenForm(t *testing.T) {
	for in, want := range map[string]string{
		"0x4000000":   "invalid size 0x4000000: " + sizeHint,
		"0o100":       "invalid size 0o100: " + sizeHint,
		"1e9":         "invalid size 1e9: " + sizeHint,
		"1e3":         "invalid size 1e3: " + sizeHint,
		"2.0":         "invalid size 2.0: " + sizeHint,
		"+64":         "invalid size +64: " + sizeHint,
		"64mb":        `invalid size "64mb": ` + sizeHint,
		"64 MB":       `invalid size "64 MB": ` + sizeHint,
		`"64MB "`:     `invalid size "64MB ": ` + sizeHint,
		"+64MB":       `invalid size "+64MB": ` + sizeHint,
		"64MiB":       `invalid size "64MiB": ` + sizeHint,
		"1TB":         `invalid size "1TB": ` + sizeHint,
		"64.0MB":      `invalid size "64.0MB": ` + sizeHint,
		`!!int 0x400`: "invalid size 0x400: " + sizeHint,
	} {
		assertMaxSizeRefused(t, in, want)
	}
	// anchored or written through a merge key, the text is still judged
	for _, doc := range []string{
		"max_size: &s 0x400\n",
		"<<: {max_size: 0x400}\n",
		"<<: [{version: 1}, {max_size: 0x400}]\n",
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte(doc), 0o644))
		_, err := Load(root)
		if assert.Error(t, err, doc) {
			assert.Contains(t, err.Error(), "/max_size: invalid size 0x400: ", doc)
		}
	}
	c := load(t, "<<: {max_size: 2KB}\n")
	assert.EqualValues(t, 2048, c.MaxSize)
}

// assertMaxSizeRefused loads a .strata.yaml whose max_size is in and
// checks that it is refused with the one config error line want names.
func assertMaxSizeRefused(t *testing.T, in, want string) {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte("version: 1\nmax_size: "+in+"\n"), 0o644))
	_, err := Load(root)
	var ce *Error
	require.ErrorAs(t, err, &ce, in)
	assert.Equal(t, ".strata.yaml:2:11: /max_size: "+want, err.Error(), in)
}

// A max_size of zero is one reason however it is written, and decimal
// digits with leading zeros are decimal (attack26 recheck F7: 0 and 0B gave
// two different reasons, and 010MB was refused as "not decimal digits").
func TestMaxSizeZeroAndLeadingZeros(t *testing.T) {
	for in, want := range map[string]string{
		"0":      "size 0 is zero: " + sizeHint,
		"000":    "size 000 is zero: " + sizeHint,
		"0B":     `size "0B" is zero: ` + sizeHint,
		"00MB":   `size "00MB" is zero: ` + sizeHint,
		`"0"`:    `size "0" is zero: ` + sizeHint,
		"-5":     "size -5 is negative: " + sizeHint,
		"-5MB":   `invalid size "-5MB": ` + sizeHint,
		"true":   "invalid size true: " + sizeHint,
		"[1]":    "invalid size (a list): " + sizeHint,
		"{a: 1}": "invalid size (a mapping): " + sizeHint,
		"0064MB": `size "0064MB" is larger than strata reads a kept file: at most 16MB (16777216 bytes)`,
	} {
		assertMaxSizeRefused(t, in, want)
	}
	for in, want := range map[string]int64{
		"010MB": 10 << 20, "0064": 64, `"010MB"`: 10 << 20, "0001KB": 1024, "007B": 7,
	} {
		c := load(t, "max_size: "+in+"\n")
		assert.Equal(t, want, c.MaxSize, in)
	}
}

// memory: and graph: name a file of the work tree and nothing else: a
// committed configuration must not make strata read a private file (and
// publish it) or write one outside the work tree or inside .git.
func TestMemoryGraphKeysStayInWorkTree(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	for _, tc := range []struct{ yaml, want string }{
		{"version: 1\nmemory: ~/.ssh/id_rsa\n", ".strata.yaml:2:9: /memory: outside the work tree"},
		{"version: 1\nmemory: .git/info/attributes\n", ".strata.yaml:2:9: /memory: path inside .git"},
		{"version: 1\n\ngraph: ../../.bashrc\n", ".strata.yaml:3:8: /graph: path has an empty"},
		{"version: 1\ngraph: /etc/passwd\n", ".strata.yaml:2:8: /graph: absolute path"},
		{"version: 1\ngraph: .GIT/hooks/x\n", ".strata.yaml:2:8: /graph: .git path element"},
		{"version: 1\nmemory: notes/git~1/MEMORY.md\n", ".strata.yaml:2:9: /memory: .git path element"},
		// A control character would make a tree entry and an output line of
		// the name (docs/contract.md §1): refused, and the message does not
		// repeat the name.
		{"version: 1\nmemory: \"notes/a\\nb.md\"\n", ".strata.yaml:2:9: /memory: control character in path"},
		{"version: 1\ngraph: \"g\\tr.jsonl\"\n", ".strata.yaml:2:8: /graph: control character in path"},
		{"version: 1\nmemory: \"M\\x7f.md\"\n", ".strata.yaml:2:9: /memory: control character in path"},
		{"files:\n  - glob: \".claude/a\\rb.json\"\n", ".strata.yaml:2:11: /files/0/glob: control character in path"},
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte(tc.yaml), 0o644))
		_, err := Load(root)
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.yaml)
		assert.Contains(t, err.Error(), tc.want)
	}
	c := load(t, "version: 1\nmemory: notes/MEMORY.md\ngraph: notes/graph.jsonl\n")
	assert.Equal(t, "notes/MEMORY.md", c.Memory)
	assert.Equal(t, "notes/graph.jsonl", c.Graph)
}

// memory: names a Markdown file and graph: a JSON Lines one, and neither a
// file a rule keeps as another class: the layer protocol appends its lines
// to them unasked, and a committed configuration naming Claude Code's
// settings, a shell start-up file or strata's own configuration made it
// write into those (attack23-hostile F1). Each is a usage error at the key.
func TestMemoryGraphKeysNameLayerFiles(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	const notMD, notJSONL = "not a file named MEMORY.md", "not a JSON Lines file (.jsonl, or memory.json)"
	const inClaude = "in a folder of .claude/ that Claude Code reads as agents, commands or settings"
	for _, tc := range []struct{ yaml, want string }{
		{"memory: .claude/settings.json\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"version: 1\nmemory: .envrc\n", ".strata.yaml:2:9: /memory: " + notMD},
		{"memory: .strata.yaml\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"memory: .gitignore\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"memory: notes/MEMORY.md.sh\n", ".strata.yaml:1:9: /memory: " + notMD},
		// a Markdown file an agent reads as instructions (attack23-recheck N2)
		{"memory: CLAUDE.md\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"memory: sub/AGENTS.md\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"memory: .claude/agents/reviewer.md\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"memory: .claude/agents/MEMORY.md\n", ".strata.yaml:1:9: /memory: " + inClaude},
		{"memory: .Claude/Commands/memory.md\n", ".strata.yaml:1:9: /memory: " + inClaude},
		{"memory: notes/learnings.md\n", ".strata.yaml:1:9: /memory: " + notMD},
		{"graph: .envrc\n", ".strata.yaml:1:8: /graph: " + notJSONL},
		{"graph: package.json\n", ".strata.yaml:1:8: /graph: " + notJSONL},
		{"graph: .claude/settings.json\n", ".strata.yaml:1:8: /graph: " + notJSONL},
		{"graph: .claude/memory/MEMORY.md\n", ".strata.yaml:1:8: /graph: " + notJSONL},
		{"graph: .strata.yaml\n", ".strata.yaml:1:8: /graph: " + notJSONL},
		// the auto-memory file, which memory: may name, is no graph file
		{"graph: " + (&Config{Root: "/r"}).AutoMemory() + "\n", ".strata.yaml:1:8: /graph: outside the work tree: name a repository-relative path (only Claude Code's auto-memory file is kept outside it, found without configuration)"},
		// a built-in rule keeps it as another class
		{"graph: .claude/memory.json\n", ".strata.yaml:1:8: /graph: the built-in rule .claude/*.json keeps this file as claude-json; the L3 graph file must be a file of its own"},
		// in any case: where the file system folds it, it is that file (attack23-recheck N3)
		{"graph: .claude/MEMORY.JSON\n", ".strata.yaml:1:8: /graph: the built-in rule .claude/*.json keeps this file as claude-json"},
		{"graph: .Claude/Memory.json\n", ".strata.yaml:1:8: /graph: the built-in rule .claude/*.json keeps this file as claude-json"},
		// a rule of the user's own gives it another class
		{"files:\n  - {glob: \"docs/*.md\", class: docs, schema: markdown}\nmemory: docs/MEMORY.md\n",
			".strata.yaml:3:9: /memory: the rule /files/0 keeps this file as docs; the L2 memory file must be a file of its own"},
		{"files:\n  - {glob: \"*.jsonl\", class: memory}\ngraph: g.jsonl\n",
			".strata.yaml:3:8: /graph: the rule /files/0 keeps this file as memory; the L3 graph file must be a file of its own"},
	} {
		_, err := Parse("/r", []byte(tc.yaml))
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.yaml)
		assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%s: %s", tc.yaml, err)
	}
	// what the keys are for: Markdown and JSON Lines files, the
	// auto-memory file, a rule that gives the file a schema or its own class
	for _, yaml := range []string{
		"memory: notes/MEMORY.md\ngraph: notes/graph.jsonl\n",
		"memory: notes/memory.MD\ngraph: data/memory.json\n",
		"memory: .claude/MEMORY.md\n",
		"memory: .CLAUDE/memory/MEMORY.md\n",
		"memory: " + (&Config{Root: "/r"}).AutoMemory() + "\n",
		"files:\n  - {glob: \"notes/*\", schema: markdown}\n  - {glob: \"g.jsonl\", class: graph}\nmemory: notes/MEMORY.md\ngraph: g.jsonl\n",
		"files:\n  - {glob: \".claude/memory.json\", class: graph}\ngraph: .claude/memory.json\n",
	} {
		_, err := Parse("/r", []byte(yaml))
		assert.NoError(t, err, yaml)
	}
}

// A rule's schema file is checked as its glob is: a committed configuration
// must not make strata read a schema outside the work tree or inside .git.
// Built-in and format-only schema names are not paths.
func TestSchemaKeyStaysInWorkTree(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	for _, tc := range []struct{ schema, want string }{
		{".git/x.json", "path inside .git"},
		{".GIT/x.json", ".git path element"},
		{"schemas/git~1/x.json", ".git path element"},
		{"../outs/s.json", `path has an empty, "." or ".." segment`},
		{"schemas/../../s.json", `path has an empty, "." or ".." segment`},
		{"/abs.json", "absolute path"},
		{`schemas\s.json`, "backslash in path"},
		{`"a\tb.json"`, "control character in path"},
	} {
		yaml := "files:\n  - {glob: .claude/my.json, schema: " + tc.schema + "}\n"
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte(yaml), 0o644))
		_, err := Load(root)
		var ce *Error
		require.ErrorAs(t, err, &ce, yaml)
		assert.Equal(t, ".strata.yaml:2:37: /files/0/schema: "+tc.want, err.Error(), yaml)
	}
	for _, ok := range []string{"schemas/s.json", "json", "markdown", "mcp-memory", "workflow-state", "unknown-name"} {
		c := load(t, "files:\n  - {glob: .claude/my.json, schema: "+ok+"}\n")
		k, kept := c.Classify(".claude/my.json")
		assert.True(t, kept)
		assert.Equal(t, ok, k.Schema)
	}
}

// A .strata.yaml symlink is followed only to a file of the work tree outside
// the git directories. Any other is refused with one line that quotes
// nothing of the target (the YAML error would), and is not a configuration
// mistake (*Error, exit 2) but a refusal (exit 3).
func TestConfigSymlink(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	secret := filepath.Join(t.TempDir(), "sec")
	require.NoError(t, os.WriteFile(secret, []byte("files:\n  - glob: a.json\n    ttl: \"AKIA-SECRET\"\n"), 0o644))
	outDir := filepath.Dir(secret)
	for _, tc := range []struct {
		name   string
		setup  func(root string) string // returns the link target
		gitDir string                   // repo-relative, passed to Load
		want   string
	}{
		{"outside", func(string) string { return secret }, "", "out of the work tree"},
		{"relative outside", func(root string) string {
			rel, err := filepath.Rel(root, secret)
			require.NoError(t, err)
			return rel
		}, "", "out of the work tree"},
		{"through a linked dir", func(root string) string {
			require.NoError(t, os.Symlink(outDir, filepath.Join(root, "conf")))
			return "conf/sec"
		}, "", "out of the work tree"},
		{"proc", func(string) string {
			if _, err := os.Stat("/proc/self/status"); err != nil {
				return secret // no /proc here
			}
			return "/proc/self/status"
		}, "", "out of the work tree"},
		{"into .git", func(root string) string {
			require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644))
			return ".git/config"
		}, "", "into the git directory"},
		{"into a git dir of another name", func(root string) string {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "gd"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "gd", "s.yaml"), []byte("version: 1\n"), 0o644))
			return "gd/s.yaml"
		}, "gd", "into the git directory"},
		{"dangling", func(string) string { return "nothere.yaml" }, "", "that does not resolve"},
	} {
		root := t.TempDir()
		require.NoError(t, os.Symlink(tc.setup(root), filepath.Join(root, FileName)))
		var gitDirs []string
		if tc.gitDir != "" {
			gitDirs = append(gitDirs, filepath.Join(root, tc.gitDir))
		}
		_, err := Load(root, gitDirs...)
		require.Error(t, err, tc.name)
		assert.Equal(t, "read .strata.yaml: a symbolic link "+tc.want+"; not followed", err.Error(), tc.name)
		var ce *Error
		assert.False(t, errors.As(err, &ce), tc.name)
	}

	// A link to a file of the work tree is followed.
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "conf"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "conf", "strata.yaml"), []byte("files:\n  - {glob: notes/*.json, schema: json}\n"), 0o644))
	require.NoError(t, os.Symlink("conf/strata.yaml", filepath.Join(root, FileName)))
	c, err := Load(root, filepath.Join(root, ".git"))
	require.NoError(t, err)
	_, kept := c.Classify("notes/a.json")
	assert.True(t, kept, "the linked configuration's rule applies")
}

func TestParseTTL(t *testing.T) {
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "90m": 90 * time.Minute, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour} {
		if got, err := ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "1w", "h", "-1h", "1.5h", "99999999999999d"} {
		if _, err := ParseTTL(bad); err == nil {
			t.Errorf("ParseTTL(%q) accepted", bad)
		}
	}
}

// globMatch answers as path.Match does (a malformed glob matching nothing)
// for every glob and path, wildcards, escapes and malformed globs included.
func FuzzGlobMatch(f *testing.F) {
	for _, g := range []string{".claude/*.json", ".claude/workflow-state.json", "PhaseOutputs/*/phase-*.json",
		"a/[bc]/d", `a\*b`, "a/[", "*", "", "a?c", `\`, "[]a]", "x/**"} {
		for _, p := range []string{".claude/a.json", ".claude/workflow-state.json", "PhaseOutputs/t1/phase-2.json",
			"a/b/d", "a*b", "a/[", "abc", "", "x/y", "]"} {
			f.Add(g, p)
		}
	}
	f.Fuzz(func(t *testing.T, glob, rel string) {
		want, _ := path.Match(glob, rel)
		if got := globMatch(glob, rel); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, path.Match says %v", glob, rel, got, want)
		}
	})
}

// Every default L2 candidate is kept while memory: is unset (a pulled
// teammate's file moves L2, the old one stays kept); none but the one named
// when it is set; and the home view keeps exactly its one file, whatever a
// remote's home tree holds.
func TestOtherMemoryFiles(t *testing.T) {
	c := load(t, "")
	for _, p := range MemoryCandidates {
		k, ok := c.Classify(p)
		require.True(t, ok, p)
		require.Equal(t, state.ClassMemory, k.Class, p)
	}
	pinned := load(t, "version: 1\nmemory: MEMORY.md\n")
	_, ok := pinned.Classify(".claude/MEMORY.md")
	require.False(t, ok, "memory: set keeps only its file")
	home := c.HomeView(t.TempDir(), "memory/MEMORY.md")
	for _, p := range MemoryCandidates {
		_, ok := home.Classify(p)
		require.False(t, ok, "home view keeps %s", p)
	}
}

// TestNamesKeepNoPrivateFile: a rule naming a private file exactly does not
// keep it (.strata.yaml may come with the repository: attack19-remote 5,
// verify-remote N2, a pull's staged config); the user's own
// strata.keepPrivate does, and the reason says so.
func TestNamesKeepNoPrivateFile(t *testing.T) {
	c := load(t, `
files:
  - glob: .claude/settings.local.json
  - glob: .claude/token.json
  - glob: MEMORY.md
`)
	c.Filter = func(rel string) string {
		if rel == ".claude/token.json" || rel == "MEMORY.md" {
			return "crypt"
		}
		return ""
	}
	keep := map[string]bool{}
	c.KeepPrivate = func(rel string) bool { return keep[rel] }
	for _, p := range []string{".claude/settings.local.json", ".claude/token.json", "MEMORY.md"} {
		_, ok := c.Classify(p)
		assert.False(t, ok, "named: %s", p)
		assert.False(t, c.Named(p), "sync asks git about %s", p)
		assert.Contains(t, c.Private(p), ".strata.yaml names it, but only your git config keeps a private file (to keep it: git config --add strata.keepPrivate "+p+")")
	}
	keep[".claude/token.json"] = true
	_, ok := c.Classify(".claude/token.json")
	assert.True(t, ok, "strata.keepPrivate")
	assert.True(t, c.Named(".claude/token.json"), "strata.keepPrivate")
	_, ok = c.Classify(".claude/other.json")
	assert.True(t, ok, "not private: kept as before")
}

// TestUntrackedOnlyUserRuleIsPrivate: a file git does not track that only
// a .strata.yaml rule keeps is private (attack25 K4: a committed config/*
// rule published the user's untracked config/credentials.yml), whether the
// rule names it or not; a tracked one is kept, and so is an untracked file
// a built-in rule matches (a user rule giving it another schema included)
// and the layer files. The user's strata.keepPrivate keeps it.
func TestUntrackedOnlyUserRuleIsPrivate(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	c := load(t, `
files:
  - {glob: "config/*", schema: yaml}
  - {glob: "notes/secret.md", schema: markdown}
  - {glob: ".claude/*.json", schema: json}
`)
	tracked := map[string]bool{"config/app.yml": true}
	c.Tracked = func(rel string) bool { return tracked[rel] }
	keep := map[string]bool{}
	c.KeepPrivate = func(rel string) bool { return keep[rel] }
	for _, p := range []string{"config/credentials.yml", "notes/secret.md"} {
		_, ok := c.Classify(p)
		assert.False(t, ok, "kept: %s", p)
		assert.Equal(t, "git does not track it and only a .strata.yaml rule keeps it", c.Private(p), p)
		assert.True(t, c.OnlyUserRule(p), p)
	}
	for _, p := range []string{"config/app.yml", ".claude/workflow-state.json", ".claude/x.json", "PhaseOutputs/p1/phase-1.json", ".claude/memory/MEMORY.md", DefaultGraph} {
		_, ok := c.Classify(p)
		assert.True(t, ok, "not kept: %s", p)
	}
	for _, p := range []string{".claude/x.json", ".claude/memory/MEMORY.md", DefaultGraph, "elsewhere/x.yml"} {
		assert.False(t, c.OnlyUserRule(p), p)
	}
	keep["config/credentials.yml"] = true
	_, ok := c.Classify("config/credentials.yml")
	assert.True(t, ok, "strata.keepPrivate")
	// git's other reasons come first: an ignored file says so
	c.Ignored = func(rel string) bool { return rel == "notes/secret.md" }
	assert.Contains(t, c.Private("notes/secret.md"), "ignored by git; .strata.yaml names it")
	// without an answer (nil) every path counts as tracked
	c.Tracked, c.Ignored = nil, nil
	_, ok = c.Classify("notes/secret.md")
	assert.True(t, ok)
}

// TestHiddenIsPrivate: a tracked file whose local changes git is told to
// ignore (skip-worktree, assume-unchanged) is private whatever rule keeps
// it — a .strata.yaml rule, a built-in one, a layer file — since git never
// publishes that version (attack26 F1: a committed config/credentials.yml
// template marked skip-worktree holding the real password); the user's
// strata.keepPrivate keeps it.
func TestHiddenIsPrivate(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	c := load(t, "files:\n  - {glob: \"config/*\", schema: yaml}\n")
	hidden := map[string]string{"config/credentials.yml": "skip-worktree", ".claude/settings.json": "assume-unchanged", ".claude/memory/MEMORY.md": "skip-worktree"}
	c.Tracked = func(string) bool { return true }
	c.Hidden = func(rel string) string { return hidden[rel] }
	keep := map[string]bool{}
	c.KeepPrivate = func(rel string) bool { return keep[rel] }
	for p, flag := range hidden {
		_, ok := c.Classify(p)
		assert.False(t, ok, "kept: %s", p)
		assert.Equal(t, "git is told to ignore its local changes ("+flag+")", c.Private(p), p)
	}
	for _, p := range []string{"config/app.yml", ".claude/workflow-state.json"} {
		_, ok := c.Classify(p)
		assert.True(t, ok, "not kept: %s", p)
	}
	keep["config/credentials.yml"] = true
	_, ok := c.Classify("config/credentials.yml")
	assert.True(t, ok, "strata.keepPrivate")
}

// TestLocalJSONFolded: the *.local.json convention holds for every name a
// case-insensitive file system takes for one (attack24 G2: a peer's
// .claude/Settings.Local.json, on a Mac the user's settings.local.json,
// was kept, so sync wrote it over the user's keys).
func TestLocalJSONFolded(t *testing.T) {
	c := load(t, "version: 1\nfiles:\n  - glob: .claude/*\n    schema: json\n")
	for _, p := range []string{".claude/settings.local.json", ".claude/Settings.Local.json", ".claude/SETTINGS.LOCAL.JSON", ".claude/x.local.json.", ".claude/x.Local.json "} {
		_, ok := c.Classify(p)
		assert.False(t, ok, "kept: %q", p)
		assert.Equal(t, "a *.local.json file (private by convention)", c.Private(p), p)
	}
	_, ok := c.Classify(".claude/localjson.json")
	assert.True(t, ok, "not private")
}

// A value error in .strata.yaml names the value itself: its line and column
// and its JSON pointer, the rule's index included (attack23 F15: an
// "ignore: maybe" in rule 0 was reported at the files key as /files/ignore).
func TestValueErrorPosition(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	for _, tc := range []struct{ yaml, want string }{
		// the value's type, in a rule
		{"files:\n  - glob: a/*.json\n    ignore: maybe\n", ".strata.yaml:3:13: /files/0/ignore: want true or false, not string"},
		{"files:\n  - glob: a/*.json\n  - glob: b/*.json\n    ignore: 1\n", ".strata.yaml:4:13: /files/1/ignore: want true or false, not number"},
		{"files:\n  - glob: 5\n", ".strata.yaml:2:11: /files/0/glob: want a string, not number"},
		{"files:\n  - glob: a/*.json\n  - glob: b/*.json\n    schema: [x]\n", ".strata.yaml:4:13: /files/1/schema: want a string, not array"},
		{"files:\n  - glob: a/*.json\n    class: {a: 1}\n", ".strata.yaml:3:12: /files/0/class: want a string, not object"},
		{"files:\n  - glob: a/*.json\n    format: true\n", ".strata.yaml:3:13: /files/0/format: want a string, not bool"},
		{"files:\n  - glob: a/*.json\n    ttl: 5\n", ".strata.yaml:3:10: /files/0/ttl: want a string, not number"},
		{"files:\n  - glob: a/*.json\n  - b/*.json\n", ".strata.yaml:3:5: /files/1: want a mapping, not string"},
		// the value's type, at the top
		{"files: a/*.json\n", ".strata.yaml:1:8: /files: want a list, not string"},
		{"version: one\n", ".strata.yaml:1:10: /version: want a number, not string"},
		{"version: 99999999999999999999999\n", ".strata.yaml:1:10: /version: 99999999999999999999999 is too large"},
		{"version: 1.5\n", ".strata.yaml:1:10: /version: want a whole number, not 1.5"},
		{"memory: [a.md]\n", ".strata.yaml:1:9: /memory: want a string, not array"},
		{"memory_create: maybe\n", ".strata.yaml:1:16: /memory_create: want true or false, not string"},
		{"sync_home: 1\n", ".strata.yaml:1:12: /sync_home: want true or false, not number"},
		// the value's content, in a rule and at the top
		{"files:\n  - glob: a/*.json\n  - schema: json\n", ".strata.yaml:3:5: /files/1: glob: required"},
		{"files:\n  - glob: \"a/[\"\n", ".strata.yaml:2:11: /files/0/glob: syntax error in pattern"},
		{"files:\n  - glob: a/*.json\n  - glob: ../b.json\n", ".strata.yaml:3:11: /files/1/glob: path has an empty"},
		{"files:\n  - glob: a/*.json\n    schema: ../s.json\n", ".strata.yaml:3:13: /files/0/schema: path has an empty"},
		{"files:\n  - glob: a/*.json\n    format: xml\n", ".strata.yaml:3:13: /files/0/format: unknown format \"xml\""},
		// a class is a name: it goes raw into trailers and the status table (attack35b L1)
		{"files:\n  - glob: a/*.json\n    class: \"ok\\e]0;pwned\\a\\e[2J\"\n", `.strata.yaml:3:12: /files/0/class: class "ok\x1b]0;pwned\a\x1b[2J" is not a name: want ASCII letters`},
		{"files:\n  - glob: a/*.json\n    class: \"a\\u202eb\"\n", `/files/0/class: class "a\u202eb" is not a name`},
		{"files:\n  - glob: a/*.json\n    class: -x\n", `/files/0/class: class "-x" is not a name`},
		{"files:\n  - glob: a/*.json\n    class: a b\n", `/files/0/class: class "a b" is not a name`},
		{"files:\n  - glob: a/*.json\n    class: " + strings.Repeat("x", MaxClass+1) + "\n", `/files/0/class: class "` + strings.Repeat("x", MaxClass) + `..." is not a name`},
		{"files:\n  - glob: a/*.json\n    ttl: soon\n", ".strata.yaml:3:10: /files/0/ttl: "},
		{"ttl: soon\n", ".strata.yaml:1:6: /ttl: "},
		{"max_size: huge\n", ".strata.yaml:1:11: /max_size: "},
	} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, FileName), []byte(tc.yaml), 0o644))
		_, err := Load(root)
		var ce *Error
		require.ErrorAs(t, err, &ce, tc.yaml)
		assert.Contains(t, err.Error(), tc.want, tc.yaml)
	}
}

// A rule's class is a name, as the built-in classes are; every class of
// the built-in rules passes the check a user's rule gets (attack35b L1).
func TestClassNames(t *testing.T) {
	for _, r := range DefaultRules {
		assert.NoError(t, checkClass(string(r.Class)), r.Class)
	}
	for _, c := range []string{"", "workflow-state", "docs", "My_Class.v2", "9lives", strings.Repeat("x", MaxClass)} {
		assert.NoError(t, checkClass(c), c)
	}
	for _, c := range []string{"-x", ".x", "_x", "a b", "a/b", "café", "a\x1b[2J", "a\u202eb", "a\tb", "a:b"} {
		assert.Error(t, checkClass(c), c)
	}
}

// A .strata.yaml link to a file of the work tree whose folder is swapped
// for a symbolic link out of the tree (or into .git) after readConfig's
// checks and before its read (attack25 K1) is refused with the words of a
// link out, the outside file never read; one swapped for a folder of the
// tree is followed.
func TestConfigSymlinkFolderSwappedBeforeTheRead(t *testing.T) {
	t.Setenv("MEMORY_FILE_PATH", "")
	outDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outDir, "strata.yaml"), []byte("files:\n  - glob: \"AKIA-SECRET\n"), 0o644))
	for _, tc := range []struct {
		name   string
		target func(root string) string
		want   string // "": read, the other folder's rule applies
	}{
		{"out", func(string) string { return outDir }, "a symbolic link out of the work tree; not followed"},
		{"into .git", func(root string) string { return filepath.Join(root, ".git") }, "a symbolic link into the git directory; not followed"},
		{"in the tree", func(root string) string { return "other" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for dir, glob := range map[string]string{"conf": "notes/*.json", "other": "other/*.json", ".git": "git/*.json"} {
				require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, dir, "strata.yaml"), []byte("files:\n  - {glob: "+glob+", schema: json}\n"), 0o644))
			}
			require.NoError(t, os.Symlink("conf/strata.yaml", filepath.Join(root, FileName)))
			beforeConfigRead = func() {
				conf := filepath.Join(root, "conf")
				require.NoError(t, os.Rename(conf, conf+".real"))
				require.NoError(t, os.Symlink(tc.target(root), conf))
			}
			t.Cleanup(func() { beforeConfigRead = nil })
			c, err := Load(root, filepath.Join(root, ".git"))
			if tc.want != "" {
				require.Error(t, err)
				assert.Equal(t, "read .strata.yaml: "+tc.want, err.Error())
				return
			}
			require.NoError(t, err)
			_, kept := c.Classify("other/a.json")
			assert.True(t, kept, "the in-tree folder's configuration applies")
		})
	}
}

// A kept file whose absolute name is longer than PATH_MAX is listed, so
// that record, status and validate report it as a file they cannot read,
// never leave it out without a word (attack36 M4).
func TestScanPastPathMax(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	for len(root) < 3900 {
		root = filepath.Join(root, strings.Repeat("d", min(250, 3950-len(root))))
		require.NoError(t, os.Mkdir(root, 0o755))
	}
	rel := "PhaseOutputs/" + strings.Repeat("s", 250) + "/phase-01-query.json"
	require.Greater(t, len(root)+1+len(rel), 4096)
	r, err := os.OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.MkdirAll(filepath.Dir(rel), 0o755))
	require.NoError(t, r.WriteFile(rel, []byte("{}\n"), 0o644))
	c, err := Load(root)
	require.NoError(t, err)
	files, err := c.Scan()
	require.NoError(t, err)
	assert.Equal(t, []string{rel}, files)
}
