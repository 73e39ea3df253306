package phase

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/state"
)

// The history rules of docs/contract.md §3: what a new version of a kept file may be,
// given the last recorded one. The engine applies them (engine.Check) to
// every version it records, restores or merges; CheckResolution, the
// cross-file rule of decision resolutions, is in decisions.go.

// AppendOnly applies the append-only rule of Phase Outcomes (and decision
// resolutions, state.Class.Immutable) to a new version of path: cur, or a
// deletion when exists is false, against the recorded version prev (nil
// when none).
func AppendOnly(class state.Class, path string, prev, cur []byte, exists bool) state.Problems {
	if !class.Immutable() || prev == nil {
		return nil
	}
	if !exists {
		return state.Problems{{Path: path, Message: "a recorded Phase Outcome is append-only and cannot be deleted; run `strata restore " + state.ShellWord(path) + "` to put it back"}}
	}
	if !bytes.Equal(prev, cur) {
		return state.Problems{{Path: path, Message: "a recorded Phase Outcome is append-only and cannot change; write a new numbered file instead, or run `strata restore " + state.ShellWord(path) + "`"}}
	}
	return nil
}

// initiativeNext lists, per initiative status, the statuses it may move to
// (staying the same is always allowed).
var initiativeNext = map[string][]string{
	"created":     {"in_progress"},
	"in_progress": {"blocked", "completed"},
	"blocked":     {"in_progress"},
	"completed":   {"archived"},
	"archived":    nil,
}

// newInitiative is how a refusal says to start a new initiative: the one
// file holds one initiative at a time, so a new one replaces it, under
// another name.
const newInitiative = `to start a new initiative, write one with another "name" and status "created"`

// InitiativeTransition applies the initiative status state machine of
// docs/contract.md §3 to a decoded new version cur of an initiative against the decoded last
// recorded version prev (nil when there is none or it does not decode). The
// machine holds between versions of one initiative, those of one `name`: a
// version with another name is a new initiative, which starts at
// "created" whatever the last one's status was. A prev without a known
// status, and a cur whose status the schema rejects, constrain nothing.
func InitiativeTransition(prev, cur any, at At) state.Problems {
	to, ok := initiativeStatus(cur)
	if !ok || prev == nil {
		return nil
	}
	from, ok := initiativeStatus(prev)
	if !ok {
		return nil
	}
	if was, name, other := renamed(prev, cur); other {
		if to == "created" {
			return nil
		}
		return state.Problems{at("/status", fmt.Sprintf("a new initiative starts at status \"created\", got %q: %q is another name than the last initiative's %q (keep %q to move that one on)", to, name, was, was))}
	}
	if from == to || slices.Contains(initiativeNext[from], to) {
		return nil
	}
	msg := fmt.Sprintf("status cannot change from %q to %q", from, to)
	switch from {
	case "archived":
		msg += ": an archived initiative is final; " + newInitiative
	case "completed":
		msg += ": a completed initiative is not reopened, only archived; " + newInitiative
	default:
		next := initiativeNext[from]
		quoted := make([]string, len(next))
		for i, n := range next {
			quoted[i] = strconv.Quote(n)
		}
		msg += fmt.Sprintf(", want %q or %s", from, strings.Join(quoted, " or "))
	}
	return state.Problems{at("/status", msg)}
}

// renamed reports whether cur names another initiative than prev (both
// names strings that differ), with both names.
func renamed(prev, cur any) (was, name string, other bool) {
	p, _ := prev.(map[string]any)
	c, _ := cur.(map[string]any)
	was, ok1 := p["name"].(string)
	name, ok2 := c["name"].(string)
	return was, name, ok1 && ok2 && was != name
}

func initiativeStatus(doc any) (string, bool) {
	obj, _ := doc.(map[string]any)
	s, ok := obj["status"].(string)
	if _, known := initiativeNext[s]; !ok || !known {
		return "", false
	}
	return s, true
}
