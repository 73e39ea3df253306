package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/strata-dev/strata/jsonedit"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/validate"
)

// The Claude Code hooks strata adds to .claude/settings.json (docs/contract.md §8). The
// commands name `strata` on PATH, not an absolute path: settings.json is
// usually committed and shared by everyone who works in the repository.
const (
	ResumeCommand   = "strata resume --hook"   // SessionStart: its output joins the new session's context
	ValidateCommand = "strata validate --hook" // PostToolUse: exit 2 tells the agent what it wrote is invalid
	ValidateMatcher = "Write|Edit|MultiEdit"
)

// SettingsPath is Claude Code's project settings file.
const SettingsPath = ".claude/settings.json"

// claudeEntry is one of strata's entries in an event's array.
type claudeEntry struct {
	event   string
	matcher string // "" for none
	command string
}

var claudeEntries = []claudeEntry{
	{event: "SessionStart", command: ResumeCommand},
	{event: "PostToolUse", matcher: ValidateMatcher, command: ValidateCommand},
}

// raw returns the entry as Claude Code's settings format writes it:
// {"matcher": ..., "hooks": [{"type": "command", "command": ...}]}.
func (c claudeEntry) raw() json.RawMessage {
	var b strings.Builder
	b.WriteString("{")
	if c.matcher != "" {
		b.WriteString(`"matcher":` + jsonString(c.matcher) + ",")
	}
	b.WriteString(`"hooks":[{"type":"command","command":` + jsonString(c.command) + `}]}`)
	return json.RawMessage(b.String())
}

// InstallClaude merges strata's SessionStart and PostToolUse entries into the
// content of a settings.json (nil or empty for a missing file) and returns the
// new content and the record of what it added, or a nil record when both
// entries are already there (an entry with a hook of type "command"
// running the same command counts, whatever its matcher or other fields).
// Everything else is kept: other keys in their order, other events and
// their entries, and the exact text of every string and number; what it
// adds is laid out as its neighbours are (a new file is indented with two
// spaces and ends with a newline). Content that is not one JSON object
// (a syntax error, a duplicate key), or whose "hooks" is not an object of
// arrays, is reported as state.Problems naming the line, column and JSON
// Pointer.
func InstallClaude(path string, data []byte) (out []byte, in *Added, err error) {
	if err := checkJSON(path, data); err != nil {
		return nil, nil, err
	}
	var created []string
	out, changed, err := keepBOM(data, func(data []byte) ([]byte, bool, error) {
		var out []byte
		var changed bool
		out, changed, created, err = installClaude(path, data)
		return out, changed, err
	})
	if err != nil {
		return nil, nil, positioned(path, data, err)
	}
	if !changed {
		return data, nil, nil
	}
	return out, added(len(data) > 0, data, out, created), nil
}

func installClaude(path string, data []byte) (out []byte, changed bool, created []string, err error) {
	_, hooks, err := decodeSettings(path, data)
	if err != nil {
		return nil, false, nil, err
	}
	if out = data; len(bytes.TrimSpace(data)) == 0 {
		out = []byte("{}\n")
	}
	for _, c := range claudeEntries {
		arr, err := eventArray(path, hooks, c.event)
		if err != nil {
			return nil, false, nil, err
		}
		found := false
		for _, el := range arr {
			if runs(el, c.command) {
				found = true
				break
			}
		}
		if found {
			continue
		}
		if raw, ok := valueAt(out, []string{"hooks"}); !ok || isNull(raw) {
			created = append(created, "/hooks")
		}
		if raw, ok := valueAt(out, []string{"hooks", c.event}); !ok || isNull(raw) {
			created = append(created, "/hooks/"+c.event)
		}
		if out, err = jsonedit.Append(out, []string{"hooks", c.event}, c.raw()); err != nil {
			return nil, false, nil, fmt.Errorf("%s: %w", path, err)
		}
		changed = true
	}
	if !changed {
		return data, false, nil, nil
	}
	return out, true, created, nil
}

