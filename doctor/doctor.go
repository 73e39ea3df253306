// Package doctor diagnoses a repository's strata setup: each check says
// what it found and, when something is wrong, the command or edit that
// fixes it. Checks only read; nothing here writes to the repository.
package doctor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/daemon"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/hooks"
	"github.com/strata-dev/strata/internal/proc"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/syncer"
)

// Levels of a finding. Only LevelFail needs the user (strata doctor exits 1).
const (
	LevelOK   = "ok"
	LevelInfo = "info" // worth knowing; nothing to do
	LevelWarn = "warn" // works, but not as well as it could
	LevelFail = "fail" // broken: the user must act
)

// Finding is one check's result.
type Finding struct {
	Check   string `json:"check"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// LooseLimit is git's gc.auto default: past this many loose objects a gc is due.
const LooseLimit = 6700

// Options are the facts doctor cannot find by itself.
type Options struct {
	Version string           // strata's version
	Now     func() time.Time // strata's clock
	// Companion is where strata-serve (the MCP and timeline servers) was
	// found, or CompanionErr why it was not.
	Companion    string
	CompanionErr error
}

// NeedsUser reports whether any finding is a failure.
func NeedsUser(fs []Finding) bool {
	for _, f := range fs {
		if f.Level == LevelFail {
			return true
		}
	}
	return false
}

// Setup checks what does not need an opened repository: strata's and git's
// versions.
func Setup(ctx context.Context, o Options) []Finding {
	fs := []Finding{{Check: "strata", Level: LevelOK, Message: "strata " + o.Version}}
	out, err := git(ctx, "", "version")
	if err != nil {
		return append(fs, Finding{Check: "git", Level: LevelFail, Message: "git not found: " + err.Error(),
			Fix: "install git and put it on PATH"})
	}
	fs = append(fs, Finding{Check: "git", Level: LevelOK, Message: strings.TrimSpace(out)})
	return append(fs, companionFinding(o))
}

// companionFinding says whether strata mcp and strata timeline --serve can
// start: they become strata-serve.
func companionFinding(o Options) Finding {
	if o.CompanionErr != nil || o.Companion == "" {
		msg := "strata-serve not found; strata mcp and strata timeline --serve cannot start"
		if o.CompanionErr != nil {
			msg = o.CompanionErr.Error()
		}
		return Finding{Check: "servers", Level: LevelWarn, Message: msg,
			Fix: "make install (or go install ./cmd/strata ./cmd/strata-serve)"}
	}
	return Finding{Check: "servers", Level: LevelOK, Message: "strata-serve at " + o.Companion + " (strata mcp, strata timeline --serve)"}
}

// Config is the finding for a .strata.yaml that Open refused: a mistake in
// it (*config.Error), or a file it could not read (*config.ReadError).
func Config(err error) Finding {
	fix := "edit " + config.FileName + " at the line named (docs/contract.md §2)"
	var re *config.ReadError
	if errors.As(err, &re) {
		fix = "make " + config.FileName + " a regular file in the work tree, or a link to one; or remove it so the built-in rules apply"
	}
	return Finding{Check: "config", Level: LevelFail, Message: err.Error(), Fix: fix}
}

// Format is the finding for a repository Open refused for its format (a
// SHA-256 or reftable one, an unknown extension) or for a setting it cannot
// follow ($GIT_OBJECT_DIRECTORY): nothing else can be checked.
func Format(err *gitstore.FormatError) Finding {
	fix := err.Fix
	if fix == "" {
		fix = "none here: strata's objects and refs are SHA-1 files; use it in a SHA-1 repository with files refs"
	}
	return Finding{Check: "repository", Level: LevelFail, Message: err.Error(), Fix: fix}
}

// Ownership is the finding for a repository Open refused because another
// user owns it (git's "dubious ownership"): nothing else can be checked.
func Ownership(err *state.OwnershipError) Finding {
	return Finding{Check: "ownership", Level: LevelFail,
		Message: err.Owners() + ": git refuses this repository (dubious ownership), and so does strata",
		Fix:     err.Fix() + " (if you trust it), or run strata as its owner"}
}

// Repository runs every check that needs the opened repository.
func Repository(ctx context.Context, eng *engine.Engine, o Options) []Finding {
	var fs []Finding
	add := func(f ...Finding) { fs = append(fs, f...) }
	add(configFinding(eng))
	add(keptFiles(eng)...)
	if f, ok := indexFinding(eng); ok {
		add(f)
	}
	if f, ok := rulesFinding(eng); ok {
		add(f)
	}
	add(linkedFolders(eng)...)
	add(watcher(eng, o))
	add(preCommit(eng))
	add(claude(eng)...)
	add(layersFinding(eng))
	if f, ok := memoryFilesFinding(eng); ok {
		add(f)
	}
	add(history(ctx, eng)...)
	if f, ok := heldLock(eng); ok {
		add(f)
	}
	if f, ok := pendingSync(eng); ok {
		add(f)
	}
	if f, ok := pendingPush(eng); ok {
		add(f)
	}
	if why, standIn := eng.WorktreeHeadProblem(); why != "" {
		f := Finding{Check: "worktree-head", Level: LevelWarn,
			Message: fmt.Sprintf("%s: %s; strata reads the state ref's reflog instead to know what the files here follow (a push into this repository is still taken)", filepath.Join(eng.GitDir(), "strata", "worktree-head"), why),
			Fix:     "remove it (rm -r it): the next strata command writes it again"}
		if !standIn {
			f.Message = fmt.Sprintf("%s: %s, and the state ref's reflog holds no move of strata's either: strata cannot tell what the files here follow, so a push into this repository now would be recorded over", filepath.Join(eng.GitDir(), "strata", "worktree-head"), why)
			f.Fix = "run strata record (or the watcher): it writes the file for the head the ref holds now, once any folder there is removed"
		}
		add(f)
	}
	for _, f := range youngForeign(eng) {
		add(f)
	}
	add(worktrees(ctx, eng))
	add(remotes(eng)...)
	return fs
}

// indexFinding says when git's index is not read in-process: a split or
// sparse index is asked of git itself (one git ls-files a command); an
// index nothing could read leaves every file kept only by a .strata.yaml
// rule private, as untracked.
func indexFinding(eng *engine.Engine) (Finding, bool) {
	note, read := eng.IndexNote()
	switch {
	case note == "":
		return Finding{}, false
	case !read:
		return Finding{Check: "index", Level: LevelWarn, Message: "git's index could not be read (" + state.TermSafe(note) + "): no file counts as tracked, so files only a " + config.FileName + " rule keeps are private",
			Fix: "git status rewrites a damaged index; git update-index --no-split-index undoes a split one"}, true
	}
	return Finding{Check: "index", Level: LevelInfo, Message: "git's index (" + state.TermSafe(note) + ") is not read in-process: strata asks git for its paths (one git ls-files a command)"}, true
}

// rulesFinding says when git's rules of HEAD and earlier HEADs cannot be
// read: every untracked kept file then counts as ignored, every kept file
// as filtered, so they are private and sync refuses them. A damaged
// refs/strata/gitrules is strata's own record: deleting it forgets the
// earlier HEADs' rules it kept, and strata keeps those of the HEADs it sees
// from then on.
func rulesFinding(eng *engine.Engine) (Finding, bool) {
	kept, err := eng.RulesUnread()
	if err == nil {
		return Finding{}, false
	}
	f := Finding{Check: "gitrules", Level: LevelWarn, Message: "git's rules of HEAD and earlier HEADs cannot be read (" + state.TermSafe(err.Error()) + "): every kept file is private until they can, and sync refuses them",
		Fix: "git fsck --full shows the damage; fetch the missing objects again, or restore .git from a backup"}
	if fix, ok := brokenRefFix(err); ok {
		// a ref file without an object ID (HEAD's branch, or
		// refs/strata/gitrules, which git update-ref -d refuses too):
		// no object is missing
		f.Fix = fix
	} else if kept {
		f.Fix = "git update-ref -d refs/strata/gitrules (forgets the earlier HEADs' rules strata kept there; those of the HEADs it sees from then on are kept again)"
	}
	return f, true
}

// brokenRefFix is the fix of a finding whose error is a broken ref (a
// *gitstore.BrokenRefError in its chain), or a strata ref that is symbolic
// or names no commit (*gitstore.SymbolicRefError, *NotCommitError): the
// words of the error's own advice, on the ref's file for a broken one.
func brokenRefFix(err error) (string, bool) {
	var be *gitstore.BrokenRefError
	var nc *gitstore.NotCommitError
	var se *gitstore.SymbolicRefError
	switch {
	case errors.As(err, &be):
		return state.TermSafe(be.File) + ": " + be.Fix(), true
	case errors.As(err, &nc):
		return nc.Fix(), true
	case errors.As(err, &se):
		return se.Fix(), true
	}
	return "", false
}

func configFinding(eng *engine.Engine) Finding {
	if _, err := os.Lstat(filepath.Join(eng.Root(), config.FileName)); err != nil {
		return Finding{Check: "config", Level: LevelInfo, Message: "no " + config.FileName + "; the built-in rules apply",
			Fix: "strata init writes a commented one"}
	}
	return Finding{Check: "config", Level: LevelOK, Message: fmt.Sprintf("%s valid (%d rules of your own)", config.FileName, len(eng.Config().UserRules()))}
}

func keptFiles(eng *engine.Engine) []Finding {
	kept, err := eng.AllPaths()
	if err != nil {
		return []Finding{{Check: "files", Level: LevelFail, Message: err.Error()}}
	}
	results, err := eng.Validate(kept, false)
	if err != nil {
		return []Finding{{Check: "files", Level: LevelFail, Message: err.Error()}}
	}
	bad, err := eng.BadNames()
	if err != nil {
		return []Finding{{Check: "files", Level: LevelFail, Message: err.Error()}}
	}
	var invalid []string
	// builtin is the first invalid file that is a built-in state file
	// strata interprets (the workflow state, ...), own the first other one:
	// a schema inferred for a built-in one would accept its bad value and
	// stop strata interpreting it (attack37c H2), so its fix is the file or
	// its last recorded version, never schema infer.
	builtin, own := "", ""
	for _, r := range results {
		if r.Problems.Invalid() {
			invalid = append(invalid, state.ShownPath(r.Path))
			if k, ok := eng.Config().Classify(r.Path); ok && layers.IsL1(eng.Config(), k) {
				if builtin == "" {
					builtin = r.Path
				}
			} else if own == "" {
				own = r.Path
			}
		}
	}
	var fs []Finding
	switch {
	case len(invalid) > 0:
		fix := "strata validate shows each problem"
		if builtin != "" {
			w := state.ShellWord(builtin)
			fix += "; " + w + " is a state file strata interprets: fix it by hand"
			if eng.HeadHolds(builtin) {
				// offered only when there is a version to put back
				// (attack37d L9: the restore of a file never recorded fails)
				fix += ", or put back its last recorded version: strata restore " + w
			}
		}
		if own != "" {
			fix += "; for files of your own shape: strata schema infer " + state.ShellWord(config.LiteralGlob(own)) + " -o schemas/NAME.schema.json --apply"
		}
		fs = append(fs, Finding{Check: "files", Level: LevelFail,
			Message: fmt.Sprintf("%d kept files, %d invalid: %s", len(results), len(invalid), strings.Join(invalid, ", ")),
			Fix:     fix})
	case len(bad) > 0:
		fs = append(fs, Finding{Check: "files", Level: LevelOK,
			Message: fmt.Sprintf("%d kept files, all valid; %d not kept for a control character in the name", len(results), len(bad))})
	default:
		fs = append(fs, Finding{Check: "files", Level: LevelOK, Message: fmt.Sprintf("%d kept files, all valid", len(results))})
	}
	// A file kept but for a control character in its name fails strata
	// validate: one finding each, its problem line quoting the name.
	for _, p := range bad {
		fs = append(fs, Finding{Check: "files", Level: LevelFail, Message: p.Error(),
			Fix: "rename it: strata never keeps a name with a control character"})
	}
	// The fix is what keeps the file: the user's git configuration, never a
	// rule of .strata.yaml; nothing keeps a nested repository's file
	// (attack25 K5).
	for _, p := range eng.Withheld() {
		fix := "to keep it anyway: " + p.KeepCommand()
		switch {
		case p.Nested():
			fix = "none: strata never keeps a file of another repository; that repository keeps its own files"
		case p.Never():
			fix = "none: strata never keeps a file through a symbolic link to a folder above it"
		}
		why := "private: " + p.Reason
		if p.Never() && !p.Nested() {
			why = p.Reason // a link loop: nothing private about it
		}
		fs = append(fs, Finding{Check: "private", Level: LevelInfo,
			Message: fmt.Sprintf("%s matches a rule but is not kept (%s)", state.ShownPath(p.Path), why),
			Fix:     fix})
	}
	// A strata.keepPrivate value naming no file keeps nothing, and nothing
	// else says so (attack26 recheck F7: config/* and typos were silently
	// not honoured).
	for _, k := range eng.StrayKeeps() {
		fs = append(fs, Finding{Check: "private", Level: LevelWarn,
			Message: fmt.Sprintf("strata.keepPrivate %s keeps nothing: %s", strconv.Quote(k.Value), k.Why),
			Fix: "name each file to keep by its path from the top of the work tree, one value each (git config --add strata.keepPrivate PATH); " +
				"to drop this value: git config --unset --fixed-value strata.keepPrivate " + state.ShellWord(k.Value)})
	}
	return fs
}

// linkedFolders finds each folder the rules keep files in (.claude,
// PhaseOutputs) that is a symbolic link out of the work tree, as a hostile
// repository may commit it: strata reads and writes nothing through it, so
// validate checks no file there and the files finding counts none; this
// says why (attack25 hostile observation).
func linkedFolders(eng *engine.Engine) []Finding {
	root := eng.Root()
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil
	}
	var out []Finding
	seen := map[string]bool{}
	for _, r := range eng.Config().Rules {
		dir, rest, ok := strings.Cut(r.Glob, "/")
		if !ok || rest == "" || r.Ignore || seen[dir] || strings.ContainsAny(dir, `*?[\`) {
			continue
		}
		seen[dir] = true
		link := filepath.Join(root, dir)
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(link)
		if err != nil {
			continue
		}
		to := target
		if !filepath.IsAbs(to) {
			to = filepath.Join(realRoot, to)
		}
		if real, err := filepath.EvalSymlinks(link); err == nil {
			to = real
		}
		if rel, err := filepath.Rel(realRoot, to); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue // a link inside the work tree: judged as its files are
		}
		out = append(out, Finding{Check: "files", Level: LevelWarn,
			Message: fmt.Sprintf("%s: a symbolic link out of the work tree (-> %s); strata keeps no file through it", state.ShownPath(dir), state.ShownPath(target)),
			Fix:     "to keep its files, make " + state.ShownPath(dir) + " a folder of the work tree: strata never follows a link out of it"})
	}
	return out
}

func watcher(eng *engine.Engine, o Options) Finding {
	last := "nothing recorded yet"
	switch ents, err := eng.Log(state.LogQuery{Limit: 1}); {
	case err != nil:
		last = "history unreadable: " + err.Error()
	case len(ents) > 0:
		last = "last record " + ago(o.Now().Sub(ents[0].Time)) + " ago"
	}
	w, err := daemon.Info(eng)
	switch {
	case err != nil:
		return Finding{Check: "watcher", Level: LevelWarn, Message: "cannot read the watcher's lock: " + err.Error(),
			Fix: "remove " + daemon.LockPath(eng) + " if no strata watch runs here"}
	case !w.Running:
		return Finding{Check: "watcher", Level: LevelWarn, Message: "not running; " + last,
			Fix: "strata watch (or as a service: contrib/strata-watch@.service, contrib/dev.strata.watch.plist)"}
	}
	f := Finding{Check: "watcher", Level: LevelOK, Message: fmt.Sprintf("running, pid %d, since %s; %s", w.PID, w.Since.UTC().Format(time.RFC3339), last)}
	if w.LastSyncError != "" {
		f.Level, f.Fix = LevelWarn, "check the remote "+w.SyncRemote+": "+w.LastSyncError
	}
	return f
}

func preCommit(eng *engine.Engine) Finding {
	const check = "pre-commit"
	dir, err := hooks.Dir(eng.Root())
	if err != nil {
		return Finding{Check: check, Level: LevelWarn, Message: err.Error()}
	}
	name := filepath.Join(dir, hooks.HookName)
	// A hook may be a link (a hook manager's); never a pipe or a device to
	// block on or read without end: doctor only reads, and at most maxRead.
	data, err := state.ReadRegular(name, maxRead, true)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Finding{Check: check, Level: LevelWarn, Message: name + ": " + readErr(err) + "; not read"}
	}
	if err != nil {
		return Finding{Check: check, Level: LevelWarn, Message: "not installed; invalid state files can be committed",
			Fix: "strata hooks install"}
	}
	if tracked, err := hooks.Tracked(eng.Root(), name); err == nil && tracked {
		return trackedHook(name, data)
	}
	msg, chained := "installed", name+hooks.ChainedSuffix
	if !bytes.Contains(data, []byte("strata pre-commit hook")) && hooks.IsFramework(data) {
		// the pre-commit framework installed after strata runs strata's
		// hook as pre-commit.legacy
		legacy, err := state.ReadRegular(name+hooks.LegacySuffix, maxRead, true)
		if err != nil || !bytes.Contains(legacy, []byte("strata pre-commit hook")) {
			return Finding{Check: check, Level: LevelWarn, Message: name + " is the pre-commit framework's hook; strata's check does not run in it",
				Fix: "add strata to .pre-commit-config.yaml (hook id " + hooks.FrameworkHookID + "), or run pre-commit uninstall, strata hooks install, pre-commit install"}
		}
		if c, err := state.ReadRegular(chained, maxRead, true); err == nil && hooks.IsFramework(c) {
			return Finding{Check: check, Level: LevelFail, Message: "strata's hook runs as " + hooks.HookName + hooks.LegacySuffix +
				" under the pre-commit framework's, and chains a copy of the framework's hook (" + hooks.HookName + hooks.ChainedSuffix + "): each runs the other, and every commit fails",
				Fix: "strata hooks uninstall, then add strata to .pre-commit-config.yaml (hook id " + hooks.FrameworkHookID + ")"}
		}
		name, data = name+hooks.LegacySuffix, legacy
		msg = "installed as " + hooks.HookName + hooks.LegacySuffix + ", run by the pre-commit framework's hook"
	}
	if !bytes.Contains(data, []byte("strata pre-commit hook")) {
		return Finding{Check: check, Level: LevelWarn, Message: name + " is another tool's hook",
			Fix: "strata hooks install (it chains the hook that is there)"}
	}
	if st, err := os.Stat(name); err == nil && st.Mode()&0o111 == 0 {
		return Finding{Check: check, Level: LevelFail, Message: name + " is not executable; git skips it",
			Fix: "chmod +x " + name}
	}
	if _, err := os.Lstat(chained); err == nil {
		msg += ", chaining " + hooks.HookName + hooks.ChainedSuffix
	}
	exe := hookBinary(data)
	if exe != "" && exe != "strata" {
		if _, err := os.Stat(exe); err != nil {
			if _, perr := exec.LookPath("strata"); perr != nil {
				return Finding{Check: check, Level: LevelFail, Message: msg + "; its binary " + exe + " is gone and strata is not on PATH",
					Fix: "strata hooks install (from the strata you use now)"}
			}
			return Finding{Check: check, Level: LevelWarn, Message: msg + "; its binary " + exe + " is gone (falls back to strata on PATH)",
				Fix: "strata hooks install"}
		}
	}
	// installed by a strata before the other hooks existed: merges git
	// commits by itself, or git am's patches, go unchecked until install
	// runs again
	for _, h := range []struct{ name, what string }{
		{hooks.MergeHookName, "a merge without conflicts"},
		{hooks.PatchHookName, "a patch git am applies"},
	} {
		if !strataHookIn(filepath.Join(dir, h.name), h.name) {
			return Finding{Check: check, Level: LevelWarn, Message: msg + ", calling " + exe + "; strata's " + h.name +
				" hook is not installed: " + h.what + " is not checked", Fix: "strata hooks install"}
		}
	}
	return Finding{Check: check, Level: LevelOK, Message: msg + ", calling " + exe}
}

// trackedHook is the pre-commit finding for a hook file git tracks (the
// repository's own, core.hooksPath .githooks): install refuses it, so
// the fix is the one line that runs strata's check, in that hook and in
// a commit. strata's own hook committed there (by an older install) calls
// one machine's binary in every clone and chains a file no clone has.
func trackedHook(name string, data []byte) Finding {
	const check = "pre-commit"
	line := "strata hooks run " + hooks.HookName
	switch {
	case bytes.Contains(data, []byte("strata pre-commit hook")):
		return Finding{Check: check, Level: LevelWarn, Message: name + " is strata's hook in a file git tracks: committed, every clone calls this machine's binary and skips the hook it chained",
			Fix: "put the repository's hook back in a commit (git log -- " + name + "), with this line in it: " + line}
	case bytes.Contains(data, []byte(line)):
		return Finding{Check: check, Level: LevelOK, Message: name + ", a hook git tracks, runs " + line}
	}
	return Finding{Check: check, Level: LevelWarn, Message: name + " is a hook git tracks (the repository's own); strata's check does not run in it",
		Fix: "add this line to it in a commit: " + line}
}

// strataHookIn reports whether strata's hook name is at path, or, when the
// pre-commit framework's hook is there (installed after strata's), at
// path.legacy, where the framework runs it: as preCommit finds strata's
// pre-commit hook.
func strataHookIn(path, name string) bool {
	mark := []byte("strata " + name + " hook")
	data, err := state.ReadRegular(path, maxRead, true)
	if err != nil {
		return false
	}
	if bytes.Contains(data, mark) {
		return true
	}
	if !hooks.IsFramework(data) {
		return false
	}
	legacy, err := state.ReadRegular(path+hooks.LegacySuffix, maxRead, true)
	return err == nil && bytes.Contains(legacy, mark)
}

// hookBinary reads the strata= line of strata's hook script.
func hookBinary(script []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(script))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "strata="); ok {
			v = strings.Trim(v, "'")
			return strings.ReplaceAll(v, `'\''`, "'")
		}
	}
	return ""
}

func claude(eng *engine.Engine) []Finding {
	// read as claude install reads it: a link is not followed, a pipe never
	// blocks, and at most maxRead bytes
	data, err := state.ReadRegular(filepath.Join(eng.Root(), filepath.FromSlash(hooks.SettingsPath)), maxRead, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return []Finding{{Check: "claude", Level: LevelWarn, Message: hooks.SettingsPath + ": " + readErr(err) + "; not read",
			Fix: "make it a regular file, then strata claude install"}}
	}
	var installed bool
	if err == nil {
		// as claude install finds its hooks: a "command" hook running
		// strata's command, not a "prompt" (or any text) naming it
		if installed, err = hooks.ClaudeInstalled(hooks.SettingsPath, data); err != nil {
			return []Finding{{Check: "claude", Level: LevelWarn, Message: err.Error(),
				Fix: "correct " + hooks.SettingsPath + ", then strata claude install"}}
		}
	}
	if !installed {
		return []Finding{{Check: "claude", Level: LevelInfo, Message: "Claude Code hooks not installed in " + hooks.SettingsPath,
			Fix: "strata claude install"}}
	}
	if _, err := exec.LookPath("strata"); err != nil {
		return []Finding{{Check: "claude", Level: LevelFail, Message: "Claude Code hooks installed, but strata is not on PATH, where they call it",
			Fix: "make install, or put the strata binary in a directory on PATH"}}
	}
	return []Finding{{Check: "claude", Level: LevelOK, Message: "Claude Code hooks installed; strata on PATH"}}
}

func layersFinding(eng *engine.Engine) Finding {
	agent := layers.New(eng, nil)
	l := agent.Present()
	var have []string
	for _, x := range []struct {
		n  string
		ok bool
	}{{"L1", l.L1}, {"L2", l.L2}, {"L3", l.L3}} {
		if x.ok {
			have = append(have, x.n)
		}
	}
	f := Finding{Check: "layers", Level: LevelOK, Message: fmt.Sprintf("present: %s (tier %s)", orNone(have), l.Tier())}
	if l.Tier() != "Full" {
		f.Level, f.Fix = LevelInfo, "strata memory add creates the L2 MEMORY.md; the MCP memory server writes the L3 graph"
	}
	// a layer file on disk that is private is not missing: memory add
	// would refuse it, and keeping it is the user's choice
	why2, why3 := agent.Withheld()
	var private []string
	for _, x := range []struct{ name, path, why string }{{"L2", eng.Config().L2(), why2}, {"L3", eng.Config().Graph, why3}} {
		if x.why != "" {
			private = append(private, x.name+" "+state.ShownPath(x.path)+" is private ("+x.why+")")
		}
	}
	if len(private) > 0 {
		f.Message += "; " + strings.Join(private, "; ")
		f.Fix = "strata keeps a private layer file only if you ask: git config --add strata.keepPrivate PATH (or give it to git in a commit, when only a .strata.yaml rule keeps it)"
	}
	return f
}

// memoryFilesFinding warns when more than one of the default L2 files
// exists and .strata.yaml names none: L2 is the first of the default order,
// which a `git pull` bringing a teammate's file can move; all are kept.
func memoryFilesFinding(eng *engine.Engine) (Finding, bool) {
	cfg := eng.Config()
	if cfg.MemoryPinned {
		return Finding{}, false
	}
	var others []string
	for _, p := range config.MemoryCandidates {
		if st, err := os.Lstat(cfg.Abs(p)); err == nil && st.Mode().IsRegular() && p != cfg.L2() {
			others = append(others, state.TermSafe(p))
		}
	}
	if len(others) == 0 {
		return Finding{}, false
	}
	return Finding{Check: "memory", Level: LevelWarn,
		Message: fmt.Sprintf("%d memory files: %s is L2 (the first that exists of %s); %s kept too, as memory files",
			len(others)+1, state.TermSafe(cfg.L2()), strings.Join(config.MemoryCandidates, ", "), strings.Join(others, ", ")),
		Fix: "name the L2 file in .strata.yaml (memory: " + state.TermSafe(cfg.L2()) + "), so a pulled file cannot move it"}, true
}

func history(ctx context.Context, eng *engine.Engine) []Finding {
	var fs []Finding
	head, err := eng.Head()
	switch {
	case err != nil:
		fix := "git fsck; restore the ref from a clone or a remote (strata sync)"
		if f, ok := brokenRefFix(err); ok {
			fix = f
		}
		fs = append(fs, Finding{Check: "history", Level: LevelFail, Message: eng.StateRef() + ": " + err.Error(), Fix: fix})
	case head == "":
		fs = append(fs, Finding{Check: "history", Level: LevelInfo, Message: eng.StateRef() + ": nothing recorded yet", Fix: "strata init"})
	default:
		if gone, good := eng.HeadGone(); gone {
			f := Finding{Check: "history", Level: LevelFail,
				Message: fmt.Sprintf("%s points at %.10s, which this repository no longer holds (a git gc --prune=now beside a record removes such objects)", eng.StateRef(), head),
				Fix:     "restore the ref from a clone or a remote (git fetch, then git update-ref), or from a backup"}
			if good != "" {
				f.Fix = fmt.Sprintf("git update-ref %s %s %s puts it back at the last commit of its reflog that exists (the versions recorded after it are gone; strata record records what is on disk now)", eng.StateRef(), good, head)
			}
			fs = append(fs, f)
			break
		}
		fs = append(fs, Finding{Check: "history", Level: LevelOK, Message: fmt.Sprintf("%s at %.10s", eng.StateRef(), head)})
	}
	refs := []string{}
	for _, r := range []string{eng.StateRef(), eng.RejectedRef()} {
		if h, err := eng.RefHead(r); err == nil && h != "" {
			refs = append(refs, r)
		}
	}
	if len(refs) > 0 {
		args := append([]string{"fsck", "--no-dangling", "--no-progress"}, refs...)
		if out, err := git(ctx, eng.Root(), args...); err != nil {
			if f, ok := unreachableFault(ctx, eng.Root(), refs, out); ok {
				fs = append(fs, f)
			} else {
				fs = append(fs, Finding{Check: "fsck", Level: LevelFail, Message: "git fsck of strata's refs: " + firstLine(out, err),
					Fix: "git fsck --full shows every problem; git fetch --refetch REMOTE refs/strata/state brings missing objects back from a remote that has them (strata sync cannot), or restore from a backup"})
			}
		} else {
			fs = append(fs, Finding{Check: "fsck", Level: LevelOK, Message: "git fsck of " + strings.Join(refs, ", ") + ": no problems"})
		}
	}
	if out, err := git(ctx, eng.Root(), "count-objects", "-v"); err == nil {
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "count: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		f := Finding{Check: "objects", Level: LevelOK, Message: fmt.Sprintf("%d loose objects", n)}
		if n > LooseLimit {
			f.Level, f.Message, f.Fix = LevelWarn, fmt.Sprintf("%d loose objects, past git's gc.auto %d: a gc is due", n, LooseLimit), "git gc"
		}
		fs = append(fs, f)
	}
	return fs
}

// heldLock is a warning when the state ref's lock has been held past the
// age at which it would be taken for abandoned: every record waits for it,
// then fails naming only the lock file.
func heldLock(eng *engine.Engine) (Finding, bool) {
	l, ok := eng.HeldLock()
	if !ok {
		return Finding{}, false
	}
	path, age, pid, alive := l.Path, l.Age, l.Pid, l.Alive
	who, fix := "no strata process named in it", "if no git or strata command is running on this repository, remove it: rm "+state.ShellWord(path)
	switch {
	case l.Flock:
		// its writer runs, wherever: removed, the lock it renames over
		// the ref would be another writer's (attack38e M1)
		who = "held by a strata writer that is still running (it holds the lock's flock: stopped, or in a frozen container)"
		if pid > 0 {
			who = fmt.Sprintf("held by strata process %d (as its pid namespace numbers it), still running: it holds the lock's flock (stopped, or in a frozen container)", pid)
		}
		fix = "let it go on (resume the stopped process or the paused container), or end it; do not remove the lock: its writer renames it over the ref"
	case pid > 0 && alive && !proc.MayRunStrata(pid):
		who = fmt.Sprintf("names process %d, which runs %s, not strata: an earlier strata's pid, reused; the next record removes it", pid, state.TermSafe(proc.Name(pid)))
		fix = ""
	case pid > 0 && alive:
		who = fmt.Sprintf("held by process %d, which is running (stopped?)", pid)
		fix = fmt.Sprintf("let process %d go on (kill -CONT %d), or end it; records wait for it", pid, pid)
	case pid > 0:
		who = fmt.Sprintf("left by process %d, which is gone; the next record removes it", pid)
		fix = ""
	}
	return Finding{Check: "ref lock", Level: LevelWarn,
		Message: fmt.Sprintf("%s is %s old: %s", state.TermSafe(path), age.Round(time.Second), who), Fix: fix}, true
}

// pendingSync is a sync killed after its merge (or a restore after its
// commit) that still owes the work tree files (engine.PendingWrites): they look like local edits undoing
// the merge until the next record or sync writes them.
func pendingSync(eng *engine.Engine) (Finding, bool) {
	owed, err := eng.PendingWrites()
	if err != nil || len(owed) == 0 {
		return Finding{}, false
	}
	after := "a sync was interrupted after its merge"
	if eng.InterruptedWriter() == "restore" {
		after = "a restore was interrupted after its commit"
	}
	return Finding{Check: "sync-journal", Level: LevelWarn,
		Message: fmt.Sprintf("%s; %d %s not yet written (%s); until then they show as modified",
			after, len(owed), engine.Plural(len(owed), "file is", "files are"), state.ShownPaths(owed, " ")),
		Fix: "strata record (or strata sync) writes them"}, true
}

// pendingPush is a move of the state ref by something other than strata (a
// push into this repository, which serves as another machine's sync
// remote) that no command has taken into the work tree yet
// (engine.PendingPush).
func pendingPush(eng *engine.Engine) (Finding, bool) {
	p, err := eng.PendingPush()
	if err != nil || p == nil {
		return Finding{}, false
	}
	if p.PutBack != "" {
		return Finding{Check: "push", Level: LevelWarn,
			Message: fmt.Sprintf("%s was moved from outside strata to %s, not taken here: %s", eng.StateRef(), state.ShortID(p.To), p.PutBack),
			Fix:     fmt.Sprintf("the next strata record puts it back at %s, the history the files here follow; to take the other version of the files instead, after that: strata restore --all --rev %s", state.ShortID(p.From), state.ShortID(p.To))}, true
	}
	return Finding{Check: "push", Level: LevelInfo,
		Message: fmt.Sprintf("%s was moved from outside strata (a push into this repository: it serves as another machine's sync remote) from %s to %s; %d %s not yet written here (%s); until then they show as pushed",
			eng.StateRef(), state.ShortID(p.From), state.ShortID(p.To), len(p.Paths), engine.Plural(len(p.Paths), "file is", "files are"), state.ShownPaths(p.Paths, " ")),
		Fix: "strata record (or sync, restore) writes them; a bare repository as the sync remote avoids this (README)"}, true
}

// youngForeign names the temp files a strata process of another pid
// namespace left beside kept files that no record takes yet
// (engine.YoungForeignLeftovers).
func youngForeign(eng *engine.Engine) []Finding {
	young, err := eng.YoungForeignLeftovers()
	if err != nil {
		return nil
	}
	var out []Finding
	for _, p := range slices.Sorted(maps.Keys(young)) {
		out = append(out, Finding{Check: "temp file", Level: LevelWarn,
			Message: fmt.Sprintf("%s beside %s: %s", state.ShownPaths(young[p], " "), state.ShownPath(p), engine.YoungForeignWhy()),
			Fix:     "if no strata runs in that container now, wait, or run strata record in the container (it takes it at once); do not remove it by hand: it may hold the only copy of a save"})
	}
	return out
}

func worktrees(ctx context.Context, eng *engine.Engine) Finding {
	out, err := git(ctx, eng.Root(), "worktree", "list", "--porcelain")
	if err != nil {
		return Finding{Check: "worktrees", Level: LevelWarn, Message: "git worktree list: " + firstLine(out, err)}
	}
	n := strings.Count(out, "worktree ") - 1
	if n <= 0 {
		return Finding{Check: "worktrees", Level: LevelOK, Message: "no linked worktrees"}
	}
	// each worktree's own ref, named as gitstore names it (an id git takes
	// for no ref name escaped): not every ref ending in /state, which
	// counted home refs and those of worktrees since removed
	refs, _ := git(ctx, eng.Root(), "for-each-ref", "--format=%(refname)", "refs/strata/worktrees/")
	have := map[string]bool{}
	for _, r := range strings.Split(refs, "\n") {
		have[r] = true
	}
	recorded := 0
	ids, _ := os.ReadDir(filepath.Join(eng.CommonDir(), "worktrees"))
	for _, id := range ids {
		if id.IsDir() && have["refs/strata/worktrees/"+gitstore.WorktreeName(id.Name())+"/state"] {
			recorded++
		}
	}
	return Finding{Check: "worktrees", Level: LevelInfo,
		Message: fmt.Sprintf("%d linked worktrees, %d with their own refs/strata/worktrees/<name>/state; each runs its own watcher", n, recorded)}
}

func remotes(eng *engine.Engine) []Finding {
	ts, err := syncer.Remotes(eng)
	if err != nil {
		return []Finding{{Check: "sync", Level: LevelWarn, Message: err.Error()}}
	}
	if len(ts) == 0 {
		return []Finding{{Check: "sync", Level: LevelInfo, Message: "never synced", Fix: "strata sync REMOTE (or strata watch --sync REMOTE)"}}
	}
	var fs []Finding
	for _, t := range ts {
		f := Finding{Check: "sync", Level: LevelOK, Message: fmt.Sprintf("%s: %d ahead, %d behind", t.Remote, t.Ahead, t.Behind)}
		if t.Ahead > 0 || t.Behind > 0 {
			f.Level, f.Fix = LevelInfo, "strata sync "+t.Remote
		}
		fs = append(fs, f)
	}
	return fs
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := gitstore.Command(exec.CommandContext(ctx, "git", args...), dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// faultedObject is the object of git fsck's "error in TYPE ID: …" lines,
// compiled when first asked: a regexp compiled at package init is paid by
// every strata start, `version` and each hook call included (0.17 ms of
// init, as the other packages' patterns are made lazily too).
var faultedObject = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^error in (?:commit|tree|blob|tag) ([0-9a-f]{40}): `)
})

