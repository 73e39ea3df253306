package layers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
)

// Layers says which layers hold something.
type Layers struct {
	L1 bool `json:"l1"`
	L2 bool `json:"l2"`
	L3 bool `json:"l3"`
}

// Tier is the row of the degradation matrix: Full (L1, L2 and L3), Standard
// (L1 and one of L2, L3), Minimal (L1 only), none (no L1).
func (l Layers) Tier() string {
	switch {
	case !l.L1:
		return "none"
	case l.L2 && l.L3:
		return "Full"
	case l.L2 || l.L3:
		return "Standard"
	}
	return "Minimal"
}

// Decision is a pending decision of a Phase Outcome.
type Decision struct {
	Feature     string   `json:"feature"`
	ID          string   `json:"id"`
	Question    string   `json:"question,omitempty"`
	Options     []string `json:"options,omitempty"`
	Recommended string   `json:"recommended,omitempty"`
	Blocking    bool     `json:"blocking"`
	Outcome     string   `json:"outcome"` // the Phase Outcome file
}

// Session is a phase-output session and its last contiguous completed tier.
type Session struct {
	Name          string `json:"session"`
	LastCompleted int    `json:"last_completed"` // 0 when none
	NextPhase     int    `json:"next_phase,omitempty"`
	NextLabel     string `json:"next_label,omitempty"`
	Gaps          []int  `json:"gaps"`
}

