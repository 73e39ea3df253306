package engine

import (
	"reflect"
	"testing"
)

func TestChangesWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		before, after string
		whole         bool
		want          []string
	}{
		{`{"model": "opus"}`, `{"model": "sonnet"}`, false, nil},
		{`{"hooks": {"A": 1}}`, "{\n  \"hooks\" : { \"A\" : 1 }\n}\n", false, nil}, // layout only
		{``, `{"hooks": {}}`, false, []string{"hooks"}},                            // a new file
		{`{"env": {"A": "1"}}`, `{"env": {"A": "2"}, "apiKeyHelper": "x"}`, false, []string{"apiKeyHelper", "env"}},
		{`{"permissions": {"allow": []}}`, `{}`, false, []string{"permissions"}}, // taken away counts too
		{`not json`, `{"model": "x"}`, false, []string{"the whole file, unreadable as a JSON object here"}},
		{`{"model": "x"}`, `{"hooks": {"A": 1}, "x": 1e400}`, false, []string{"hooks", "x"}}, // verify-remote N3: 1e400 read as written
		{`{"model": "x"}`, "\ufeff{\"hooks\": {}}", false, []string{"the whole file, unreadable as a JSON object here"}},
		{`{"a": 1e400}`, `{"a": 1e400}`, false, nil},
		{`{}`, `{"enabledPlugins": {"p@m": true}, "sandbox": {}}`, false, []string{"enabledPlugins", "sandbox"}},                // N4
		{`{"theme": "dark"}`, `{"theme": "light", "model": "x"}`, false, nil},                                                   // known harmless
		{`{}`, `{"fileSuggestion": {"type": "command"}, "somethingNew": 1}`, false, []string{"fileSuggestion", "somethingNew"}}, // final F2: unknown members fail closed
		{`{"mcpServers": {}}`, `{"mcpServers": {}}`, true, nil},
		{`{"mcpServers": {}}`, `{"mcpServers": {} }`, true, []string{"mcpServers"}},
	} {
		if got := ChangesWhatRuns([]byte(tc.before), []byte(tc.after), tc.whole); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q -> %q: %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
	for rel, want := range map[string]bool{
		".claude/settings.json": true, ".claude/settings.local.json": true, "sub/.claude/settings.json": true, "x.claude/settings.json": false,
		".mcp.json": true, ".claude/workflow-state.json": false, "settings.json": false,
		// attack24 G2: the same file on a case-insensitive file system
		".claude/SETTINGS.json": true, ".claude/Settings.Local.json": true, ".claude/settings.JSON": true,
		".CLAUDE/settings.json": true, "sub/.Claude/Settings.json": true, ".MCP.json": true, ".Mcp.Json": true,
		".claude/settings.json.": true, ".claude/settings.json ": true, ".claude/settings.json::$DATA": true,
		".claude/sett\u200cings.json": true, ".claude/\u017fettings.json": true, `.claude\SETTINGS.json`: true,
		".claude/settings.jsonx": false, ".claude/my-settings.json": false,
		// attack24 recheck H3: NTFS 8.3 short names of the same files
		".claude/SETTIN~1.JSO": true, ".claude/settin~2.jso": true, ".claude/SETTIN~12.JSO": true,
		"CLAUDE~1/SETTIN~1.JSO": true, "CLAUDE~1/settings.json": true, "MCP~1.JSO": true, "mcp~3.jso": true,
		".claude/SETTIN~1.TXT": false, ".claude/SETTIN~.JSO": false, ".claude/SETTIN~1X.JSO": false,
		".claude/WORKFL~1.JSO": false, "OTHER~1/SETTIN~1.JSO": false, ".claude/SETTINGS~1.JSO": false,
	} {
		if _, ok := ClaudeRuns(rel); ok != want {
			t.Errorf("ClaudeRuns(%s) = %v", rel, ok)
		}
	}
}