// unreachableFault tells a git fsck that failed only on objects none of
// strata's refs reach (git fsck checks every object of the store, the
// refs named being only where its walk starts): a fetch an older strata
// refused kept what it received, and a malformed commit there failed fsck
// for weeks, with advice to fetch missing objects that did not fit
// (attack35 L1). Such objects harm nothing strata reads; git gc --prune=now
// removes them. ok is false when any faulted object is reachable, or when
// the output names none (a missing object, say).
func unreachableFault(ctx context.Context, root string, refs []string, out string) (Finding, bool) {
	ms := faultedObject().FindAllStringSubmatch(out, -1)
	if len(ms) == 0 || strings.Contains(out, "missing ") || strings.Contains(out, "broken link") {
		return Finding{}, false
	}
	reached, err := git(ctx, root, append([]string{"rev-list", "--objects"}, refs...)...)
	if err != nil {
		return Finding{}, false
	}
	held := map[string]bool{}
	for _, l := range strings.Split(reached, "\n") {
		if id, _, _ := strings.Cut(l, " "); id != "" {
			held[id] = true
		}
	}
	for _, m := range ms {
		if held[m[1]] {
			return Finding{}, false
		}
	}
	return Finding{Check: "fsck", Level: LevelWarn,
		Message: fmt.Sprintf("git fsck fails on %d object(s) none of strata's refs reach (%.10s…): kept by a fetch strata refused; nothing strata reads is damaged", len(ms), ms[0][1]),
		Fix:     "with strata watch stopped (a prune beside a record can remove what it is writing), git gc --prune=now removes unreachable objects; or wait for git gc to prune them"}, true
}

func firstLine(out string, err error) string {
	if l, _, _ := strings.Cut(strings.TrimSpace(out), "\n"); l != "" {
		return l
	}
	return err.Error()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// ago is a duration rounded for people: 45s, 12m, 3h, 2d.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// maxRead bounds what doctor reads of a hook or a settings file.
const maxRead = 16 << 20

// readErr says why a file doctor looks at was not read, in one line.
func readErr(err error) string {
	switch {
	case errors.Is(err, state.ErrNotRegular):
		return "not a regular file (a symbolic link, a named pipe or a device)"
	case errors.Is(err, state.ErrTooLarge):
		return fmt.Sprintf("larger than %d bytes", maxRead)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