// Report is what a new session needs to resume, in the read protocol's order.
// The state's phase and context and the L3 observations are quoted at
// most MaxLineValue characters each (state.Cut), as the protocol cuts the
// values of its lines (those lines the report quotes as they are, their
// pointer to the whole state kept): an agent reads the report as context,
// and a pasted design document would fill it. WholeState then says where
// the whole state is.
type Report struct {
	Active  bool   `json:"active"`
	Type    string `json:"type,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Context string `json:"context,omitempty"`
	// WholeState, set when phase or context was cut, is where the whole
	// state is: the file on disk (resume), `strata show PATH --rev ID` (at).
	WholeState  string     `json:"whole_state,omitempty"`
	Status      string     `json:"status,omitempty"`
	LastUpdated *time.Time `json:"last_updated,omitempty"`
	Age         string     `json:"age,omitempty"`
	AgeSeconds  int64      `json:"age_seconds,omitempty"`
	Expired     *Expiry    `json:"expired,omitempty"` // expired by this resume
	// PastTTL is the deadline the workflow state has passed and a resume
	// would expire it by: now for Peek (which expires nothing), at T for
	// At (absent for a revision).
	PastTTL *time.Time `json:"past_ttl,omitempty"`
	// then: PastTTL was judged at a moment of history (At), not now
	then      bool
	Tier      string         `json:"tier"`
	Layers    Layers         `json:"layers"`
	Paths     map[string]any `json:"paths"`
	L3        []string       `json:"l3_observations,omitempty"` // of the workflow-state entity
	L2        []string       `json:"l2_workflow_lines,omitempty"`
	Foreign   []string       `json:"foreign_state,omitempty"` // L1 files in their own shape: not interpreted
	Decisions []Decision     `json:"pending_decisions"`
	Sessions  []Session      `json:"sessions"`
	Next      []string       `json:"next"`
}

// Resume expires a workflow state past its TTL (recording with src first),
// then reads L1, L3, L2 and the PhaseOutputs and PhaseOutcomes folders.
func (a *Agent) Resume(src state.Source) (*Report, error) {
	x, _, err := a.Expire(src)
	if err != nil {
		return nil, err
	}
	r := a.report(disk{a}, a.Eng.Now())
	r.Expired = x
	r.Next = next(r)
	return r, nil
}

// view is what the read protocol reads from: the disk (resume) or one
// commit of history (at).
type view interface {
	read(rel string) ([]byte, bool)
	phaseFiles() []phase.TierFile
	folders() []phase.Folder
	// whole says where the whole file rel of this view is
	whole(rel string) string
}

// report reads the layers from v; now is the moment ages are measured from.
func (a *Agent) report(v view, now time.Time) *Report {
	r := &Report{Decisions: []Decision{}, Sessions: []Session{}, Paths: map[string]any{}}
	cfg := a.Eng.Config()

	// L1
	for _, c := range synced {
		for _, p := range l1Paths(cfg, c) {
			data, ok := v.read(p)
			if !ok {
				continue
			}
			r.Layers.L1 = true
			if c != state.ClassWorkflowState {
				continue
			}
			r.Paths["l1"] = p
			if k, _ := cfg.Classify(p); !a.conforms(k, data) {
				r.Foreign = append(r.Foreign, p) // fails strata's schema: not read as a workflow
				continue
			}
			doc := decodeObject(data)
			if len(doc) == 0 {
				continue
			}
			r.Type, r.Status = str(doc, "type"), str(doc, "status")
			var cutPhase, cutContext bool
			r.Phase, cutPhase = state.Cut(str(doc, "phase"), MaxLineValue)
			r.Context, cutContext = state.Cut(str(doc, "context"), MaxLineValue)
			if cutPhase || cutContext {
				r.WholeState = v.whole(p)
			}
			r.Active = r.Status != "completed"
			if t, err := time.Parse(time.RFC3339Nano, str(doc, "lastUpdated")); err == nil {
				r.LastUpdated = &t
				r.AgeSeconds, r.Age = ageOf(t, now)
			}
		}
	}
	for _, p := range foreignL1(cfg) {
		if _, ok := v.read(p); ok {
			r.Layers.L1 = true
			r.Foreign = append(r.Foreign, p)
		}
	}
	// L3
	r.Paths["l3"] = cfg.Graph
	if data, ok := v.read(cfg.Graph); ok {
		r.Layers.L3 = true
		obs := graphObservations(data, "workflow-state")
		k, _ := cfg.Classify(cfg.Graph)
		if own, _ := ownEntity(Entity{Name: graph.EntityWorkflowState, Observations: obs}, repoOf(a.Eng, k), realTop(a.Eng)); own {
			r.L3 = cutAll(obs) // (a shared graph's entity of another project is not quoted: attack33 H2)
		}
	}
	// L2
	r.Paths["l2"] = cfg.L2()
	if data, ok := v.read(cfg.L2()); ok {
		r.Layers.L2 = true
		r.L2 = protocolLines(data)
		if len(r.L2) > 5 {
			r.L2 = r.L2[len(r.L2)-5:]
		}
	}
	r.Tier = r.Layers.Tier()
	r.Sessions = sessionsOf(v.phaseFiles())
	r.Decisions = decisionsOf(v.folders())
	r.Next = next(r)
	return r
}

// cutAll cuts each of lines as the report quotes a value (state.Cut).
func cutAll(lines []string) []string {
	for i, l := range lines {
		lines[i], _ = state.Cut(l, MaxLineValue)
	}
	return lines
}

// read reads a kept file through the engine (no symlinks, size-limited).
func (a *Agent) read(rel string) ([]byte, bool) {
	k, ok := a.Eng.Config().Classify(rel)
	if !ok {
		return nil, false
	}
	f, p := a.Eng.Read(k)
	if p != nil || !f.Exists {
		return nil, false
	}
	return f.Content, true
}

// future is the Age of a time after now (a clock ahead, a hand-edited date).
const future = "in the future"

// ageOf is how long before now t was: in whole seconds (truncated, as a
// duration's), and as a short human duration: "45s", "12m", "3h20m",
// "2d4h", or future when t is later. It counts on the calendar, not in a
// time.Duration, which stops at about 292 years: a date a file gives (year
// 1, year 9999) is further away than that.
func ageOf(t, now time.Time) (int64, string) {
	secs, nanos := now.Unix()-t.Unix(), now.Nanosecond()-t.Nanosecond()
	switch {
	case secs > 0 && nanos < 0:
		secs, nanos = secs-1, nanos+1e9
	case secs < 0 && nanos > 0:
		secs, nanos = secs+1, nanos-1e9
	}
	const minute, hour, day = 60, 3600, 86400
	switch {
	case secs < 0 || nanos < 0:
		return secs, future
	case secs < minute:
		return secs, fmt.Sprintf("%ds", secs)
	case secs < hour:
		return secs, fmt.Sprintf("%dm", secs/minute)
	case secs < day:
		return secs, fmt.Sprintf("%dh%dm", secs/hour, secs%hour/minute)
	}
	return secs, fmt.Sprintf("%dd%dh", secs/day, secs%day/hour)
}

// graphObservations reads the observations of one entity from MCP memory
// JSONL; lines it cannot read are skipped.
func graphObservations(data []byte, name string) []string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e struct {
			Type         string   `json:"type"`
			Name         string   `json:"name"`
			Observations []string `json:"observations"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "entity" && e.Name == name {
			return e.Observations
		}
	}
	return nil
}

// disk is the view of the work tree, read through the engine.
type disk struct{ a *Agent }

func (d disk) read(rel string) ([]byte, bool) { return d.a.read(rel) }

// whole is the file itself: the version reported may be one no record
// holds yet.
func (d disk) whole(rel string) string { return state.ShellWord(rel) }

// phaseFiles are the phase-output files on disk; problems with them are
// gaps there, not errors of resume.
func (d disk) phaseFiles() []phase.TierFile {
	files, _, _ := d.a.Eng.PhaseFiles()
	return files
}

