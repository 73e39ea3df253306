package jsonedit

import (
	"bytes"
	"fmt"
	"strings"
)

// The functions below edit a value nested in the top-level object, named
// by a path of member keys (each the key's last occurrence, the one
// decoders keep), with the same care as EditMembers: every byte outside the
// edit stays as it was, and what is added takes the layout of its
// neighbours. strata uses them for the user's settings files (Claude Code's
// .claude/settings.json and .mcp.json, docs/contract.md §8). An object
// missing on the path, or null there, is created; another value there is
// an error that names its JSON Pointer and wraps ErrNotObject.

// Append adds elem at the end of the array at path.
func Append(data []byte, path []string, elem any) ([]byte, error) {
	val, err := encode(elem)
	if err != nil {
		return nil, err
	}
	o, depth, i, err := walk(data, path)
	if err != nil || depth < len(path)-1 || i < 0 || isNull(o.members[i].raw) {
		return create(data, path, o, depth, i, append(append([]byte{'['}, val...), ']'), err)
	}
	arr, _, err := parseAt(data, o.members[i].valStart)
	if err != nil || !arr.array {
		return nil, fmt.Errorf("%w: %s is not an array", ErrNotObject, pointer(path))
	}
	return insert(data, arr, nil, val), nil
}

// Set sets the member at path to value; a member that already holds it
// (as decoded) keeps its bytes.
func Set(data []byte, path []string, value any) ([]byte, error) {
	val, err := encode(value)
	if err != nil {
		return nil, err
	}
	o, depth, i, err := walk(data, path)
	if err != nil || depth < len(path)-1 || i < 0 {
		return create(data, path, o, depth, i, val, err)
	}
	if m := o.members[i]; !holds(m.raw, val) {
		return replace(data, m, val), nil
	}
	return data, nil
}

// Delete removes every occurrence of the member at path; data comes back
// as it was when there is none.
func Delete(data []byte, path []string) ([]byte, error) {
	for {
		o, depth, i, err := walk(data, path)
		if err != nil || depth < len(path)-1 || i < 0 {
			return data, ignoreMissing(err)
		}
		data = remove(data, o, i)
	}
}

// Filter removes the elements of the array at path for which drop is true
// and returns how many went; a missing or null array removes nothing.
func Filter(data []byte, path []string, drop func(raw []byte) bool) ([]byte, int, error) {
	o, depth, i, err := walk(data, path)
	if err != nil || depth < len(path)-1 || i < 0 || isNull(o.members[i].raw) {
		return data, 0, ignoreMissing(err)
	}
	return filterAt(data, o.members[i].valStart, pointer(path), drop)
}

// FilterIn is Filter for the array member sub of the object that is
// element index of the array at path (Claude Code's hooks of one matcher
// group: FilterIn(data, {"hooks", "PostToolUse"}, 0, "hooks", drop)).
// Nothing there removes nothing.
func FilterIn(data []byte, path []string, index int, sub string, drop func(raw []byte) bool) ([]byte, int, error) {
	o, depth, i, err := walk(data, path)
	if err != nil || depth < len(path)-1 || i < 0 || isNull(o.members[i].raw) {
		return data, 0, ignoreMissing(err)
	}
	arr, _, err := parseAt(data, o.members[i].valStart)
	if err != nil || !arr.array {
		return nil, 0, fmt.Errorf("%w: %s is not an array", ErrNotObject, pointer(path))
	}
	at := fmt.Sprintf("%s/%d", pointer(path), index)
	if index < 0 || index >= len(arr.members) {
		return data, 0, nil
	}
	el, _, err := parseAt(data, arr.members[index].valStart)
	if err != nil || el.array {
		return nil, 0, fmt.Errorf("%w: %s is not an object", ErrNotObject, at)
	}
	k := last(el, sub)
	if k < 0 || isNull(el.members[k].raw) {
		return data, 0, nil
	}
	return filterAt(data, el.members[k].valStart, at+pointer([]string{sub}), drop)
}

// filterAt removes the elements of the array at offset at (named ptr) for
// which drop is true.
func filterAt(data []byte, at int, ptr string, drop func(raw []byte) bool) ([]byte, int, error) {
	arr, _, err := parseAt(data, at)
	if err != nil || !arr.array {
		return nil, 0, fmt.Errorf("%w: %s is not an array", ErrNotObject, ptr)
	}
	n := 0
	for k := len(arr.members) - 1; k >= 0; k-- { // from the end: earlier offsets stay
		if drop(arr.members[k].raw) {
			data = remove(data, arr, k)
			n++
			if arr, _, err = parseAt(data, at); err != nil {
				return nil, 0, err
			}
		}
	}
	return data, n, nil
}

// errMissing marks a walk that stopped at a missing member or null.
type errMissing struct{}

func (errMissing) Error() string { return "missing" }

func ignoreMissing(err error) error {
	if _, ok := err.(errMissing); ok {
		return nil
	}
	return err
}

// walk follows path from the top-level object. It returns the object
// holding path[depth] and that key's index in it (-1 when absent), where
// depth is len(path)-1 when every object on the way exists; else the walk
// stopped at path[depth], absent or null, with errMissing.
func walk(data []byte, path []string) (o object, depth, i int, err error) {
	if o, err = parse(data); err != nil {
		return o, 0, -1, err
	}
	for depth = 0; ; depth++ {
		i = last(o, path[depth])
		if depth == len(path)-1 {
			return o, depth, i, nil
		}
		if i < 0 || isNull(o.members[i].raw) {
			return o, depth, i, errMissing{}
		}
		inner, _, err := parseAt(data, o.members[i].valStart)
		if err != nil || inner.array {
			return o, depth, i, fmt.Errorf("%w: %s is not an object", ErrNotObject, pointer(path[:depth+1]))
		}
		o = inner
	}
}

// create puts val at path when the walk stopped at path[depth] (absent at
// index -1, or null): the objects between are made around it.
func create(data []byte, path []string, o object, depth, i int, val []byte, err error) ([]byte, error) {
	if err = ignoreMissing(err); err != nil {
		return nil, err
	}
	for k := len(path) - 1; k > depth; k-- {
		key, err := encode(path[k])
		if err != nil {
			return nil, err
		}
		val = append(append(append(append([]byte{'{'}, key...), ':'), val...), '}')
	}
	if i >= 0 {
		return replace(data, o.members[i], val), nil
	}
	key, err := encode(path[depth])
	if err != nil {
		return nil, err
	}
	return insert(data, o, key, val), nil
}

// replace puts val in place of m's value, laid out over lines as the line
// it starts on when the document is written over lines.
func replace(data []byte, m member, val []byte) []byte {
	if bytes.Contains(bytes.TrimRight(data, " \t\r\n"), []byte("\n")) {
		eol := []byte("\n")
		if bytes.Contains(data, []byte("\r\n")) {
			eol = []byte("\r\n")
		}
		val = layOut(val, lineIndent(data, m.valStart), unit(data), eol)
	}
	return splice(data, m.valStart, m.valEnd, val)
}

func last(o object, key string) int {
	i := -1
	for k, m := range o.members {
		if m.key == key {
			i = k
		}
	}
	return i
}

func isNull(raw []byte) bool { return bytes.Equal(raw, []byte("null")) }

// pointer writes path as a JSON Pointer.
func pointer(path []string) string {
	var b strings.Builder
	for _, k := range path {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
	}
	return b.String()
}
