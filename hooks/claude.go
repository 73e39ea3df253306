package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
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

// UninstallClaude removes exactly the entries InstallClaude adds: an entry of
// SessionStart or PostToolUse all of whose hooks run strata's command (and
// whose matcher, if any, is strata's). An event array, and then "hooks",
// that this leaves empty is removed too. It returns changed false when no
// such entry exists.
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
		ours := 0
		for _, el := range arr {
			if isOurs(el, c) {
				ours++
			}
		}
		switch {
		case ours == 0:
			continue
		case ours == len(arr):
			out, err = jsonedit.Delete(out, []string{"hooks", c.event})
		default:
			out, _, err = jsonedit.Filter(out, []string{"hooks", c.event}, func(raw []byte) bool { return isOurs(raw, c) })
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		changed = true
	}
	if !changed {
		return data, false, nil
	}
	if _, hooks, err := decodeSettings(path, out); err == nil && len(hooks) == 0 {
		out, err = jsonedit.Delete(out, []string{"hooks"})
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, true, nil
}

// entryShape is how strata reads an entry of an event array.
type entryShape struct {
	Matcher *string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	} `json:"hooks"`
}

// runs reports whether an entry has a hook running command.
func runs(el json.RawMessage, command string) bool {
	var e entryShape
	if json.Unmarshal(el, &e) != nil {
		return false
	}
	for _, h := range e.Hooks {
		if strings.TrimSpace(h.Command) == command {
			return true
		}
	}
	return false
}

// isOurs reports whether an entry is one strata added: only strata's command,
// with strata's matcher or none.
func isOurs(el json.RawMessage, c claudeEntry) bool {
	var e entryShape
	if json.Unmarshal(el, &e) != nil || len(e.Hooks) == 0 {
		return false
	}
	if e.Matcher != nil && *e.Matcher != c.matcher {
		return false
	}
	for _, h := range e.Hooks {
		if strings.TrimSpace(h.Command) != c.command {
			return false
		}
	}
	return true
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
		return nil, state.Problems{{Path: path, Pointer: "/hooks/" + event, Message: "expected an array of {matcher, hooks} entries, found " + kind(raw)}}
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
		return nil, fmt.Errorf("expected an object, found %s", kind(data))
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

// kind names the JSON type of a value, for messages.
func kind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "a number"
	}
	return "invalid JSON"
}
