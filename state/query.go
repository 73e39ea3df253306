package state

import "time"

// LogQuery filters a log of recorded changes. Zero values mean no filter.
type LogQuery struct {
	Path  string    // only entries for exactly this path
	Since time.Time // only commits with committer time at or after Since
	Until time.Time // only commits with committer time at or before Until
	Limit int       // at most this many entries; 0 means all
}
