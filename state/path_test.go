package state

import (
	"strings"
	"testing"
)

func TestCheckPath(t *testing.T) {
	good := []string{
		".claude/workflow-state.json", "PhaseOutcomes/a/001-plan.yaml", "MEMORY.md",
		".gitignore", ".github/x.json", "git~2", "a/.gitx", "a/..b", "a/b..", "~/.claude/x",
		".claude/my file.json", "gi t~1",
		strings.Repeat("d/", MaxPathDepth-1) + "f", strings.Repeat("x", MaxPathLen),
	}
	bad := []string{
		"", "/abs.json", "..", ".", ".git", ".GIT/config", "a/.Git", ".claude/../../x",
		"a//b", "a/", "a/./b", "git~1", "GIT~1/x", ".git ", ".git.", ".git. . .", ".git::$INDEX_ALLOCATION",
		".g\u200cit", "\ufeff.git", ".gi\u200dT", `a\.git`, `a\..\b`, "a\x00b",
		strings.Repeat("d/", MaxPathDepth) + "f", strings.Repeat("x", MaxPathLen+1),
	}
	for _, p := range good {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v, want ok", p, err)
		}
	}
	for _, p := range bad {
		if err := CheckPath(p); err == nil {
			t.Errorf("CheckPath(%q) = ok, want refused", p)
		}
	}
}
