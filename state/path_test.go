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

// TestFoldName: the names a case-insensitive file system takes for
// settings.json fold to it; others do not (attack24 G2).
func TestFoldName(t *testing.T) {
	for _, n := range []string{"settings.json", "SETTINGS.json", "Settings.JSON", "settings.json.", "settings.json . ", "settings.json::$DATA", "sett\u200cings.json", "\ufeffsettings.json", "\u017fettings.json", "settıngs.json"} {
		if got := FoldName(n); got != "settings.json" {
			t.Errorf("FoldName(%q) = %q, want settings.json", n, got)
		}
	}
	for _, n := range []string{"settings.jsonx", "settings_json", ".settings.json", "settings.js"} {
		if got := FoldName(n); got == "settings.json" {
			t.Errorf("FoldName(%q) = settings.json", n)
		}
	}
}