// ClaudeInstalled reports whether a settings.json's content has both of
// strata's hooks as InstallClaude finds them: under its event, an entry
// with a hook of type "command" running strata's command (whatever its
// matcher or other fields). A "prompt" hook, or any other text, that only
// mentions the command does not count. Content that is not a JSON object
// with a "hooks" object of arrays is an error (state.Problems).
func ClaudeInstalled(path string, data []byte) (bool, error) {
	if err := checkJSON(path, data); err != nil {
		return false, err
	}
	_, hooks, err := decodeSettings(path, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if err != nil {
		return false, positioned(path, data, err)
	}
	for _, c := range claudeEntries {
		arr, err := eventArray(path, hooks, c.event)
		if err != nil {
			return false, positioned(path, data, err)
		}
		if !slices.ContainsFunc(arr, func(el json.RawMessage) bool { return runs(el, c.command) }) {
			return false, nil
		}
	}
	return true, nil
}

// UninstallClaude removes from a settings.json the entries in (the
// record of this clone's install; nil when there is none) says install
// added (attack33 L2: before, it removed any entry equal to strata's, the
// team's committed ones included): of each event install added an entry
// to, an entry that is exactly one InstallClaude writes, whatever its
// matcher ({"hooks": [{"type": "command", "command": ...}]}, nothing
// else), and such a hook of strata's from an entry that also runs the
// user's own (Claude Code would still run it). An entry with a field of
// its own (a "timeout", another "type") is the user's and stays. An event
// install did not add to (its entry was there before install, or there is
// no record: committed, written by hand, or installed by a strata that
// recorded nothing) is left as it is. Of the objects and arrays that held
// the entries, only those in created and that are empty again go, and
// only while data is still the content that install wrote (a file changed
// since may hold the user's own empty objects at those pointers). When
// data is still what that install wrote and the result is the file it
// read, as JSON, the file comes back byte for byte. changed is false when
// nothing was removed; left names, as "Event \"command\"", each of
// strata's hooks Claude Code still runs in out.
func UninstallClaude(path string, data []byte, in *Added) (out []byte, changed bool, left []string, err error) {
	if err := checkJSON(path, data); err != nil {
		return nil, false, nil, err
	}
	events := in.installedEvents(path)
	var created []string
	if cur := in.current(data); cur != nil {
		created = cur.Created
	}
	out, changed, err = keepBOM(data, func(data []byte) ([]byte, bool, error) { return uninstallClaude(path, data, events, created) })
	if err != nil {
		return nil, false, nil, positioned(path, data, err)
	}
	if changed {
		out = in.undo(data, out)
	}
	if left, err = stillRuns(path, out); err != nil {
		return nil, false, nil, err
	}
	return out, changed, left, nil
}

// installedEvents is the set of events install added strata's entry to,
// as in (the record of the install) tells: those whose command the file
// before install (Before) did not run, since install adds an entry where
// none runs strata's command and only there. Every record strata has
// written keeps Before, so one from an older strata reads the same. None
// when in is nil, or when Before does not read as settings (it did when
// install read it: the record was changed since): entries that may be the
// team's stay.
func (in *Added) installedEvents(path string) map[string]bool {
	events := map[string]bool{}
	if in == nil {
		return events
	}
	_, hooks, err := decodeSettings(path, bytes.TrimPrefix(in.Before, []byte("\xef\xbb\xbf")))
	if err != nil {
		return events
	}
	for _, c := range claudeEntries {
		arr, err := eventArray(path, hooks, c.event)
		if err != nil {
			return map[string]bool{}
		}
		if !slices.ContainsFunc(arr, func(el json.RawMessage) bool { return runs(el, c.command) }) {
			events[c.event] = true
		}
	}
	return events
}

// stillRuns names, as "Event \"command\"", each of strata's hooks that
// an entry of data runs (what Claude Code still runs after an uninstall).
func stillRuns(path string, data []byte) ([]string, error) {
	_, hooks, err := decodeSettings(path, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if err != nil {
		return nil, positioned(path, data, err)
	}
	var left []string
	for _, c := range claudeEntries {
		arr, err := eventArray(path, hooks, c.event)
		if err != nil {
			return nil, positioned(path, data, err)
		}
		if slices.ContainsFunc(arr, func(el json.RawMessage) bool { return runs(el, c.command) }) {
			left = append(left, fmt.Sprintf("%s %q", c.event, c.command))
		}
	}
	return left, nil
}

// keepBOM runs edit on data without a leading UTF-8 byte-order mark (JSON
// has none; an editor may write one, and validate accepts it) and gives
// the mark back to what it writes; unchanged data comes back as it was.
func keepBOM(data []byte, edit func([]byte) ([]byte, bool, error)) ([]byte, bool, error) {
	bom := []byte("\xef\xbb\xbf")
	rest, had := bytes.CutPrefix(data, bom)
	out, changed, err := edit(rest)
	switch {
	case err != nil:
		return nil, false, err
	case !changed:
		return data, false, nil
	case had:
		return append(bom, out...), true, nil
	}
	return out, true, nil
}

func uninstallClaude(path string, data []byte, events map[string]bool, created []string) (out []byte, changed bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, false, nil
	}
	_, hooks, err := decodeSettings(path, data)
	if err != nil {
		return nil, false, err
	}
	out = data
	for _, c := range claudeEntries {
		arr, err := eventArray(path, hooks, c.event)
		if err != nil {
			return nil, false, err
		}
		if !events[c.event] {
			continue // not install's: left as it is
		}
		if out, err = removeOurs(path, out, []string{"hooks", c.event}, arr, c.command); err != nil {
			return nil, false, err
		}
	}
	if bytes.Equal(out, data) {
		return data, false, nil
	}
	if out, err = dropCreated(path, out, created); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// removeOurs removes from the event array at (its entries arr) every
// entry of strata's (ourEntry), and strata's hooks from an entry that
// also runs others.
func removeOurs(path string, data []byte, at []string, arr []json.RawMessage, command string) ([]byte, error) {
	out, _, err := jsonedit.Filter(data, at, func(raw []byte) bool { return ourEntry(raw, command) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kept := arr[:0:0]
	for _, el := range arr {
		if !ourEntry(el, command) {
			kept = append(kept, el)
		}
	}
	for k := len(kept) - 1; k >= 0; k-- {
		if !mixed(kept[k], command) {
			continue
		}
		if out, _, err = jsonedit.FilterIn(out, at, k, "hooks", func(raw []byte) bool { return ourHook(raw, command) }); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, nil
}

// entryShape is how strata reads an entry of an event array.
type entryShape struct {
	Matcher *string `json:"matcher"`
	// each hook on its own: one that is not an object (a number a hand
	// edit left) must not hide strata's beside it
	Hooks []json.RawMessage `json:"hooks"`
}

// entryHooks returns an entry's hooks, ok false when it is not an entry
// (not an object, or hooks not an array).
func entryHooks(el []byte) (hooks []json.RawMessage, ok bool) {
	var e entryShape
	if json.Unmarshal(el, &e) != nil {
		return nil, false
	}
	return e.Hooks, true
}

// runs reports whether an entry has a hook running command.
func runs(el json.RawMessage, command string) bool {
	hooks, _ := entryHooks(el)
	for _, h := range hooks {
		if hookRuns(h, command) {
			return true
		}
	}
	return false
}

// ourEntry reports whether an entry is one install writes: "hooks" holds
// strata's hooks only (ourHook) and nothing else is there but a string
// "matcher" (the user may have changed it since).
func ourEntry(el []byte, command string) bool {
	var e map[string]json.RawMessage
	if json.Unmarshal(el, &e) != nil {
		return false
	}
	for k, v := range e {
		var s string
		if k != "hooks" && (k != "matcher" || json.Unmarshal(v, &s) != nil) {
			return false
		}
	}
	hooks, ok := entryHooks(el)
	if !ok || len(hooks) == 0 {
		return false
	}
	for _, h := range hooks {
		if !ourHook(h, command) {
			return false
		}
	}
	return true
}

// mixed reports whether an entry holds one of strata's hooks beside hooks
// of the user's.
func mixed(el []byte, command string) bool {
	hooks, _ := entryHooks(el)
	ours := 0
	for _, h := range hooks {
		if ourHook(h, command) {
			ours++
		}
	}
	return ours > 0 && ours < len(hooks)
}

// hookRuns reports whether one hook of an entry runs command: Claude Code
// runs it (its type is "command"), whatever other fields it has.
func hookRuns(raw []byte, command string) bool {
	var h struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	return json.Unmarshal(raw, &h) == nil && h.Type == "command" && strings.TrimSpace(h.Command) == command
}

// ourHook reports whether a hook is exactly the one install writes,
// {"type": "command", "command": command}.
func ourHook(raw []byte, command string) bool {
	return sameJSON(raw, []byte(`{"type":"command","command":`+jsonString(command)+`}`))
}

// checkJSON refuses content that is not one JSON document, as validate
// reports it (with line and column): a syntax error, a duplicate key
// (jsonedit would edit one occurrence and delete every one), nesting too
// deep. Missing or empty content passes: it is a file to create.
func checkJSON(path string, data []byte) error {
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))) == 0 {
		return nil
	}
	if _, ps := validate.DecodeJSON(path, data); ps != nil {
		return ps
	}
	return nil
}

// positioned gives each of err's problems that has none the line and
// column of the value its pointer names in data.
func positioned(path string, data []byte, err error) error {
	var ps state.Problems
	if !errors.As(err, &ps) {
		return err
	}
	out := make(state.Problems, len(ps))
	for i, p := range ps {
		if p.Line == 0 {
			at := validate.ProblemAt(path, data, false, p.Pointer, p.Message)
			p.Line, p.Col = at.Line, at.Col
		}
		out[i] = p
	}
	return out
}

func isNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// decodeSettings reads the top-level object and its "hooks" object (empty
// when missing).
func decodeSettings(path string, data []byte) (root, hooks object, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, object{}, nil
	}
	root, err = decodeObject(data)
	if err != nil {
		return nil, nil, state.Problems{{Path: path, Pointer: "", Message: err.Error()}}
	}
	if raw, ok := root.get("hooks"); ok {
		if hooks, err = decodeObject(raw); err != nil {
			return nil, nil, state.Problems{{Path: path, Pointer: "/hooks", Message: err.Error()}}
		}
	}
	return root, hooks, nil
}

// eventArray returns an event's entries (none when the event is missing).
func eventArray(path string, hooks object, event string) ([]json.RawMessage, error) {
	raw, ok := hooks.get(event)
	if !ok {
		return nil, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, state.Problems{{Path: path, Pointer: "/hooks/" + event, Message: "expected an array of {matcher, hooks} entries, found " + jsonedit.Kind(raw)}}
	}
	return arr, nil
}

// object is a JSON object with its members in document order; values keep
// their exact text.
type object []member

type member struct {
	key string
	val json.RawMessage
}

// decodeObject reads a JSON object without reordering or re-encoding its
// values.
func decodeObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("expected an object, found %s", jsonedit.Kind(data))
	}
	o := object{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, member{key: key, val: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected content after the object")
	}
	return o, nil
}

// get returns key's value: its last occurrence, the one JSON.parse and
// Go's decoders keep.
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].val, true
		}
	}
	return nil, false
}

// jsonString encodes s without HTML escaping.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
