// Package phase holds strata's domain rules over decoded documents: the
// tier table and the rules of docs/contract.md §3 that the schemas cannot express
// (rules.go, run by validate), the history rules that compare a new version
// with the recorded one (history.go, applied by the engine), and the logic
// of docs/contract.md §7: which tier of a phase-output session to run next and which
// memory snapshot to restore (Recover), and the pending decisions of Phase
// Outcome handoffs with the cross-file rules of their resolutions (Folder,
// CheckResolution). It reads no files; the engine lists and decodes them and
// hands them over.
package phase

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strconv"
	"sync"
)

// Tier statuses of a phase output (the schema's status enum).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusPartial   = "partial"
)

// Gap reasons: why a tier below the highest present one is not completed.
const (
	ReasonMissing = "missing"
	ReasonFailed  = "failed"
	ReasonPartial = "partial"
	ReasonInvalid = "invalid" // the file fails its schema or rules
)

// TierFile is one phase-output file of a session.
type TierFile struct {
	Path     string `json:"path"`
	Phase    int    `json:"phase"`
	Label    string `json:"label"`
	Status   string `json:"status"` // completed, failed, partial; "invalid" when Valid is false
	Valid    bool   `json:"valid"`
	Snapshot any    `json:"-"` // memory_snapshot; nil when absent or invalid
}

var tierNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^phase-([0-9]+)-(.*)\.json$`) })

// ParseTierName reads the phase number and label from a file name like
// "phase-03-search.json". ok is false when the name has no phase number.
func ParseTierName(name string) (phase int, label string, ok bool) {
	m := tierNameRE().FindStringSubmatch(path.Base(name))
	if m == nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 0 || n > 1000 {
		return 0, "", false
	}
	return n, m[2], true
}

// NewTierFile describes a phase-output file from its path and its decoded
// document (nil when it could not be decoded). valid says whether it passed
// its schema and rules; an invalid file counts as present but not completed.
// The phase comes from the file name, else from the document; it is 0 when
// neither names one.
func NewTierFile(p string, doc any, valid bool) TierFile {
	t := TierFile{Path: p, Valid: valid, Status: ReasonInvalid}
	obj, _ := doc.(map[string]any)
	if n, _, ok := ParseTierName(p); ok {
		t.Phase = n
	} else if n, ok := intOf(obj["phase"]); ok {
		t.Phase = n
	}
	t.Label, _ = TierLabel(t.Phase)
	if !valid {
		return t
	}
	if s, ok := obj["status"].(string); ok {
		t.Status = s
	}
	t.Snapshot = obj["memory_snapshot"]
	return t
}

// NewForeignTierFile is NewTierFile for a phase output kept under a schema
// of the user's own (or plain json): strata does not know its shape, so a
// file that passes that schema and has no "status" of its own is completed.
func NewForeignTierFile(p string, doc any, valid bool) TierFile {
	t := NewTierFile(p, doc, valid)
	obj, _ := doc.(map[string]any)
	if _, has := obj["status"].(string); valid && !has {
		t.Status = StatusCompleted
	}
	return t
}

func intOf(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > 1000 {
		return 0, false
	}
	return int(i), true
}

// Gap is a tier that is not completed, at or below the highest present one.
type Gap struct {
	Phase  int    `json:"phase"`
	Label  string `json:"label"`
	Reason string `json:"reason"`         // missing, failed, partial, invalid
	Path   string `json:"path,omitempty"` // the file, when one is present
}

// Recovery is where a session stands and how to resume it.
type Recovery struct {
	Session        string `json:"session"`
	LastCompleted  int    `json:"last_completed"` // 0 when tier 1 is not completed
	LastLabel      string `json:"last_label"`
	NextPhase      int    `json:"next_phase"` // 0 when all tiers are completed
	NextLabel      string `json:"next_label"`
	Highest        int    `json:"highest_present"` // highest tier with a file (after --from)
	From           int    `json:"from,omitempty"`  // the --from limit, 0 when none
	Gaps           []Gap  `json:"gaps"`
	MemorySnapshot any    `json:"memory_snapshot"`         // of the last completed tier; null when none
	SnapshotFrom   string `json:"snapshot_from,omitempty"` // the file it comes from
	Ignored        []Gap  `json:"ignored,omitempty"`       // files above --from, or outside the tier table
}

// Recover finds the last contiguous completed tier of a session: the highest
// N such that tiers 1..N are all present, valid and completed. Every tier
// from 1 to the highest present one that is not completed is a gap (missing
// ones included): gaps are reported, never skipped. The next tier is the one
// after the last completed (none after the last tier of the table), and the
// memory snapshot to restore is the last completed tier's. from > 0 recovers
// as if tiers above from did not exist, so that the run restarts at from+1
// at the latest. When a tier has several files, a valid completed one wins.
func Recover(session string, files []TierFile, from int) Recovery {
	r := Recovery{Session: session, From: from, Gaps: []Gap{}}
	byPhase := map[int]TierFile{}
	for _, f := range files {
		label, known := TierLabel(f.Phase)
		if !known || from > 0 && f.Phase > from {
			r.Ignored = append(r.Ignored, Gap{Phase: f.Phase, Label: label, Reason: "ignored", Path: f.Path})
			continue
		}
		if old, ok := byPhase[f.Phase]; ok && rank(old) >= rank(f) {
			continue
		}
		byPhase[f.Phase] = f
		r.Highest = max(r.Highest, f.Phase)
	}
	contiguous := true
	for n := 1; n <= r.Highest; n++ {
		label, _ := TierLabel(n)
		f, ok := byPhase[n]
		reason := ""
		switch {
		case !ok:
			reason = ReasonMissing
		case !f.Valid:
			reason = ReasonInvalid
		case f.Status == StatusCompleted:
		case f.Status == StatusFailed, f.Status == StatusPartial:
			reason = f.Status
		default:
			reason = ReasonInvalid
		}
		if reason != "" {
			r.Gaps = append(r.Gaps, Gap{Phase: n, Label: label, Reason: reason, Path: f.Path})
			contiguous = false
			continue
		}
		if contiguous {
			r.LastCompleted, r.LastLabel = n, label
			r.MemorySnapshot, r.SnapshotFrom = f.Snapshot, f.Path
		}
	}
	if label, ok := TierLabel(r.LastCompleted + 1); ok {
		r.NextPhase, r.NextLabel = r.LastCompleted+1, label
	}
	return r
}

// rank orders the files of one tier: valid and completed first.
func rank(f TierFile) int {
	switch {
	case f.Valid && f.Status == StatusCompleted:
		return 2
	case f.Valid:
		return 1
	}
	return 0
}

// Session is one folder of phase outputs.
type Session struct {
	Name  string     `json:"session"`
	Dir   string     `json:"dir"`
	Tiers []TierFile `json:"tiers"` // by phase, then path
}

// Sessions groups phase-output files by folder (a session is the folder's
// name), sorted by name and then folder.
func Sessions(files []TierFile) []Session {
	idx := map[string]int{}
	var out []Session
	for _, f := range files {
		dir := path.Dir(f.Path)
		i, ok := idx[dir]
		if !ok {
			i = len(out)
			idx[dir] = i
			out = append(out, Session{Name: path.Base(dir), Dir: dir})
		}
		out[i].Tiers = append(out[i].Tiers, f)
	}
	for _, s := range out {
		sort.Slice(s.Tiers, func(i, j int) bool {
			if s.Tiers[i].Phase != s.Tiers[j].Phase {
				return s.Tiers[i].Phase < s.Tiers[j].Phase
			}
			return s.Tiers[i].Path < s.Tiers[j].Path
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Dir < out[j].Dir
	})
	return out
}
