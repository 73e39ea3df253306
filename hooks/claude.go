package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/strata-dev/strata/jsonedit"
	"github.com/strata-dev/strata/state"
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
// new content, or changed false when both entries are already there (an entry
// running the same command counts, whatever its matcher). Everything else is
// kept: other keys in their order, other events and their entries, and the
// exact text of every string and number; the result is indented with two
// spaces and ends with a newline. Content that is not a JSON object, or whose
// "hooks" is not an object of arrays, is reported as state.Problems naming
// the JSON Pointer.
func InstallClaude(path string, data []byte) (out []byte, changed bool, err error) {
	return keepBOM(data, func(data []byte) ([]byte, bool, error) { return installClaude(path, data) })
}

func installClaude(path string, data []byte) (out []byte, changed bool, err error) {
	_, hooks, err := decodeSettings(path, data)
	if err != nil {
		return nil, false, err
	}
	if out = data; len(bytes.TrimSpace(data)) == 0 {
		out = []byte("{}\n")
	}
	for _, c := range claudeEntries {
		arr, err := eventArray(path, hooks, c.event)
		if err != nil {
			return nil, false, err
		}
		found := false
		for _, el := range arr {
			if runs(el, c.command) {
				found = true
				break
			}
		}
		if !found {
			if out, err = jsonedit.Append(out, []string{"hooks", c.event}, c.raw()); err != nil {
				return nil, false, fmt.Errorf("%s: %w", path, err)
			}
			changed = true
		}
	}
	if !changed {
		return data, false, nil
	}
	return out, true, nil
}

// UninstallClaude removes strata's hooks that InstallClaude adds: an entry
// of SessionStart or PostToolUse all of whose hooks run strata's command
// (whatever its matcher), and strata's hook from an entry that also runs
// the user's own (Claude Code would still run it). An event array, and
// then "hooks", that this leaves empty is removed too. It returns changed
// false when strata's commands run nowhere.
func UninstallClaude(path string, data []byte) (out []byte, changed bool, err error) {
	return keepBOM(data, func(data []byte) ([]byte, bool, error) { return uninstallClaude(path, data) })
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

func uninstallClaude(path string, data []byte) (out []byte, changed bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, false, nil
	}
	_, before, err := decodeSettings(path, data)
	if err != nil {
		return nil, false, err
	}
	out = data
	for _, c := range claudeEntries {
		arr, err := eventArray(path, before, c.event)
		if err != nil {
			return nil, false, err
		}
		at := []string{"hooks", c.event}
		// entries that run strata's command alone go (whatever matcher the
		// user gave them); in an entry that also runs the user's own hooks,
		// only strata's hook goes: Claude Code would run it on every edit
		if out, err = removeRuns(path, out, at, arr, c.command); err != nil {
			return nil, false, err
		}
		if !bytes.Equal(out, data) {
			changed = true
		}
	}
	if !changed {
		return data, false, nil
	}
	_, hooks, err := decodeSettings(path, out)
	if err != nil {
		return nil, false, err
	}
	// an array uninstall emptied goes, one the user left empty stays
	empty := func(o object, event string) bool {
		raw, ok := o.get(event)
		return ok && bytes.Equal(bytes.TrimSpace(raw), []byte("[]"))
	}
	for _, c := range claudeEntries {
		if _, had := before.get(c.event); had && empty(hooks, c.event) && !empty(before, c.event) {
			if out, err = jsonedit.Delete(out, []string{"hooks", c.event}); err != nil {
				return nil, false, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	if _, hooks, err := decodeSettings(path, out); err == nil && len(hooks) == 0 {
		out, err = jsonedit.Delete(out, []string{"hooks"})
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, true, nil
}

// removeRuns removes from the event array at (its entries arr) every
// entry whose hooks all run command, and command's hooks from an entry
// that also runs others.
func removeRuns(path string, data []byte, at []string, arr []json.RawMessage, command string) ([]byte, error) {
	out, _, err := jsonedit.Filter(data, at, func(raw []byte) bool { return onlyRuns(raw, command) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kept := arr[:0:0]
	for _, el := range arr {
		if !onlyRuns(el, command) {
			kept = append(kept, el)
		}
	}
	for k := len(kept) - 1; k >= 0; k-- {
		if !runs(kept[k], command) {
			continue
		}
		if out, _, err = jsonedit.FilterIn(out, at, k, "hooks", func(raw []byte) bool { return hookRuns(raw, command) }); err != nil {
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

// onlyRuns reports whether every hook of an entry runs command (an entry
// strata added, whatever matcher the user gave it since).
func onlyRuns(el []byte, command string) bool {
	hooks, ok := entryHooks(el)
	if !ok || len(hooks) == 0 {
		return false
	}
	for _, h := range hooks {
		if !hookRuns(h, command) {
			return false
		}
	}
	return true
}

// hookRuns reports whether one hook of an entry runs command.
func hookRuns(raw []byte, command string) bool {
	var h struct {
		Command string `json:"command"`
	}
	return json.Unmarshal(raw, &h) == nil && strings.TrimSpace(h.Command) == command
}

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
