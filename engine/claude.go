package engine

import (
	"bytes"
	"encoding/json"
	"path"
	"sort"
	"strings"

	"github.com/strata-dev/strata/state"
)

// harmlessMembers are the members of Claude Code's settings files known to
// make it run nothing and let it run nothing more: a change of any other
// member (hooks, apiKeyHelper, statusLine, fileSuggestion, env,
// permissions, plugins, MCP servers, the sandbox, and every member Claude
// Code adds later) is one a remote version may not make without the user
// (attack19 final F2: a list of the members that run something fell
// behind Claude Code's own; this one fails closed). sync keeps the local
// version against a remote one that changes them; restore --all leaves
// such a file for the user to name.
var harmlessMembers = map[string]bool{
	"$schema": true, "model": true, "theme": true, "outputStyle": true, "language": true,
	"verbose": true, "cleanupPeriodDays": true, "includeCoAuthoredBy": true,
	"spinnerTipsEnabled": true, "alwaysThinkingEnabled": true,
}

// ClaudeRuns reports whether rel is a file Claude Code reads what it runs
// from: its settings files (.claude/settings.json, settings.local.json, at
// any depth a rule keeps them) and the project's MCP servers (.mcp.json,
// all of which is commands). The names are compared as a case-insensitive
// file system compares them (state.FoldName), with a backslash taken for
// the separator NTFS takes it for, on every file system: on a Mac or on
// Windows .claude/SETTINGS.json is settings.json (attack24 G2).
//
// An NTFS 8.3 short name of any of them (SETTIN~1.JSO in CLAUDE~1, MCP~1.JSO)
// is one too: on Windows it opens that file (attack24 recheck H3).
func ClaudeRuns(rel string) (whole, ok bool) {
	rel = strings.ReplaceAll(rel, `\`, "/")
	name := path.Base(rel)
	base, dir := state.FoldName(name), path.Base(path.Dir(rel))
	switch {
	case base == ".mcp.json" || state.ShortNameOf(name, ".mcp.json"):
		return true, true
	case state.FoldName(dir) == ".claude" || state.ShortNameOf(dir, ".claude"):
		return false, base == "settings.json" || base == "settings.local.json" ||
			state.ShortNameOf(name, "settings.json") || state.ShortNameOf(name, "settings.local.json")
	}
	return false, false
}

// ChangesWhatRuns reports which members other than harmlessMembers differ
// between two versions of a Claude Code settings file (an absent or empty one has none; one that
// differs and is not one JSON object here counts as changing them all),
// or, for a file that is all commands (whole), whether it differs at all.
func ChangesWhatRuns(before, after []byte, whole bool) []string {
	if whole {
		if bytes.Equal(before, after) {
			return nil
		}
		return []string{"mcpServers"}
	}
	a, aok := members(before)
	b, bok := members(after)
	if !bok && !bytes.Equal(before, after) || !aok && len(bytes.TrimSpace(before)) > 0 && !bytes.Equal(before, after) {
		// a version this reading cannot take apart (a number past float64,
		// 1e400, which Claude Code reads as Infinity; a byte-order mark)
		// may hold anything: taken for one that changes it all
		// (attack19 verify-remote N3)
		return []string{"the whole file, unreadable as a JSON object here"}
	}
	var out []string
	for m := range a {
		if !harmlessMembers[m] && !bytes.Equal(a[m], b[m]) {
			out = append(out, m)
		}
	}
	for m := range b {
		if _, had := a[m]; !had && !harmlessMembers[m] {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// ShownChanges is what ChangesWhatRuns found as a report line names it:
// each member name quoted where it holds a control byte or other text a
// terminal would act on (the names come from a remote's or a past
// version's JSON), joined by ", ". Sync's kept-local line and restore
// --all's held line both print it.
func ShownChanges(changes []string) string {
	shown := make([]string, len(changes))
	for i, m := range changes {
		shown[i] = state.TermSafe(m)
	}
	return strings.Join(shown, ", ")
}

// members decodes a JSON object's members, each re-encoded so that layout
// does not count (keys sorted by encoding/json; numbers as written). ok is
// false when data is not one JSON object; an empty file has no members.
func members(data []byte) (m map[string][]byte, ok bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, true
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&obj) != nil || obj == nil || dec.More() {
		return nil, false
	}
	out := map[string][]byte{}
	for k, v := range obj {
		out[k], _ = json.Marshal(v)
	}
	return out, true
}
