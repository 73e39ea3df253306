package main

import (
	"strings"
	"time"

	"github.com/strata-dev/strata/state"
)

// parseWhen reads the time argument of what (a command) as git reads one;
// one that does not parse is a usage error, naming it once as show's --at
// does: "at: invalid time "bogus": want …".
func parseWhen(e *env, what, s string) (time.Time, error) {
	t, err := state.ParseTime(s, e.Now())
	if err != nil {
		return time.Time{}, usagef("%s: %v", what, err)
	}
	return t, nil
}

// nonEmptyRev refuses a revision given as nothing (--rev "", often an
// unset shell variable), which every caller would otherwise read as no
// revision at all: the latest version.
func nonEmptyRev(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return usagef("%s: an empty revision; give a commit id, a ref or HEAD~N", what)
	}
	return nil
}

// nonEmptyTime refuses a time given as nothing (--at ""), which every
// caller would otherwise read as no time at all: the latest version.
func nonEmptyTime(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return usagef("%s: an empty time; give one as RFC 3339, a date, or '2h ago'", what)
	}
	return nil
}
