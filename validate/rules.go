package validate

import (
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
)

// The rules themselves live in package phase; validate decodes and positions.

// rules runs phase.DocumentRules on a decoded document.
func rules(schema, file string, doc any, loc *locator) state.Problems {
	return phase.DocumentRules(schema, file, doc, func(ptr, msg string) state.Problem { return loc.at(file, ptr, msg) })
}

// CheckTransition applies phase.InitiativeTransition to the bytes of a new
// version cur of an initiative file against the last recorded version prev
// (nil when there is none). Undecodable cur gives its decoding problems; an
// undecodable prev constrains nothing.
func CheckTransition(path string, prev, cur []byte) state.Problems {
	if len(cur) > DefaultMaxSize {
		return tooLarge(path, len(cur), DefaultMaxSize)
	}
	cv, loc, ps := decodeJSON(path, cur)
	if ps != nil {
		return ps
	}
	var pv any
	if prev != nil && len(prev) <= DefaultMaxSize {
		if v, _, pps := decodeJSON(path, prev); pps == nil {
			pv = v
		}
	}
	return phase.InitiativeTransition(pv, cv, func(ptr, msg string) state.Problem { return loc.at(path, ptr, msg) })
}
