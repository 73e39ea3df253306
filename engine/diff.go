package engine

import (
	"errors"
	"fmt"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/textdiff"
)

// Diff is a kept file's change between two moments.
type Diff struct {
	From string // the old side: "a/PATH (COMMIT)", or /dev/null when the file did not exist
	To   string // the new side: "b/PATH (COMMIT)", "b/PATH (work tree)" or /dev/null
	Text string // the unified diff, 3 lines of context; "" when both sides are equal
}

// Diff compares k as recorded at from with its version at to, or with the
// file on disk when to is nil. A side where the file did not exist is
// /dev/null; when both sides are, there is nothing to compare, and it is an
// error wrapping state.ErrNotFound (neither), as show of either side is. A
// point where nothing was recorded is an error wrapping state.ErrNotFound;
// an unreadable file on disk is its problem.
func (e *Engine) Diff(k config.Kept, from Point, to *Point) (Diff, error) {
	if hk, ok := e.homeKept(k); ok {
		h, err := e.homeView()
		if err != nil {
			return Diff{}, err
		}
		d, err := h.Diff(hk, from, to)
		if ps, ok := err.(state.Problems); ok {
			err = homeProblems(ps, k.Path)
		}
		return d, err
	}
	to = e.recordedSide(k, to)
	side := func(p Point, prefix string) ([]byte, string, error) {
		c, err := e.Commit(p)
		if err != nil {
			return nil, "", err
		}
		data, err := e.readAt(c, k.Path)
		if errors.Is(err, state.ErrNotFound) {
			return nil, "/dev/null", nil
		}
		// a name a terminal would act on is quoted as git quotes it
		return data, fmt.Sprintf("%s (%s)", state.TermSafe(prefix+e.shown(k.Path)), state.ShortID(c)), err
	}
	a, la, err := side(from, "a/")
	if err != nil {
		return Diff{}, err
	}
	var b []byte
	var lb string
	if to == nil {
		f, p := e.Read(k)
		if p != nil {
			return Diff{}, state.Problems{*p}
		}
		b, lb = f.Content, state.TermSafe("b/"+e.shown(k.Path))+" (work tree)"
		if !f.Exists {
			lb = "/dev/null"
		}
	} else if b, lb, err = side(*to, "b/"); err != nil {
		return Diff{}, err
	}
	if la == "/dev/null" && lb == "/dev/null" {
		return Diff{}, neither(e.shown(k.Path), from, to)
	}
	return Diff{From: la, To: lb, Text: textdiff.Unified(la, lb, a, b, 3)}, nil
}

// neither is the error of a diff whose two sides both lack the path (never
// recorded and absent, say): nothing to compare, exit 1 as show's.
func neither(path string, from Point, to *Point) error {
	if to == nil {
		return fmt.Errorf("%s: not recorded at %s, and not in the work tree: %w", path, from, state.ErrNotFound)
	}
	return fmt.Errorf("%s: not recorded at %s, nor at %s: %w", path, from, *to, state.ErrNotFound)
}

// recordedSide is the new side of a diff of k: to, or, when to is nil (the
// file on disk) and no rule keeps k now (made private, or its rule
// removed), the state ref's head. The reading commands show such a path as
// recorded (ResolveRecorded) and never read its file: a private file's
// current content (a key added since) is no one's to print.
func (e *Engine) recordedSide(k config.Kept, to *Point) *Point {
	if to != nil {
		return to
	}
	if _, kept := e.cfg.Classify(k.Path); kept {
		return nil
	}
	return &Point{Rev: e.store.StateRef()}
}
