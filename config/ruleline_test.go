package config

import (
	"strings"
	"testing"

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
		line := RuleLine(LiteralGlob(name), "json")
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
