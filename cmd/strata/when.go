package main

import (
	"time"

	"github.com/strata-dev/strata/state"
)

// parseWhen reads a time argument as git reads one; one that does not parse
// is a usage error.
func parseWhen(e *env, s string) (time.Time, error) {
	t, err := state.ParseTime(s, e.Now())
	if err != nil {
		return time.Time{}, usagef("time %q: %v", s, err)
	}
	return t, nil
}
