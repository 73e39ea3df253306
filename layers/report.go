package layers

import (
	"time"

	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/graph"
)

// ErrUnavailable is wrapped by Resolve's error when L3 could not be written
// (graph.ErrUnavailable); the resolutions are returned with it.
var ErrUnavailable = graph.ErrUnavailable

// LayerCell is one layer's column of `strata resolve`'s table: "unavailable"
// (why is on its own line and in --json), "absent",
// "present (time unknown)", or its time (local, RFC 3339) noting a time read
// from the document rather than a commit, and a cleared layer.
func LayerCell(lt conflict.LayerTime) string {
	switch {
	case lt.Unavailable != "":
		return "unavailable"
	case !lt.Present:
		return "absent"
	case lt.Time.IsZero():
		return "present (time unknown)"
	}
	s := lt.Time.Local().Format(time.RFC3339)
	if lt.Basis == conflict.BasisDocument {
		s += " (document)"
	}
	if lt.Cleared {
		s += " (cleared)"
	}
	return s
}
