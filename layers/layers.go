// Package layers is the sync agent between strata's three layers (docs/contract.md §6):
// after each recorded L1 change it writes the L2 lines of a workflow's phase
// transitions and completion to MEMORY.md and upserts the L1 documents into
// the L3 graph; it expires workflow states past their TTL; and it gathers
// what a new session needs to resume (the read protocol). Its own writes are
// recorded with source resolve (or expire) and touch only L2 and L3 files,
// which never start the protocol again.
package layers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/markdown"
	"github.com/strata-dev/strata/state"
)

// WorkflowSection is the MEMORY.md heading the protocol writes under.
const WorkflowSection = "Workflow state"

// MaxWorkflowLines is how many protocol lines the section keeps; older ones
// leave the file (not the history).
const MaxWorkflowLines = 20

// DefaultTTL applies when a workflow state has no ttl.
const DefaultTTL = 24 * time.Hour

// DegradedWarning is printed once when the L3 file cannot be written.
const DegradedWarning = "L3 unavailable — degraded mode (L1 only)"

// WorkflowStatePath is the L1 file whose transitions reach L2.
const WorkflowStatePath = ".claude/workflow-state.json"

// WorkflowTypes are the types of strata's workflow-state schema: the
// protocol writes lines only for a state that passes it.
var WorkflowTypes = []string{"APEX", "ONESHOT", "DEBUG", "BRAINSTORM"}

// protocolLine matches the lines the protocol writes, whole, for the cap of
// 20: one line (an item the user annotated with nested lines is the
// user's), in one of its three shapes with one of WorkflowTypes. A line of
// the user's that merely starts the same way ("Completed onboarding for
// Alice: …", "Active CI workflow: …") is never counted nor removed. The
// Expired line's phase may be missing: strata before session 24 wrote "at
// for" for a state whose phase was white space (now "at (no phase) for").
var protocolLine = sync.OnceValue(func() *regexp.Regexp {
	typ := "(?:" + strings.Join(WorkflowTypes, "|") + ")"
	return regexp.MustCompile(`^(?:Active ` + typ + ` workflow: .+ completed, .+|Completed ` + typ + ` for .+: .+|Expired workflow: ` + typ + ` at (?:.* )?for .+)$`)
})

// IsProtocolLine reports whether an item of the workflow section has the
// shape of a line the protocol writes.
func IsProtocolLine(text string) bool { return protocolLine().MatchString(text) }

// synced are the L1 classes mirrored into L3.
var synced = []state.Class{state.ClassWorkflowState, state.ClassInitiative, state.ClassInterviewState, state.ClassDelegationLog}

func isSynced(c state.Class) bool {
	for _, s := range synced {
		if s == c {
			return true
		}
	}
	return false
}

// Agent runs the write protocol for one repository. It is not safe for
// concurrent use; the watcher owns one, each CLI run makes its own.
type Agent struct {
	Eng   *engine.Engine
	Graph Graph
	// Warn receives the degraded-mode warning, once per degraded spell, and
	// other best-effort failures.
	Warn     func(msg string)
	degraded bool
	unkept   map[string]bool // the L2 and L3 files already said to be private
	// replaying: Replay's runs (see there)
	replaying bool
}

// New returns an agent using DefaultGraph for L3.
func New(eng *engine.Engine, warn func(string)) *Agent {
	if warn == nil {
		warn = func(string) {}
	}
	return &Agent{Eng: eng, Graph: DefaultGraph, Warn: warn}
}

// AfterRecord runs the write protocol for what engine.Record recorded: L2
// lines for a transition or completion of the workflow state, then the L3
// upsert of every L1 document when any of them changed. It returns the
// outcomes of its own recordings (source resolve). L2 and L3 failures are
// warnings, never errors of the L1 change; the error is for the store.
func (a *Agent) AfterRecord(outs []engine.Outcome) ([]engine.Outcome, error) {
	return a.protocol(outs, nil)
}

// protocol is AfterRecord; a replay gives, for each of outs, the lines the
// records after it wrote (later), which its own line goes before.
func (a *Agent) protocol(outs []engine.Outcome, later [][]string) ([]engine.Outcome, error) {
	var lines []placed
	l1 := false
	for i, o := range outs {
		if o.Entry == nil {
			continue
		}
		k, ok := classifiedL1(a.Eng.Config(), o.Path)
		if !ok {
			continue
		}
		if o.Entry.Source != state.SourceExpire &&
			(a.replaying && o.Entry.AtHead != "" || !a.replaying && a.Eng.CheckedOut(o.Entry.Commit, o.Path)) {
			// git put it there (a checkout, stash, reset, pull): no step of
			// the agent's, no L2 line, no L3 upsert. A replay asks the
			// record itself (its Strata-Head): HEAD has moved since. (The
			// TTL's reset is strata's own, whatever a commit holds.)
			continue
		}
		l1 = true
		if k.Class != state.ClassWorkflowState {
			continue
		}
		ls, err := a.stepLines(o.Entry)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			p := placed{text: l}
			if later != nil {
				p.before = later[i]
			}
			lines = append(lines, p)
		}
	}
	var res []engine.Outcome
	if len(lines) > 0 {
		src := state.SourceResolve
		if !slices.ContainsFunc(lines, func(p placed) bool { return !strings.HasPrefix(p.text, expiredPrefix) }) {
			src = state.SourceExpire // a replayed expiry's line, as the expiry records it
		}
		o, err := a.writeMemory(lines, src)
		if err != nil {
			return res, err
		}
		res = append(res, o...)
	}
	if l1 {
		o, err := a.SyncGraph()
		if err != nil {
			return res, err
		}
		res = append(res, o...)
	}
	return res, nil
}

