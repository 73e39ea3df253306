package validate

import "github.com/strata-dev/strata/state"

// ProblemAt returns a problem about the value at JSON Pointer ptr of a
// document, positioned at that value's line and column or, when it has
// none, at its nearest ancestor's, as Validate positions its own problems.
// The document is YAML when isYAML is true, JSON otherwise; a document that
// does not decode gives a problem without a position. It is for rules that
// callers apply across files.
func ProblemAt(path string, data []byte, isYAML bool, ptr, msg string) state.Problem {
	if len(data) > DefaultMaxSize {
		return state.Problem{Path: path, Pointer: ptr, Message: msg}
	}
	decode := decodeJSON
	if isYAML {
		decode = decodeYAML
	}
	_, loc, ps := decode(path, data)
	if ps != nil {
		loc = nil
	}
	return loc.at(path, ptr, msg)
}