// folders are the feature folders of Phase Outcomes, as `strata decisions`
// reads them.
func (d disk) folders() []phase.Folder {
	var out []phase.Folder
	dirs, err := d.a.Eng.FolderDirs()
	if err != nil {
		return out
	}
	for _, dir := range dirs {
		if f, _, err := d.a.Eng.Folder(dir); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// sessionsOf reports the last contiguous completed tier of each phase-output
// session (package phase decides, as `strata phase recover` does).
func sessionsOf(files []phase.TierFile) []Session {
	out := []Session{}
	for _, ps := range phase.Sessions(files) {
		rec := phase.Recover(ps.Name, ps.Tiers, 0)
		s := Session{Name: ps.Name, LastCompleted: rec.LastCompleted, NextPhase: rec.NextPhase, NextLabel: rec.NextLabel, Gaps: []int{}}
		for _, g := range rec.Gaps {
			s.Gaps = append(s.Gaps, g.Phase)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// decisionsOf lists the unresolved pending decisions of every Phase Outcome,
// as `strata decisions` does (a decision without "blocking" blocks).
func decisionsOf(folders []phase.Folder) []Decision {
	out := []Decision{}
	for _, f := range folders {
		for _, d := range f.Pending() {
			out = append(out, Decision{Feature: d.Feature, ID: d.ID, Question: d.Question, Options: d.Options,
				Recommended: d.Recommended, Blocking: d.Blocking, Outcome: d.Outcome})
		}
	}
	return out
}

// next says what to run next, one line each: a value from a state file is
// quoted when it is not printable (state.TermSafe), a value of a command
// to run is one shell word (state.ShellWord).
func next(r *Report) []string {
	q := state.TermSafe
	var out []string
	if x := r.Expired; x != nil && x.Entry != nil {
		out = append(out, fmt.Sprintf("the %s workflow at %s expired (last updated %s); undo with: strata restore %s --rev %s~1",
			q(x.Type), q(x.Phase), x.LastUpdated.Format(time.RFC3339), WorkflowStatePath, x.Entry.Commit[:min(10, len(x.Entry.Commit))]))
	}
	for _, d := range r.Decisions {
		if d.Blocking {
			out = append(out, fmt.Sprintf("resolve blocking decision %s: %s", q(d.ID), DecideCommand(d.ID, d.Recommended, path.Base(path.Dir(d.Outcome)))))
		}
	}
	switch {
	case r.PastTTL != nil && r.Expired == nil && r.then:
		// At's: what a resume at that moment would have done
		out = append(out, fmt.Sprintf("the %s workflow was past its TTL (deadline %s): a resume then would have expired it",
			q(r.Type), r.PastTTL.Format(time.RFC3339)))
	case r.PastTTL != nil && r.Expired == nil:
		// Peek's: what Resume would have done
		out = append(out, fmt.Sprintf("the %s workflow at %s is past its TTL (deadline %s): strata resume would expire it, resetting %s to {} (strata restore undoes that); nothing was expired here",
			q(r.Type), q(phaseOf(map[string]any{"phase": r.Phase})), r.PastTTL.Format(time.RFC3339), WorkflowStatePath))
	case r.Active:
		line := fmt.Sprintf("continue the %s workflow: %s", q(r.Type), Verb(q(r.Phase)))
		if r.Context != "" {
			line += " " + q(r.Context)
		}
		out = append(out, line)
	case r.Status == "completed":
		out = append(out, fmt.Sprintf("the %s workflow is completed; start a new one", q(r.Type)))
	}
	for _, s := range r.Sessions {
		if s.NextPhase > 0 {
			out = append(out, fmt.Sprintf("session %s: next tier %d (%s); %s", q(s.Name), s.NextPhase, q(s.NextLabel), RecoverCommand(s.Name)))
		}
	}
	for _, p := range r.Foreign {
		out = append(out, "read "+q(p)+" yourself: strata keeps its versions but does not interpret it")
	}
	if len(out) == 0 {
		out = append(out, "no active workflow: start one, or run strata status")
	}
	return out
}

// DecideCommand is the strata decide command that resolves a decision with
// choice (CHOICE when there is none to suggest), every value one shell
// word: a Phase Outcome may come from another machine, and a command
// printed for the user to copy must run nothing else. A choice that starts
// with "-" comes after "--", so it is not read as a flag.
func DecideCommand(id, choice, feature string) string {
	id, feature = state.ShellWord(id), state.ShellWord(feature)
	switch {
	case choice == "":
		return fmt.Sprintf("strata decide %s CHOICE --feature %s", id, feature)
	case strings.HasPrefix(choice, "-"):
		return fmt.Sprintf("strata decide %s --feature %s -- %s", id, feature, state.ShellWord(choice))
	}
	return fmt.Sprintf("strata decide %s %s --feature %s", id, state.ShellWord(choice), feature)
}

// RecoverCommand is the strata phase recover command for a session, its
// name one shell word after "--" when it starts with "-", as DecideCommand
// gives a choice.
func RecoverCommand(session string) string {
	if strings.HasPrefix(session, "-") {
		return "strata phase recover -- " + state.ShellWord(session)
	}
	return "strata phase recover " + state.ShellWord(session)
}

// Text renders the report for a person or an agent's context, one line a
// value: each value a state file gave is quoted when it is not printable
// (state.TermSafe), so no recorded newline starts a line of its own.
func (r *Report) Text() string {
	q := state.TermSafe
	var b strings.Builder
	switch {
	case r.Active || r.Status == "completed":
		fmt.Fprintf(&b, "workflow: %s, phase %s", q(r.Type), q(r.Phase))
		if r.Status != "" {
			fmt.Fprintf(&b, " (%s)", q(r.Status))
		}
		b.WriteString("\n")
		if r.Context != "" {
			fmt.Fprintf(&b, "context: %s\n", q(r.Context))
		}
		if r.WholeState != "" {
			fmt.Fprintf(&b, "(values cut at %d characters; the whole state: %s)\n", MaxLineValue, q(r.WholeState))
		}
		if r.Age != "" {
			ago := r.Age + " ago"
			if r.Age == future {
				ago = future
			}
			fmt.Fprintf(&b, "last updated: %s (%s)\n", r.LastUpdated.Format(time.RFC3339), ago)
		}
	case len(r.Foreign) > 0:
		b.WriteString("workflow: not interpreted\n")
	default:
		b.WriteString("workflow: none active\n")
	}
	for _, p := range r.Foreign {
		fmt.Fprintf(&b, "%s: state file in its own shape; not interpreted\n", q(p))
	}
	var have []string
	for _, l := range []struct {
		name string
		ok   bool
	}{{"L1", r.Layers.L1}, {"L2", r.Layers.L2}, {"L3", r.Layers.L3}} {
		if l.ok {
			have = append(have, l.name)
		}
	}
	if len(have) == 0 {
		have = []string{"no layer"}
	}
	fmt.Fprintf(&b, "tier: %s (%s present)\n", r.Tier, strings.Join(have, ", "))
	if len(r.L2) > 0 {
		b.WriteString("memory (L2):\n")
		for _, l := range r.L2 {
			fmt.Fprintf(&b, "  - %s\n", q(l))
		}
	}
	blocking := 0
	for _, d := range r.Decisions {
		if d.Blocking {
			blocking++
		}
	}
	if blocking > 0 {
		fmt.Fprintf(&b, "pending blocking decisions: %d\n", blocking)
		for _, d := range r.Decisions {
			if d.Blocking {
				fmt.Fprintf(&b, "  %s %s: %s (recommended: %s)\n", q(d.Feature), q(d.ID), q(d.Question), q(d.Recommended))
			}
		}
	}
	if len(r.Sessions) > 0 {
		b.WriteString("phase outputs:\n")
		for _, s := range r.Sessions {
			fmt.Fprintf(&b, "  %s: last completed tier %d", q(s.Name), s.LastCompleted)
			if len(s.Gaps) > 0 {
				fmt.Fprintf(&b, ", gaps %v", s.Gaps)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("next:\n")
	for _, n := range r.Next {
		fmt.Fprintf(&b, "  %s\n", n)
	}
	return b.String()
}

// Present reports which layers exist: L1 when any canonical L1 file is a
// readable regular file, L2 and L3 when their files are.
func (a *Agent) Present() Layers {
	var l Layers
	for _, c := range synced {
		for _, p := range l1Paths(a.Eng.Config(), c) {
			if _, ok := a.read(p); ok {
				l.L1 = true
			}
		}
	}
	for _, p := range foreignL1(a.Eng.Config()) {
		if _, ok := a.read(p); ok {
			l.L1 = true
		}
	}
	_, l.L2 = a.read(a.Eng.Config().L2())
	_, l.L3 = a.read(a.Eng.Config().Graph)
	return l
}

// Withheld says, for the L2 and the L3 file, why a file that exists there
// is private ("" when it is kept, or when nothing is there): Present counts
// such a layer as missing, which status and doctor must not leave at
// "missing" while the file is on disk.
func (a *Agent) Withheld() (l2, l3 string) {
	cfg := a.Eng.Config()
	why := func(rel string) string {
		if fi, err := os.Lstat(cfg.Abs(rel)); err != nil || !fi.Mode().IsRegular() {
			return ""
		}
		return cfg.Private(rel)
	}
	return why(cfg.L2()), why(cfg.Graph)
}