// stepLines are the L2 lines the protocol writes for en, a record of the
// workflow state: the transition's (Transition), or for the TTL's reset
// (source expire) the Expired line.
func (a *Agent) stepLines(en *state.Entry) ([]string, error) {
	if en.Action == state.ActionDelete {
		return nil, nil
	}
	cur, err := a.docAt(en.Commit, en.Path)
	if err != nil {
		return nil, err
	}
	prev, err := a.previous(en.Commit, en.Path)
	if err != nil {
		return nil, err
	}
	if en.Source == state.SourceExpire {
		if len(cur) > 0 || len(prev) == 0 {
			return nil, nil
		}
		return []string{expiredLine(prev, en.Commit)}, nil
	}
	return Transition(prev, cur, en.Commit), nil
}

// expiredPrefix starts the line of an expiry.
const expiredPrefix = "Expired workflow: "

// expiredLine is the L2 line of the TTL's reset of doc, recorded in the
// commit reset (so doc is in reset~1): a state whose phase is white space
// (the schema's minLength lets " " through) is "at (no phase)", as a
// blank context is "for (no context)", so the line reads and the cap
// counts it. Each value is cut as lineValues cuts it.
func expiredLine(doc map[string]any, reset string) string {
	v := lineValues{}
	typ, ph, ctx := str(doc, "type"), v.clip(phaseOf(doc)), v.clip(contextOf(doc))
	return v.line(reset+"~1", expiredPrefix+"%s at %s for %s", typ, ph, ctx)
}

// MaxLineValue is how many characters of one value of the workflow state
// (its phase, the previous phase, context, outcome) a protocol line quotes,
// counted as written in MEMORY.md (white space folded, escapes spelt out).
// A longer value is cut there and ends in "…", and the line then ends with
// where the whole state lives: " (cut; the whole state: strata show
// .claude/workflow-state.json --rev ID)". So a line strata writes into the
// file Claude Code loads only the first 25 KB of stays under about 1 KB,
// whatever an agent pasted into the state.
const MaxLineValue = state.MaxQuoted

// lineValues cuts the values of one protocol line and remembers whether it
// cut any.
type lineValues struct{ cut bool }

// clip is s as the line quotes it: white space folded, then at most
// MaxLineValue characters once escaped (an escape is never split), and
// "…" after a cut.
func (v *lineValues) clip(s string) string {
	s, cut := state.Cut(markdown.Normalize(s), MaxLineValue)
	v.cut = v.cut || cut
	return s
}

// line is lineOf of format and args, with the pointer to the whole state
// (strata show … --rev rev) when a value was cut.
func (v *lineValues) line(rev, format string, args ...any) string {
	l := lineOf(format, args...)
	if v.cut {
		l += fmt.Sprintf(" (cut; the whole state: strata show %s --rev %s)", WorkflowStatePath, shortRev(rev))
	}
	return l
}

// shortRev is rev with its commit id cut to the ten characters strata
// prints ("abc…~1" → "abc1234567~1").
func shortRev(rev string) string {
	id, rest, _ := strings.Cut(rev, "~")
	if rest != "" {
		rest = "~" + rest
	}
	return state.ShortID(id) + rest
}

func phaseOf(doc map[string]any) string {
	if p := str(doc, "phase"); !blank(p) {
		return p
	}
	return "(no phase)"
}

// placed is a line for the workflow section and where it goes: at the
// end, or, replayed, before the first protocol line in the section that
// one of before (the lines of the records after its own) names.
type placed struct {
	text   string
	before []string
}

func texts(lines []placed) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return strings.Join(out, " | ")
}

// AfterSaves runs the write protocol for the versions a write of strata's
// own saved first (engine.Outcome.Saved, on the state ref): an unrecorded
// step of the agent's that a restore or a resolve was about to replace,
// recorded on the way, which no watcher will find again. It returns the
// outcomes of the protocol's records.
func (a *Agent) AfterSaves(outs []engine.Outcome) ([]engine.Outcome, error) {
	var saved []engine.Outcome
	for _, o := range outs {
		if o.Saved != nil && !o.SavedRejected {
			saved = append(saved, engine.Outcome{Path: o.Path, Entry: o.Saved})
		}
	}
	if len(saved) == 0 {
		return nil, nil
	}
	return a.AfterRecord(saved)
}

