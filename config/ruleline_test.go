package config

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rule init suggests for one file, pasted under files:, loads whatever
// the file is named (YAML's ": ", " #", "{a,b}", quotes, a leading "*")
// and keeps only that file under its schema: a "*" in the name is not a
// wildcard that would give every phase-03 output the schema json (attack23
// F10).
func TestRuleLineOfLiteralGlob(t *testing.T) {
	for _, name := range []string{
		"PhaseOutputs/s1/phase-01-q: #x.json",
		"PhaseOutputs/s1/phase-03-*.json",
		"PhaseOutputs/s1/phase-04-{a,b}.json",
		"PhaseOutputs/s1/phase-05-[ab]?.json",
		`.claude/it's "q" & *x.json`,
		".claude/*.json",
		".claude/café\u202e.json",
	} {
		line, err := RuleLine(LiteralGlob(name), "json")
		require.NoError(t, err)
		assert.NotContains(t, line, "\u202e", "a format character is escaped")
		c := load(t, "version: 1\nfiles:\n  - "+line+"\n")
		require.NotEmpty(t, c.UserRules(), line)
		r := c.UserRules()[0]
		assert.Equal(t, "json", r.Schema, line)
		assert.True(t, globMatch(r.Glob, name), "%s does not match %q", line, name)
		for _, other := range []string{
			"PhaseOutputs/s1/phase-03-search.json", "PhaseOutputs/s1/phase-05-ax.json",
			".claude/workflow-state.json", strings.Replace(name, "json", "yaml", 1),
		} {
			if other != name {
				assert.False(t, globMatch(r.Glob, other), "%s matches %q too", line, other)
			}
		}
	}
}

// ruleNames are names whose quoting Go's and YAML's escapes disagree on,
// or nearly: control characters YAML names (\a, \v, \e), DEL and C1
// characters, the line breaks yaml.v3 reads (NEL, U+2028, U+2029), a
// no-break space, format characters, a noncharacter, private use, and a
// character past the BMP.
var ruleNames = []string{
	"", "a", `.claude/it's "q" \ x.json`, "\x00", "\a\b\t\n\v\f\r\x1b", "\x7f", "\u0085", "\u00a0",
	"\u00ff", "\u2028\u2029", "\u202e\u200b\ufeff", "\ufffd", "\uffff", "\ue000", "\U0001f600", "\U0010ffff",
	"x\\xff", `\u2028`, "# c", "- a", ": b", "'q'", "{a, b}", "[c]", "*x", "&a", "!t", "%p", "@a", "`b`", "  sp  ",
}

// A rule's glob reads back as the name it was written for: QuoteYAML's
// escapes are YAML's (Go's "\xff" is a byte, YAML's the character U+00FF),
// and a name that is not UTF-8, which YAML cannot hold, is refused, never
// written as a rule naming another file (attack34 L3).
func TestRuleLineRoundTrip(t *testing.T) {
	for _, name := range ruleNames {
		checkRuleRoundTrip(t, name)
	}
	for _, name := range []string{".claude/n\xff.json", "\xc3", "a\xed\xa0\x80b"} { // a lone byte, a cut rune, a surrogate
		_, err := RuleLine(name, "json")
		require.Error(t, err, "%q", name)
		assert.Contains(t, err.Error(), "is not UTF-8 text")
		assert.Contains(t, err.Error(), `\x`, "the name is quoted")
		_, err = RuleLine("a", name)
		require.Error(t, err)
	}
}

func checkRuleRoundTrip(t *testing.T, name string) {
	t.Helper()
	line, err := RuleLine(name, name)
	if !utf8.ValidString(name) {
		require.Error(t, err, "%q", name)
		return
	}
	require.NoError(t, err, "%q", name)
	assert.False(t, strings.ContainsAny(line, "\n\r\u0085\u2028\u2029"), "one line: %q", line)
	var doc struct {
		Files []struct{ Glob, Schema string }
	}
	require.NoError(t, yaml.Unmarshal([]byte("files:\n  - "+line+"\n"), &doc), "%q", line)
	require.Len(t, doc.Files, 1, "%q", line)
	assert.Equal(t, name, doc.Files[0].Glob, "%q", line)
	assert.Equal(t, name, doc.Files[0].Schema, "%q", line)
}

func FuzzRuleLineRoundTrip(f *testing.F) {
	for _, name := range ruleNames {
		f.Add(name)
	}
	f.Add(".claude/n\xff.json")
	f.Fuzz(func(t *testing.T, name string) { checkRuleRoundTrip(t, name) })
}
