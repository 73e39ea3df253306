package conflict

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/state"
)

// The cross-machine rules: what a sync does with a path that both machines
// changed since their histories last met. gitstore finds the three versions
// (merge base, ours, theirs) and when each side recorded its version; the
// functions here decide, on bytes, and never touch a repository.

// Stamp is when, and in which commit, one side recorded its version of a
// path.
type Stamp struct {
	Time   time.Time // the writer's time (the Strata-Time trailer), else the commit time; see Bound
	Commit string
	// Claimed is set when Time is not the time the commit gives: that
	// time, ahead of this machine's clock (Bound). Limit is then the commit
	// built on it whose time Time is, or "" when Time is now.
	Claimed time.Time
	Limit   string
}

// ClockSkew is how far ahead of this machine's clock a recorded time may be
// and still count as it is: machines' clocks disagree by a little. NTP
// keeps them within a second; a laptop that slept or a machine without NTP
// drifts by seconds to a few minutes before it is corrected. Five minutes
// (Kerberos's default for the same question) covers that, and bounds the
// lead a wrong or forged clock can take over edits made after its version
// arrived.
const ClockSkew = 5 * time.Minute

// Bound is the one rule that keeps a recorded time honest. A time t more
// than ClockSkew ahead of now, this machine's clock, is not when the version
// was recorded (a clock set wrong, or a forged trailer); it counts as limit:
// now, or the earliest time of the commits built on the recording commit
// when that is earlier (they were written after it; by names that commit).
// A time that is not ahead of now counts as it is. A peer that writes a
// time in 2099 thus wins no more than a version recorded now would, and once
// a commit is built on it (the merge that took it), no more than that
// commit's time, so an edit made after it wins the next decision.
func Bound(commit string, t, now, limit time.Time, by string) Stamp {
	if !t.After(now.Add(ClockSkew)) {
		return Stamp{Time: t, Commit: commit}
	}
	if by == "" || limit.After(now) {
		limit, by = now, ""
	}
	return Stamp{Time: limit, Commit: commit, Claimed: t, Limit: by}
}

// Note says, in a few words for a decision line, that the stamp's time was
// bounded ("" when it was not).
func (s Stamp) Note() string {
	if s.Claimed.IsZero() {
		return ""
	}
	note := "its time " + s.Claimed.UTC().Format(time.RFC3339Nano) + " is ahead of this machine's clock; taken as "
	if s.Limit == "" {
		return note + "now"
	}
	return note + "that of " + state.ShortID(s.Limit) + ", built on it"
}

// Later reports whether theirs was recorded after ours: the later time
// wins, equal times go to the larger commit id. Both machines of a merge
// reach the same answer, whichever side they are on.
func Later(ours, theirs Stamp) bool {
	if !theirs.Time.Equal(ours.Time) {
		return theirs.Time.After(ours.Time)
	}
	return theirs.Commit > ours.Commit
}

// Strategy is how a class's concurrent edits meet.
type Strategy string

// The strategies.
const (
	// StrategyLater: the whole file recorded later wins (L1 documents), under
	// the class's history rule.
	StrategyLater Strategy = "later"
	// StrategyMemory: MEMORY.md, three-way by lines: both sides' added
	// lines, and the deletions of either where the other left the line.
	StrategyMemory Strategy = "memory-union"
	// StrategyGraph: the MCP graph, merged by entity and relation.
	StrategyGraph Strategy = "graph-union"
	// StrategyAppendOnly: Phase Outcomes and decision resolutions are never
	// overwritten; two new files of one name are both kept.
	StrategyAppendOnly Strategy = "append-only"
)

// StrategyFor returns the strategy of a class.
func StrategyFor(c state.Class) Strategy {
	switch {
	case c == state.ClassMemory:
		return StrategyMemory
	case c == state.ClassGraph:
		return StrategyGraph
	case c.Immutable():
		return StrategyAppendOnly
	}
	return StrategyLater
}

// NeedsContent reports whether resolving a path of the class reads the
// versions' bytes: every class but the L1 documents without a history rule.
func NeedsContent(c state.Class) bool {
	return StrategyFor(c) != StrategyLater || c == state.ClassInitiative
}

// Version is one side's version of a path.
type Version struct {
	Present bool
	Data    []byte
	Stamp   Stamp // for ours and theirs only
}

// PathInput is one path both sides changed since the merge base (to different
// versions).
type PathInput struct {
	Path         string
	Class        state.Class
	Base         Version
	Ours, Theirs Version
	// Rule, when set, is the class's history rule: why next may not follow
	// prev ("" when it may).
	Rule func(prev, next []byte) string
	// Taken reports whether a path is in use on either side (or was given to
	// another renamed file of this merge).
	Taken func(path string) bool
	// OwnTheirs, for a graph, says per entity strata keeps whether the
	// merge took theirs (true) or ours of the L1 file the entity mirrors:
	// the entity's own observations follow it (MergeGraphFollow). An entity
	// it does not name is decided by the graph's sides.
	OwnTheirs map[string]bool
}

// Take says which version a path gets.
type Take string

// The takes.
const (
	TakeOurs   Take = "ours"
	TakeTheirs Take = "theirs"
	TakeMerged Take = "merged" // Outcome.Data, built from both
	TakeBoth   Take = "both"   // the earlier version stays, the later one moves to Outcome.Rename
)