// SavedStepNote is the line that says what the protocol recorded for a
// saved step (AfterSaves): "update .claude/memory/MEMORY.md for the saved
// step (ID)", "" for an outcome that recorded nothing.
func SavedStepNote(o engine.Outcome) string {
	if o.Entry == nil {
		return ""
	}
	return fmt.Sprintf("%s %s for the saved step (%s)", o.Entry.Action, state.ShownPath(o.Path), state.ShortID(o.Entry.Commit))
}

// replayWindow is how many log entries back Replay looks for its base,
// and replayMax how many records it replays at most: a run under way owes
// the records of one batch.
const (
	replayWindow = 4096
	replayMax    = 16
)

// ErrReplayBase is Replay's error when its base is not among the state
// ref's last entries (a forget rewrote the ref since), or names more
// records than one run could owe: nothing is replayed.
var ErrReplayBase = errors.New("a commit the state ref no longer holds among its last entries (a forget rewrote it since?), or one more records back than a run under way owes; the lines it owed cannot be told")

// IsL1 reports whether k, a kept file as cfg classifies it, is one of the
// L1 files the protocol mirrors: a record of it runs the protocol. (A
// user's own file that borrows an L1 schema is not "the" workflow state.)
func IsL1(cfg *config.Config, k config.Kept) bool {
	return isSynced(k.Class) && slices.Contains(l1Paths(cfg, k.Class), k.Path)
}

// classifiedL1 is IsL1 of rel as cfg classifies it now.
func classifiedL1(cfg *config.Config, rel string) (config.Kept, bool) {
	k, ok := cfg.Classify(rel)
	return k, ok && IsL1(cfg, k)
}

// Replay runs the write protocol for the records of L1 files with source
// src, and the TTL's resets (source expire), made on the state ref after
// base ("" for none), oldest first: the runs a watcher killed between its
// records and the protocol's writes still owed. Each line goes where it
// belongs: before the first protocol line of the section that a record
// after its own wrote (that record's line as the protocol gives it),
// else at the end. A line already right there (the killed run's write,
// perhaps, or the expiry's of a resume) stays; one a later record wrote
// again (the same text) is left where that put it; one elsewhere before
// is moved; one that cannot be put there safely is not written, with a
// warning. A version the checked-out commit held when it was recorded
// (Strata-Head) is a branch's, as the protocol judged then. A base not
// among the last replayWindow entries, or one naming more than replayMax
// records, replays nothing (ErrReplayBase). It returns the outcomes of the
// protocol's records.
func (a *Agent) Replay(base string, src state.Source) ([]engine.Outcome, error) {
	ents, err := a.Eng.Log(state.LogQuery{Limit: replayWindow})
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	owed := func(en *state.Entry) bool { return en.Source == src || en.Source == state.SourceExpire }
	// after: the L1 records from the newest to the oldest owed one after base
	var after []state.Entry
	found := base == ""
	steps, oldest := 0, 0
	for _, en := range ents {
		if en.Commit == base {
			found = true
			break
		}
		if _, ok := classifiedL1(a.Eng.Config(), en.Path); !ok {
			continue
		}
		after = append(after, en)
		if owed(&en) {
			steps, oldest = steps+1, len(after)
		}
	}
	if !found || steps > replayMax {
		return nil, ErrReplayBase
	}
	after = after[:oldest]
	var outs []engine.Outcome
	var later [][]string
	var since []string // the lines of the records after the one at hand
	for i := range after {
		en := &after[i]
		if owed(en) {
			outs = append(outs, engine.Outcome{Path: en.Path, Entry: en})
			later = append(later, slices.Clone(since))
		}
		if k, _ := classifiedL1(a.Eng.Config(), en.Path); k.Class == state.ClassWorkflowState &&
			(en.AtHead == "" || en.Source == state.SourceExpire) { // (a branch's version got no line)
			ls, err := a.stepLines(en)
			if err != nil {
				return nil, err
			}
			since = append(ls, since...)
		}
	}
	slices.Reverse(outs) // oldest first
	slices.Reverse(later)
	a.replaying = true
	defer func() { a.replaying = false }()
	return a.protocol(outs, later) // one MEMORY.md write, one graph upsert
}

// docAt decodes a recorded JSON document ({} when it is not an object).
func (a *Agent) docAt(commit, path string) (map[string]any, error) {
	data, err := a.Eng.FileAt(commit, path)
	if errors.Is(err, state.ErrNotFound) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeObject(data), nil
}

func decodeObject(data []byte) map[string]any {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// previous is the version of path recorded before commit ({} when none).
func (a *Agent) previous(commit, path string) (map[string]any, error) {
	// The version before this commit is the one its first parent holds: no
	// log walk (which, sharing an index with a writer, could miss a commit
	// recorded the same moment).
	parent, err := a.Eng.Commit(engine.Point{Rev: commit + "^"})
	if err != nil {
		return map[string]any{}, nil // the first commit: nothing before it
	}
	if _, err := a.Eng.FileAt(parent, path); errors.Is(err, state.ErrNotFound) {
		return map[string]any{}, nil // absent (or deleted) before it
	}
	return a.docAt(parent, path)
}

// verbs name what a workflow does in a phase.
var verbs = map[string]string{
	"plan": "planning", "implement": "implementing", "review": "reviewing", "fix": "fixing", "design": "designing",
}

// Verb is the L2 wording of entering a phase: "implementing", or "entering qa".
func Verb(phase string) string {
	if v, ok := verbs[phase]; ok {
		return v
	}
	return "entering " + phase
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func contextOf(doc map[string]any) string {
	if c := str(doc, "context"); !blank(c) {
		return c
	}
	return "(no context)"
}

// Transition returns the L2 lines for a change of the workflow state from
// prev to cur, cur recorded in commit: `Completed {type} for {context}:
// {outcome}` when its status became completed (outcome from its outcome or
// summary field, else "done"); otherwise `Active {type} workflow: {prev}
// completed, {verb} {context}` when the phase changed within the same
// workflow (sameWorkflow, both phases set). Starting or clearing a
// workflow writes nothing. Each value is cut at MaxLineValue characters,
// and a line with a cut value names commit (lineValues).
func Transition(prev, cur map[string]any, commit string) []string {
	v := lineValues{}
	typ := str(cur, "type")
	if typ == "" {
		return nil
	}
	if str(cur, "status") == "completed" && str(prev, "status") != "completed" {
		outcome := str(cur, "outcome")
		if blank(outcome) {
			outcome = str(cur, "summary")
		}
		if blank(outcome) {
			outcome = "done"
		}
		ctx := v.clip(contextOf(cur))
		return []string{v.line(commit, "Completed %s for %s: %s", typ, ctx, v.clip(outcome))}
	}
	p, c := str(prev, "phase"), str(cur, "phase")
	if blank(p) || blank(c) || p == c || !sameWorkflow(prev, cur) {
		return nil
	}
	line := fmt.Sprintf("Active %s workflow: %s completed, %s", typ, v.clip(p), Verb(v.clip(c)))
	if ctx := str(cur, "context"); ctx != "" {
		line += " " + v.clip(ctx)
	}
	return []string{v.line(commit, "%s", line)}
}

// blank reports whether s is empty once the line is made (white space
// only: a context of "\n" or "\u0085" is no context).
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// lineOf is a protocol line made from the state's values: one line of
// text that a terminal, git diff or an agent's context reads as text. Runs
// of white space (line breaks, tabs, U+0085, U+2028 included) become one
// space, as AddItem writes an item; every other control or format
// character (ESC, BEL, DEL, C1, bidi controls, zero widths) is written as
// its escape, as text (state.EscapeText): "\x1b[2J", "\u202e". The line is
// then the very text of the item written, so the cap (IsProtocolLine) and
// the replay (the section's last line equal to it) recognise it.
func lineOf(format string, args ...any) string {
	return ItemText(fmt.Sprintf(format, args...))
}

// ItemText is s as strata writes it as one list item of MEMORY.md, the
// protocol's lines and memory add's learnings alike: runs of white space
// (line breaks, tabs, U+0085, U+2028 included) become one space, and every
// other control or format character is written as its escape, as text
// (state.EscapeText). The item is then one line that cat, git diff and an
// agent's context read as text, with no byte below 0x20 nor DEL in it.
func ItemText(s string) string {
	return state.EscapeText(markdown.Normalize(s))
}

// protocolLines are the protocol lines of the workflow section of a
// MEMORY.md, in order (none when it does not parse).
func protocolLines(data []byte) []string {
	d, err := markdown.Parse(data)
	if err != nil {
		return nil
	}
	s := d.Find(WorkflowSection, 0)
	if s == nil {
		return nil
	}
	var out []string
	for _, it := range s.Items {
		if IsProtocolLine(it.Text) {
			out = append(out, it.Text)
		}
	}
	return out
}

// sameWorkflow reports whether cur continues the workflow prev holds: the
// same type, prev not completed (what follows a completed workflow starts
// a new one), and the same startedAt when both give one.
func sameWorkflow(prev, cur map[string]any) bool {
	if str(prev, "type") != str(cur, "type") || str(prev, "status") == "completed" {
		return false
	}
	a, b := str(prev, "startedAt"), str(cur, "startedAt")
	return a == "" || b == "" || a == b
}

// memoryKept is the L2 file as a kept path.
func (a *Agent) memoryKept() (config.Kept, bool) {
	return a.Eng.Config().Classify(a.Eng.Config().L2())
}

// writeMemory appends lines under ## Workflow state (a line already there
// moves to the end; a replayed one goes where it belongs, see placeOwed),
// keeps the section's last MaxWorkflowLines protocol lines, writes the
// file atomically and records it with src. Unrecorded edits of the file
// are recorded first, with source record, so they are not attributed to
// the agent. The new version replaces the file only while it is still the
// version read (engine.Put): when it changed meanwhile, it is read again
// and the lines applied to that; after engine.EditTries such tries it is
// left alone with a warning that quotes the lines.
func (a *Agent) writeMemory(lines []placed, src state.Source) ([]engine.Outcome, error) {
	k, ok := a.memoryKept()
	if !ok {
		a.sayPrivate("L2", a.Eng.Config().L2(), "no line is written; it would have said: "+texts(lines))
	}
	if !ok || k.Schema != "markdown" {
		return nil, nil // private, ignored, or under a schema of the user's own: never written
	}
	var outs []engine.Outcome
	err := engine.Retry(func() error {
		o, err := a.writeMemoryOnce(k, lines, src)
		outs = append(outs, o...)
		return err
	})
	var changed *engine.ChangedError
	if errors.As(err, &changed) {
		a.Warn(fmt.Sprintf("L2 %s not written: it changed on disk each of the %d times it was read; it would have said: %s",
			k.Path, changed.Tries, texts(lines)))
		return outs, nil
	}
	return outs, err
}

// writeMemoryOnce is one try of writeMemory: a *engine.ChangedError when
// the file changed between its read and the write.
func (a *Agent) writeMemoryOnce(k config.Kept, lines []placed, src state.Source) ([]engine.Outcome, error) {
	var outs []engine.Outcome
	f, p := a.Eng.Read(k)
	if p != nil {
		a.Warn(fmt.Sprintf("L2 %s not written: %s", k.Path, p.Message))
		return nil, nil
	}
	if !f.Exists && !a.Eng.Config().MemoryCreate {
		a.Warn(fmt.Sprintf("L2 %s does not exist and was not created (memory_create: true in %s, or strata memory add, creates it); it would have said: %s",
			k.Path, config.FileName, texts(lines)))
		return nil, nil
	}
	if f.Exists {
		o, err := a.Eng.Record([]config.Kept{k}, state.SourceRecord)
		if err != nil {
			return nil, err
		}
		if len(o) > 0 && o[0].Invalid() {
			a.Warn(fmt.Sprintf("L2 %s not written: it is invalid (its problems are given with it)", k.Path))
			return o, nil
		}
		outs = append(outs, o...)
	}
	if err := memoryDoor(a.Eng, f); err != nil {
		a.Warn(fmt.Sprintf("L2 %s not written: %v", state.ShownPath(k.Path), err))
		return outs, nil
	}
	data := f.Content
	for _, line := range lines {
		var err error
		if a.replaying {
			data, err = placeOwed(data, line)
			if errors.Is(err, errNoPlace) {
				a.Warn(fmt.Sprintf("L2 %s: the line a killed watcher owed is not written: %v; it would have said: %s", k.Path, err, line.text))
				continue
			}
		} else {
			var moved []byte
			moved, _, err = markdown.RemoveItem(data, WorkflowSection, 0, line.text)
			var ue *markdown.UnsafeError
			if errors.Is(err, markdown.ErrRereads) && errors.As(err, &ue) {
				// the line stays where it is, and AddItem finds it there
				a.Warn(fmt.Sprintf("L2 %s:%d: the line is left where it is, not moved to the end: %s", k.Path, ue.Line, ue.Reason))
				moved, err = data, nil
			}
			data = moved
			if err == nil {
				data, _, err = markdown.AddItem(data, WorkflowSection, 2, line.text)
			}
		}
		if err == nil {
			var kept []markdown.Item
			data, _, kept, err = markdown.TrimSection(data, WorkflowSection, 0, MaxWorkflowLines, IsProtocolLine)
			for _, it := range kept {
				a.Warn(fmt.Sprintf("L2 %s:%d: the line is kept past the cap of %d: removing it would change how the lines around it read (text becoming a heading, a section taken into an HTML block)", k.Path, it.Line, MaxWorkflowLines))
			}
		}
		if err != nil {
			a.Warn(fmt.Sprintf("L2 %s not written: %v; it would have said: %s", k.Path, err, texts(lines)))
			return outs, nil
		}
	}
	if f.Exists && string(data) == string(f.Content) {
		return outs, nil
	}
	o, err := a.Eng.Put(k, f.ID(), data, src)
	switch {
	case errors.Is(err, engine.ErrChanged):
		return outs, err // read again (writeMemory)
	case err != nil && !o.Written:
		a.Warn(fmt.Sprintf("L2 %s not written: %s", state.ShownPath(k.Path), reasonFor(k.Path, err)))
		return outs, nil
	case !o.Written:
		a.Warn(fmt.Sprintf("L2 %s not written: it would be invalid: %s", k.Path, o.Problems.Error()))
		return outs, nil
	}
	return append(outs, o), err
}

// reasonFor is err's message for a line that already names path: an
// engine.PathError about path gives its reason alone ("has 2 hard links;
// …"), not the path a second time.
func reasonFor(path string, err error) string {
	var pe *engine.PathError
	if errors.As(err, &pe) && pe.Path == path && err.Error() == pe.Error() {
		return pe.Reason
	}
	var nt *engine.NotTakenError
	if errors.As(err, &nt) && nt.Path == path && err.Error() == nt.Error() {
		return nt.Reason()
	}
	return err.Error()
}

// placeOwed puts a replayed line where it belongs (Replay): anchor is the
// first protocol line of the section that a later record wrote (none: the
// end). The line stays when it is the protocol line just before the
// anchor (written there before the kill); is left out when it is at or
// after the anchor (a later record wrote the same text, and moved it
// there); otherwise an earlier copy is taken out and the line inserted
// just before the anchor. It never moves, doubles or removes any other
// line; errNoPlace when the insertion would not read back so.
func placeOwed(data []byte, l placed) ([]byte, error) {
	later := map[string]bool{}
	for _, b := range l.before {
		later[b] = true
	}
	ls := protocolLines(data)
	anchor := len(ls)
	for i, t := range ls {
		if later[t] {
			anchor = i
			break
		}
	}
	if slices.Contains(ls[anchor:], l.text) {
		return data, nil // written again by a later record: its place is that one's
	}
	if anchor > 0 && ls[anchor-1] == l.text {
		return data, nil // already where it belongs
	}
	out, _, err := markdown.RemoveItem(data, WorkflowSection, 0, l.text)
	if errors.Is(err, markdown.ErrRereads) {
		return data, errNoPlace // the earlier copy cannot be taken out
	}
	if err != nil {
		return data, err
	}
	out, _, err = markdown.InsertItem(out, WorkflowSection, 2, l.text, func(t string) bool { return IsProtocolLine(t) && later[t] })
	if err != nil && anchor < len(ls) && errors.Is(err, markdown.ErrUnsafe) {
		return data, errNoPlace
	}
	if err != nil {
		return data, err
	}
	return out, nil
}

// errNoPlace is placeOwed's error when the line cannot be put before the
// lines written since without changing how they read.
var errNoPlace = errors.New("it cannot be put before the lines written since without changing them")

// SyncGraph upserts the L3 entities of every L1 document as recorded, and
// records the graph file with source resolve when it changed. When L3
// cannot be written it warns DegradedWarning once and returns no error; the
// next successful call brings L3 up to date with all of L1.
func (a *Agent) SyncGraph() ([]engine.Outcome, error) {
	if a.Graph == nil {
		return nil, nil
	}
	if _, isNo := a.Graph.(NoGraph); isNo {
		return nil, nil
	}
	k, ok := a.Eng.Config().Classify(a.Eng.Config().Graph)
	if why := a.Eng.Config().Private(a.Eng.Config().Graph); !ok && (why == config.WhyOutside || config.InOtherRepo(why)) {
		if !a.degraded {
			a.Warn(fmt.Sprintf("%s (%s)", DegradedWarning, offWhy(a.Eng.Config().Graph, why)))
		}
		a.degraded = true
		return nil, nil
	}
	if !ok {
		a.sayPrivate("L3", a.Eng.Config().Graph, "it is not upserted")
	}
	if !ok || (k.Schema != "mcp-memory" && k.Schema != "jsonl-mcp") {
		return nil, nil // private, ignored, or under a schema of the user's own: never written
	}
	repo := repoOf(a.Eng, k)
	var ents []Entity
	var cleared []string
	head, err := a.Eng.Head()
	if err != nil || head == "" {
		return nil, err
	}
	for _, c := range synced {
		found, empty := false, false
		for _, p := range l1Paths(a.Eng.Config(), c) {
			data, err := a.Eng.FileAt(head, p)
			if errors.Is(err, state.ErrNotFound) {
				continue // no such L1 file: its entity, if any, is left to the server
			}
			if err != nil {
				return nil, err
			}
			doc := decodeObject(data)
			if e, ok := a.Graph.FromState(c, doc); ok {
				if repo != "" {
					e = graph.WithRepo(e, repo) // a shared graph: whose state it is
				}
				ents, found = append(ents, e), true
			} else if len(doc) == 0 {
				empty = true
			}
		}
		if empty && !found {
			// the document cleared ({}: the agent's, or the TTL's reset):
			// its entity goes, as `strata resolve` clears it, rather than
			// serve the last workflow to the next session
			cleared = append(cleared, graph.EntityName(c))
		}
	}
	changed, err := a.Eng.WriteOwn(k, func(name string) (bool, error) {
		if _, err := os.Lstat(name); err != nil {
			return false, err // only a graph file that exists is kept up to date
		}
		return a.Graph.Upsert(graphFile(a.Eng, k, name), ents, cleared)
	})
	if err != nil {
		var refused []string
		refused, err = refusals(err, k.Path)
		for _, l := range refused {
			a.Warn(l)
		}
	}
	if err != nil {
		if !a.degraded {
			why := err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				why = k.Path + " does not exist; the MCP memory server creates it"
			}
			a.Warn(DegradedWarning + " (" + state.TermSafe(why) + ")")
		}
		a.degraded = true
		return nil, nil
	}
	a.degraded = false
	if !changed {
		return nil, nil
	}
	return a.Eng.Record([]config.Kept{k}, state.SourceResolve)
}

// offWhy is why the graph file at path is neither read nor written, for
// why, a reason config's Private gives that makes L3 unavailable:
// config.WhyOutside (outsideWhy), or config.WhyInRepo — a home file inside
// another repository (attack33b F1), with the way out: a repository at the
// home directory holds every "~/" graph (attack33c C6), and a global
// $MEMORY_FILE_PATH is what names it.
func offWhy(path, why string) string {
	if config.InOtherRepo(why) {
		return fmt.Sprintf("%s: %s; strata writes no graph file another repository holds: point $MEMORY_FILE_PATH outside that repository, or unset it for this project's own %s", state.TermSafe(path), why, config.DefaultGraph)
	}
	return outsideWhy(path)
}

// outsideWhy is why the graph file at path, outside the work tree and the
// home directory (config.WhyOutside), is neither read nor written.
func outsideWhy(path string) string {
	return fmt.Sprintf("%s: %s; strata writes the graph only inside the work tree or the home directory", state.TermSafe(path), config.WhyOutside)
}

// sayPrivate warns, once per agent, that the layer file at path is private
// (a .gitignore names it, say: strata keeps no private file, and so the
// protocol writes none) and what the protocol leaves undone; an ignore:
// true rule stays silent, the user's own word.
func (a *Agent) sayPrivate(layer, path, undone string) {
	why := a.Eng.Config().Private(path)
	if why == "" || a.unkept[path] {
		return
	}
	if a.unkept == nil {
		a.unkept = map[string]bool{}
	}
	a.unkept[path] = true
	a.Warn(privateLine(layer, path, why, undone))
}

// privateLine says that the layer file at path is private for the reason
// why, and what strata leaves undone for it.
func privateLine(layer, path, why, undone string) string {
	return fmt.Sprintf("%s %s is private (%s): strata keeps no private file, so %s", layer, state.ShownPath(path), why, undone)
}

// Degraded reports whether the last L3 write failed.
func (a *Agent) Degraded() bool { return a.degraded }

// l1Paths are the default paths of an L1 class that strata interprets:
// kept with strata's own schema for the class. A file under a schema of the
// user's own (or plain json) is in its own shape: never read as L1, never
// rewritten, reset or expired (see foreignL1).
func l1Paths(cfg *config.Config, c state.Class) []string {
	var out []string
	for _, r := range config.DefaultRules {
		if r.Class == c {
			if k, ok := cfg.Classify(r.Glob); ok && k.Class == c && k.Schema == r.Schema {
				out = append(out, r.Glob)
			}
		}
	}
	return out
}

// ForeignL1 are the built-in L1 paths (the workflow state, initiative,
// interview state and delegation log) that cfg keeps under a schema of the
// user's own: in their own shape, not interpreted.
func ForeignL1(cfg *config.Config) []string { return foreignL1(cfg) }

// foreignL1 are the default L1 paths kept under a schema of the user's own.
func foreignL1(cfg *config.Config) []string {
	var out []string
	for _, c := range synced {
		for _, r := range config.DefaultRules {
			if r.Class != c {
				continue
			}
			if k, ok := cfg.Classify(r.Glob); ok && k.Schema != r.Schema {
				out = append(out, r.Glob)
			}
		}
	}
	return out
}

// conforms reports whether data passes strata's own schema of its kept path.
func (a *Agent) conforms(k config.Kept, data []byte) bool {
	return !a.Eng.Check(engine.File{Kept: k, Content: data, Exists: true}, nil).Invalid()
}

// workflowTTL returns the workflow-state file when strata's TTL applies to
// it: only strata's own workflow state expires, and not with ttl: off.
func (a *Agent) workflowTTL() (config.Kept, bool) {
	k, ok := a.Eng.Config().Classify(WorkflowStatePath)
	if !ok || k.Class != state.ClassWorkflowState || k.Schema != string(state.ClassWorkflowState) || k.TTL == "off" {
		return k, false
	}
	return k, true
}

// ttlOf reads a workflow state's lastUpdated and its TTL: the document's
// ttl, else the rule's (or the global) one, else DefaultTTL. ok is false for
// a state that does not follow strata's schema, is empty, has no
// lastUpdated or has a ttl that does not parse.
func (a *Agent) ttlOf(k config.Kept, data []byte) (doc map[string]any, last time.Time, ttl time.Duration, ok bool) {
	if !a.conforms(k, data) {
		return nil, time.Time{}, 0, false
	}
	doc = decodeObject(data)
	if len(doc) == 0 {
		return nil, time.Time{}, 0, false
	}
	last, err := time.Parse(time.RFC3339Nano, str(doc, "lastUpdated"))
	if err != nil {
		return nil, time.Time{}, 0, false
	}
	ttl = DefaultTTL
	for _, s := range []string{k.TTL, str(doc, "ttl")} { // the document's wins
		if s == "" {
			continue
		}
		if ttl, err = config.ParseTTL(s); err != nil {
			return nil, time.Time{}, 0, false
		}
	}
	return doc, last, ttl, true
}

// Expiry is a workflow state reset because its TTL passed.
type Expiry struct {
	Line        string       `json:"line"`         // the L2 line written
	Type        string       `json:"type"`         //
	Phase       string       `json:"phase"`        //
	Context     string       `json:"context"`      //
	LastUpdated time.Time    `json:"last_updated"` //
	Deadline    time.Time    `json:"deadline"`     // lastUpdated (or the last restore) + ttl
	Entry       *state.Entry `json:"entry,omitempty"`
}

// judge is the TTL's one judgement of the workflow state k whose bytes
// are data, as recorded up to until (zero: now): Expire resets by it, Peek
// (the MCP server's resume) and At say what it found. The deadline is
// lastUpdated plus the document's ttl, else the rule's or the global one,
// else DefaultTTL; or, when the last record of k up to until is a restore
// of these very bytes made after lastUpdated, that restore's time plus the
// ttl (a restored state gets a fresh TTL). ok is false when the TTL does
// not apply (ttlOf).
func (a *Agent) judge(k config.Kept, data []byte, until time.Time) (x *Expiry, doc map[string]any, ok bool) {
	doc, last, ttl, ok := a.ttlOf(k, data)
	if !ok {
		return nil, nil, false
	}
	base := last
	ents, err := a.Eng.Log(state.LogQuery{Path: k.Path, Until: until, Limit: 1})
	if err == nil && len(ents) > 0 && ents[0].Source == state.SourceRestore && ents[0].Time.After(base) {
		if rec, err := a.Eng.FileAt(ents[0].Commit, k.Path); err == nil && string(rec) == string(data) {
			base = ents[0].Time
		}
	}
	ph, _ := state.Cut(str(doc, "phase"), MaxLineValue) // as the report quotes them
	ctx, _ := state.Cut(contextOf(doc), MaxLineValue)
	x = &Expiry{Type: str(doc, "type"), Phase: ph, Context: ctx, LastUpdated: last, Deadline: base.Add(ttl)}
	return x, doc, true
}

// Due reports whether the deadline has passed at now.
func (x *Expiry) Due(now time.Time) bool { return !now.Before(x.Deadline) }

// judgeDisk is judge of the workflow state on disk, f, as Expire and Peek
// read it: ok is false too when the TTL does not apply to the file, it is
// missing or unreadable, or the checked-out commit holds these bytes (a
// branch's version, not an idle session's: never expired).
func (a *Agent) judgeDisk() (k config.Kept, f engine.File, x *Expiry, doc map[string]any, ok bool) {
	k, ok = a.workflowTTL()
	if !ok {
		return k, f, nil, nil, false
	}
	f, p := a.Eng.Read(k)
	if p != nil || !f.Exists {
		return k, f, nil, nil, false
	}
	if x, doc, ok = a.judge(k, f.Content, time.Time{}); !ok || a.Eng.CheckedOutBlob(f.ID(), k.Path) {
		return k, f, nil, nil, false
	}
	return k, f, x, doc, true
}

// Expire resets the workflow state to {} when lastUpdated + ttl (default
// 24h) has passed (judge): the current version is recorded first (with src), the
// reset is written and recorded with source expire, so `strata restore
// .claude/workflow-state.json --at T` undoes it, and then the L2 line
// `Expired workflow: {type} at {phase} for {context}` is written. A restored
// version gets a fresh TTL from the time it was restored. An invalid, empty
// or missing state is left alone, and so is one written since it was read
// (engine.Put refuses the reset: it is not stale). It returns nil when
// nothing expired, and the outcomes of its records: the current version's,
// the write protocol's for it (a version saved since the last record gets
// its L2 line and L3 upsert here, as engine.Record's caller would give
// them), the reset's L2 and L3 writes.
func (a *Agent) Expire(src state.Source) (*Expiry, []engine.Outcome, error) {
	k, f, x, doc, ok := a.judgeDisk()
	if !ok {
		return nil, nil, nil
	}
	outs, err := a.Eng.Record([]config.Kept{k}, src)
	if err != nil {
		return nil, outs, err
	}
	if len(outs) > 0 && outs[0].Invalid() {
		return nil, outs, nil
	}
	// A version recorded here (saved since the last record: a watcher's
	// event still on its way, or no watcher at all) is a change as any
	// other: the write protocol runs for it, or its MEMORY.md line and L3
	// upsert would never come (the watcher's event then finds it recorded).
	more, err := a.AfterRecord(outs) // (nothing when nothing was recorded)
	outs = append(outs, more...)
	if err != nil {
		return nil, outs, err
	}
	if !x.Due(a.Eng.Now()) {
		return nil, outs, nil
	}
	o, err := a.Eng.Put(k, f.ID(), []byte("{}\n"), state.SourceExpire)
	if errors.Is(err, engine.ErrChanged) {
		return nil, outs, nil // written since it was read: not stale, nothing expired
	}
	if err != nil {
		return nil, outs, err
	}
	if !o.Written {
		return nil, outs, o.Problems
	}
	x.Entry = o.Entry
	reset := ""
	if o.Entry != nil {
		reset = o.Entry.Commit
	}
	x.Line = expiredLine(doc, reset)
	more, err = a.writeMemory([]placed{{text: x.Line}}, state.SourceExpire)
	outs = append(outs, more...)
	if err != nil {
		return x, outs, err
	}
	more, err = a.SyncGraph()
	outs = append(outs, more...)
	return x, outs, err
}