// Outcome is the decision for one path.
type Outcome struct {
	Take Take
	// LaterIsTheirs says which side recorded later (by Later).
	LaterIsTheirs bool
	Data          []byte // TakeMerged: the merged content
	Rename        string // TakeBoth: where the later version goes
	// Why is set when the history rule overruled the time decision, or
	// refused both versions (then Refused is set and the local one stays).
	Why     string
	Refused bool
	// Dropped names, for a merge (TakeMerged, or a side that already held
	// the other's edits), each edit of either side it could not keep, with
	// the commit that holds it; DroppedOurs says whether one was ours.
	Dropped     []string
	DroppedOurs bool
}

// Resolve decides a path both sides changed. The outcome is the same on
// both machines (with ours and theirs swapped), so histories that meet again
// hold the same tree.
func Resolve(in PathInput) (Outcome, error) {
	later := Later(in.Ours.Stamp, in.Theirs.Stamp)
	out := Outcome{LaterIsTheirs: later}
	earlier, last := in.Ours, in.Theirs
	if !later {
		earlier, last = in.Theirs, in.Ours
	}
	pick := func(theirs bool) Take {
		if theirs {
			return TakeTheirs
		}
		return TakeOurs
	}
	switch StrategyFor(in.Class) {
	case StrategyMemory, StrategyGraph:
		if !earlier.Present || !last.Present {
			break // a side removed the file: the later recording decides
		}
		var data []byte
		if StrategyFor(in.Class) == StrategyMemory {
			var err error
			if data, err = MergeMemory(in.Base.Data, earlier.Data, last.Data); err != nil {
				return out, fmt.Errorf("merge %s: %w", in.Path, err)
			}
		} else {
			var lost []GraphLoss
			var follow map[string]bool
			for name, theirs := range in.OwnTheirs {
				if follow == nil {
					follow = map[string]bool{}
				}
				follow[name] = theirs != later // the earlier side is theirs when theirs is not the later
			}
			data, lost = MergeGraphFollow(in.Base.Data, earlier.Data, last.Data, follow)
			for _, l := range lost {
				from := last
				if l.Earlier {
					from = earlier
				}
				what := l.What
				if from.Stamp.Commit != "" { // the commit that holds the dropped edit
					what += " (" + state.ShortID(from.Stamp.Commit) + ")"
				}
				out.Dropped = append(out.Dropped, what)
				out.DroppedOurs = out.DroppedOurs || l.Earlier == later
			}
		}
		switch {
		case bytes.Equal(data, in.Ours.Data):
			out.Take = TakeOurs
		case bytes.Equal(data, in.Theirs.Data):
			out.Take = TakeTheirs
		default:
			out.Take, out.Data = TakeMerged, data
		}
		return out, nil
	case StrategyAppendOnly:
		if !in.Base.Present && in.Ours.Present && in.Theirs.Present {
			out.Take, out.Rename = TakeBoth, NextFree(in.Path, in.Taken)
			return out, nil
		}
	}
	out.Take = pick(later)
	if in.Rule == nil {
		return out, nil
	}
	// The history rule: the version taken must follow both the merge base
	// and the other side's version; else the other side's, if it does.
	breaks := func(v, other Version) string {
		if !v.Present {
			return ""
		}
		if in.Base.Present {
			if why := in.Rule(in.Base.Data, v.Data); why != "" {
				return why
			}
		}
		if other.Present {
			return in.Rule(other.Data, v.Data)
		}
		return ""
	}
	why := breaks(last, earlier)
	if why == "" {
		return out, nil
	}
	if breaks(earlier, last) == "" {
		out.Take = pick(!later)
		out.Why = "the version recorded later breaks a history rule: " + why
		return out, nil
	}
	out.Take, out.Refused = TakeOurs, true
	out.Why = "both versions break a history rule: " + why
	return out, nil
}

// NextFree returns the path of the next free number for a numbered file
// ("PhaseOutcomes/auth/002-plan.yaml" → ".../003-plan.yaml" when 003 is
// free), keeping the width of the number. A name without a number gets one
// ("plan.yaml" → "002-plan.yaml"... the first free from 2).
func NextFree(p string, taken func(string) bool) string {
	dir, name := path.Split(p)
	n, width, rest := 1, 3, name
	if v, digits, ok := leadingNumber(name); ok {
		n, width, rest = v, digits, name[digits+1:]
	}
	for k := n + 1; ; k++ {
		cand := dir + fmt.Sprintf("%0*d-", width, k) + rest
		if taken == nil || !taken(cand) {
			return cand
		}
	}
}

// leadingNumber reads the number a handoff file's name starts with, before
// a "-": "002-plan.yaml" → 2, 3 digits (no regexp: its compile at package
// init cost every strata process ~0.3 ms).
func leadingNumber(name string) (n, digits int, ok bool) {
	digits = len(name) - len(strings.TrimLeft(name, "0123456789"))
	if digits == 0 || digits == len(name) || name[digits] != '-' {
		return 0, 0, false
	}
	n, err := strconv.Atoi(name[:digits])
	return n, digits, err == nil
}

// NumberKey names the number a numbered file takes in its folder
// ("PhaseOutcomes/auth/003-test.yaml" and ".../003-review.yaml" have the
// same key, as have "3-x" and "003-x"), "" for a name without one. A
// folder's handoff files are ordered by that number, so a version moved
// by keep-both must take a number no file of the folder has (NextFree with
// a taken that also answers for these keys).
func NumberKey(p string) string {
	dir, name := path.Split(p)
	n, _, ok := leadingNumber(name)
	if !ok {
		return ""
	}
	return dir + "\x00" + strconv.Itoa(n)
}
