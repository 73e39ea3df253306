package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/syncer"
)

// env is everything a command touches outside its arguments, so tests can
// run commands in-process with their own streams, directory and clock.
type env struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	Dir string // the directory strata runs in (-C)
	Now func() time.Time

	hook bool // runs as a Claude Code or git hook: must answer within the caller's timeout (storeOptions)

	catchSignals func()                                 // installs the SIGINT/SIGTERM handler (signals.go); nil: none
	exec         func(path string, argv []string) error // becomes another program (companion.go); nil: cannot
	caught       bool                                   // catchSignals was called
	stopped      error                                  // what failed because a signal canceled the command (runApp)

	unknownCommand bool     // set by the app's CommandNotFound, which cannot return an error
	args           []string // the command line (run), for a refusal that names it again

	// opened is every engine the command opened (openRead): what their
	// records did for a push into this repository, or for a journal an
	// interrupted sync or restore left, is named once the command is
	// done, when the command did not name it itself (sayTaken)
	opened []*engine.Engine
}

// Exit codes (docs/contract.md §11).
const (
	exitOK      = 0
	exitInvalid = 1 // invalid content, or a check failed
	exitUsage   = 2
	exitOther   = 3 // no repository, I/O, anything else

	exitBlocked = 2 // a Claude Code hook refusing what the agent did: Claude Code shows stderr to the agent
)

const exitCodesHelp = `
EXIT CODES:
   0  ok
   1  invalid content, or a check failed
   2  usage error (bad flag, bad time, path outside the kept files)
   3  anything else (no repository, I/O)`

// usageError is a mistake in how strata was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errReported is a check that failed after its problems were printed.
var errReported = errors.New("check failed")

// errUsageReported is a usage error whose lines were printed.
var errUsageReported = errors.New("usage error")

// errBlocked is a Claude Code hook's check that failed after its problems
// were printed on stderr.
var errBlocked = errors.New("blocked")

// run is the whole program: it parses args, runs one command and maps its
// error to an exit code. It never calls os.Exit, so deferred cleanup runs.
func run(ctx context.Context, args []string, e *env) int {
	e.args = args
	if isHookCall(args) {
		return exitCode(runValidateHook(e), e.Err)
	}
	return runApp(ctx, newAppOf(e, commandName(args)), args, e)
}

// runApp runs args on app, the CLI newAppOf built for them.
func runApp(ctx context.Context, app *cli.App, args []string, e *env) int {
	err := app.RunContext(ctx, permute(app, args))
	e.sayTaken()
	if err == nil && e.unknownCommand {
		return exitUsage
	}
	if err != nil && e.caught && ctx.Err() != nil {
		// the first SIGINT or SIGTERM canceled the context, and what the
		// command was running with it (a git fetch or push) stopped:
		// interrupted says so, not git's "signal: killed" (exit 3)
		e.stopped = err
		return exitOther
	}
	return exitCode(err, e.Err)
}

// isHookCall reports whether args are exactly `strata validate --hook`, the
// command line Claude Code runs after every tool use (strata claude install
// writes it so): it is dispatched before the CLI is built, since building
// its two dozen commands and their flags costs ~0.2 ms of a ~4 ms hook call.
// Any other form (-C DIR, a PATH, --json) goes through the CLI, which
// answers it as before (TestHookCallSameWithoutCLI).
func isHookCall(args []string) bool {
	return len(args) == 3 && args[1] == "validate" && args[2] == "--hook"
}

// exitCode is the one place that maps errors to exit codes and messages.
func exitCode(err error, w io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ps state.Problems
	var ue *usageError
	var pe *engine.PathError
	var ce *engine.ConfigError
	var tl *engine.TooLargeError
	var tc *engine.TooCostlyError
	switch {
	case errors.Is(err, errReported):
		return exitInvalid
	case errors.Is(err, errBlocked):
		return exitBlocked
	case errors.Is(err, errUsageReported):
		return exitUsage
	case errors.Is(err, syncer.ErrNoOrigin):
		fmt.Fprintf(w, "strata: %s\n", oneLine(err))
		return exitUsage
	case errors.As(err, &ps):
		fmt.Fprintln(w, ps.Error())
		return exitInvalid
	case errors.As(err, &ce):
		fmt.Fprintf(w, "strata: %s\n", oneLine(ce))
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(w, "strata: %s\n", ue.msg)
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintf(w, "strata: %s\n", oneLine(pe))
		switch {
		case pe.IO:
			return exitOther
		case pe.Absent:
			return exitInvalid
		}
		return exitUsage
	case errors.Is(err, state.ErrDamaged):
		fmt.Fprintf(w, "strata: %s (git fsck --full shows the damage; git fetch --refetch REMOTE refs/strata/state brings them back from a remote that has them, as strata sync cannot, or restore .git from a backup)\n", err)
		return exitOther
	case errors.Is(err, state.ErrNotRepo), errors.Is(err, state.ErrLocked):
		fmt.Fprintf(w, "strata: %s\n", oneLine(err))
		return exitOther
	case errors.Is(err, state.ErrNotFound):
		fmt.Fprintf(w, "strata: %s\n", strings.ReplaceAll(trimSentinel(err, state.ErrNotFound), "\n", "; "))
		return exitInvalid
	case errors.As(err, &tc):
		// schema infer's draft too large to check (or load): a check
		// that could not be made, not a bug
		fmt.Fprintf(w, "strata: %s\n", oneLine(err))
		return exitInvalid
	case errors.As(err, &tl):
		// a recorded version over max_size is never a valid one: refused
		// unread, as a check that failed
		fmt.Fprintf(w, "strata: %s\n", oneLine(err))
		return exitInvalid
	}
	fmt.Fprintf(w, "strata: %s\n", oneLine(err))
	return exitOther
}

// oneLine is an error's message on one line, as every error strata prints
// is (docs/contract.md §11): errors joined with errors.Join, or a git
// message of several lines, are said with "; " between their lines (a
// symbolic link in place of the graph file ended `resolve` with a second
// line naming no file: attack20-headline H7).
func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimRight(err.Error(), "\n"), "\n", "; ")
}

// trimSentinel drops a trailing ": not found" that only repeats the sentinel.
func trimSentinel(err, sentinel error) string {
	return strings.TrimSuffix(err.Error(), ": "+sentinel.Error())
}

// commandTable is strata's commands in the order help lists them, each
// built only when needed: a command line that names one builds that one
// (newAppOf). Building all two dozen, with their flags and help, was 2-4%
// of a whole `strata version` (0.96x fresh, 0.98x read back from disk, in
// 101 interleaved rounds).
var commandTable = []struct {
	name  string
	build func(*env) *cli.Command
}{
	{"init", newInitCommand},
	{"validate", newValidateCommand},
	{"watch", newWatchCommand},
	{"record", newRecordCommand},
	{"status", newStatusCommand},
	{"log", newLogCommand},
	{"show", newShowCommand},
	{"diff", newDiffCommand},
	{"restore", newRestoreCommand},
	{"phase", newPhaseCommand},
	{"decisions", newDecisionsCommand},
	{"decide", newDecideCommand},
	{"memory", newMemoryCommand},
	{"resume", newResumeCommand},
	{"at", newAtCommand},
	{"blame", newBlameCommand},
	{"mcp", newMCPCommand},
	{"resolve", newResolveCommand},
	{"schema", newSchemaCommand},
	{"hooks", newHooksCommand},
	{"claude", newClaudeCommand},
	{"sync", newSyncCommand},
	{"forget", newForgetCommand},
	{"doctor", newDoctorCommand},
	{"timeline", newTimelineCommand},
	{"version", newVersionCommand},
	{sweepCommand, newSweepCommand},
	{"help", func(*env) *cli.Command { return newHelpCommand() }},
}

// commandName is the command a command line names after strata's own flags
// (the word permute treats as the command), or "" when there is none.
// (`strata -h show` is show's help page, as `strata show -h` is.)
func commandName(args []string) string {
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return ""
		case !strings.HasPrefix(a, "-"):
			return a
		case takesValue(globalFlags(), a):
			i++ // -C DIR
		}
	}
	return ""
}

// globalFlags are the flags strata takes before a command, new for each
// app (a flag keeps what it parsed).
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "C", Usage: "run as if strata was started in `DIR`"},
		// urfave/cli adds --help only to an app without a command named
		// help; strata has its own (newHelpCommand)
		cli.HelpFlag,
	}
}

// newApp builds the CLI with every command.
func newApp(e *env) *cli.App { return newAppOf(e, "") }

// newAppOf builds the CLI with only the command name, or with every command
// when name is "", "help" (which looks the others up) or no command's name:
// what a command line shows and does is the same either way
// (TestOneCommandAppSame).
func newAppOf(e *env, name string) *cli.App {
	var cmds []*cli.Command
	for _, c := range commandTable {
		if c.name == name && name != "help" {
			cmds = []*cli.Command{c.build(e)}
			break
		}
	}
	if cmds == nil {
		for _, c := range commandTable {
			cmds = append(cmds, c.build(e))
		}
	}
	app := &cli.App{
		Name:            "strata",
		Usage:           "keep AI-agent workflow state valid, versioned and in sync inside git",
		UsageText:       "strata [-C DIR] COMMAND [arguments] [flags]",
		Version:         version(),
		HideHelpCommand: true,
		Reader:          e.In,
		Writer:          e.Out,
		ErrWriter:       e.Err,
		Flags:           globalFlags(),
		Before: func(c *cli.Context) error {
			if d := c.String("C"); d != "" {
				if !strings.HasPrefix(d, "/") {
					d = e.Dir + "/" + d
				}
				st, err := os.Stat(d)
				if err != nil || !st.IsDir() {
					return usagef("-C %s: not a directory", c.String("C"))
				}
				e.Dir = d
			}
			return nil
		},
		// urfave/cli would os.Exit on some errors; strata maps them itself.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usagef("%s (see strata --help)", flagError(err))
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate + exitCodesHelp + "\n",
		Commands:              cmds,
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(e.Err, "strata: unknown command %q (see strata --help)\n", name)
			e.unknownCommand = true
		},
	}
	// The two help templates are joined once: joined per command, the
	// copies (~60 of 1-2 KB) were most of what building the app allocated.
	help := helpTemplates{
		command:    cli.CommandHelpTemplate + exitCodesHelp + "\n",
		subcommand: cli.SubcommandHelpTemplate + exitCodesHelp + "\n",
	}
	for _, c := range app.Commands {
		help.finishCommand(c, c.Name)
		catchSignalsBefore(e, c)
	}
	return app
}

// helpTemplates are urfave/cli's help templates with strata's exit codes.
type helpTemplates struct{ command, subcommand string }

// finishCommand gives every command the same usage-error mapping and the
// exit codes in its help; full is its name as typed after strata
// ("phase recover").
func (h helpTemplates) finishCommand(c *cli.Command, full string) {
	own := c.OnUsageError // a command's own words for some usage errors (nil: none)
	c.OnUsageError = func(ctx *cli.Context, err error, sub bool) error {
		if own != nil {
			if err := own(ctx, err, sub); err != nil {
				return err
			}
		}
		return usagef("%s: %s (see strata %s --help)", c.Name, flagError(err), full)
	}
	// A command that names no arguments takes none: `strata status foo` is a
	// mistake, not a status.
	if action := c.Action; action != nil && c.ArgsUsage == "" && len(c.Subcommands) == 0 {
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() > 0 {
				return usagef("%s takes no arguments, got %q (see strata %s --help)", c.Name, ctx.Args().First(), full)
			}
			return action(ctx)
		}
	}
	if c.CustomHelpTemplate == "" {
		if len(c.Subcommands) > 0 {
			c.CustomHelpTemplate = h.subcommand
		} else {
			c.CustomHelpTemplate = h.command
		}
	}
	for _, s := range c.Subcommands {
		h.finishCommand(s, full+" "+s.Name)
	}
}

// flagError words the flag package's errors as one line that names the
// flag as it was typed.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		dash := "--"
		if len(name) == 1 {
			dash = "-"
		}
		return "unknown flag " + dash + name
	}
	return msg
}

// newHelpCommand is `strata help [COMMAND...]`, as `git help`.
func newHelpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show help for strata or for one command",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			cmds, names := c.App.Commands, c.Args().Slice()
			var cmd *cli.Command
			for _, n := range names {
				next := findCommand(cmds, n)
				if next == nil {
					return usagef("help: no command %q (see strata --help)", strings.Join(names, " "))
				}
				cmd, cmds = next, next.Subcommands
			}
			if cmd.HelpName == "" {
				cmd.HelpName = "strata " + strings.Join(names, " ")
			}
			return showCommandHelp(c, cmd)
		},
	}
}

// showCommandHelp prints one command's help, the page `strata CMD --help`
// prints.
func showCommandHelp(c *cli.Context, cmd *cli.Command) error {
	tpl := cmd.CustomHelpTemplate
	if tpl == "" {
		tpl = cli.CommandHelpTemplate
	}
	cli.HelpPrinter(c.App.Writer, tpl, cmd)
	return nil
}

// permute moves flags that follow positional arguments in front of them, so
// `strata show PATH --at "2h ago"` works as in git (urfave/cli v2 stops
// parsing flags at the first positional). Arguments after "--" stay as they are.
// A help flag anywhere after the command asks for the command's help page:
// the arguments are then dropped.
func permute(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" { // global flags
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
		i++
	}
	if i >= len(args) {
		return out
	}
	cmds := app.Commands
	var cmd *cli.Command
	for i < len(args) {
		c := findCommand(cmds, args[i])
		if c == nil {
			break
		}
		cmd, cmds = c, c.Subcommands
		out = append(out, args[i])
		i++
	}
	if cmd == nil {
		return append(out, args[i:]...)
	}
	var flags, pos []string
	help, dangling := false, false
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if n, ok := countFlag(cmd, a); ok { // git's -n3 and -3 for -n 3
			flags = append(flags, "-n", n)
			continue
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			flags = append(flags, a)
			help = help || a == "-h" || a == "--help" || a == "-help"
			if takesValue(cmd.Flags, a) {
				if i+1 < len(args) {
					flags = append(flags, args[i+1])
					i++
				} else {
					dangling = true
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	out = append(out, flags...)
	if help || dangling {
		// the command's help page, whatever else the line names, as
		// `git log P --help` is git log's (urfave/cli would look the first
		// argument up as a subcommand: `strata show P --help` said
		// "unknown command P"); and a flag that ends the line without its
		// value stays last, so the CLI says it needs one (with "--" and the
		// arguments after it, "--" became its value: `memory add x
		// --section` added x under a new "## --")
		pos = nil
	}
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

// countFlag reads git's short forms of a count, -nN and -N (`git log -n3`,
// `git log -3`), as -n N for a command whose -n takes a number (log).
func countFlag(cmd *cli.Command, a string) (string, bool) {
	digits, ok := strings.CutPrefix(a, "-n")
	if !ok {
		digits, ok = strings.CutPrefix(a, "-")
	}
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !takesValue(cmd.Flags, "-n") {
		return "", false
	}
	return digits, true
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether a flag argument like "--at" consumes the next
// argument as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}

// open opens the repository strata runs in, for a command that may write
// in it. Run as root through sudo on the repository of the user sudo runs
// it for, it refuses before anything is written (sudoRefusal): what root
// creates in .git and the work tree would be root's, and would stop that
// user's strata and git (attack31 F6).
func open(e *env) (*engine.Engine, error) {
	eng, err := openRead(e)
	if err != nil {
		return nil, err
	}
	if uid := eng.Sudo(); uid != 0 {
		return nil, sudoRefusal(e, eng.Root(), uid)
	}
	return eng, nil
}

// openRead is open for a command that only reads (log, show, status,
// validate, ...): under sudo it runs, and the repository writes nothing,
// not even strata's caches (gitstore Store.Sudo).
func openRead(e *env) (*engine.Engine, error) {
	eng, err := engine.OpenWith(e.Dir, e.storeOptions())
	if err != nil {
		return nil, err
	}
	eng.Now = e.Now
	e.opened = append(e.opened, eng)
	return eng, nil
}

// sayTaken names, on stderr, what the records of the engines the command
// opened did for a push into this repository or an interrupted sync's or
// restore's journal, and the command did not name itself: any command
// that records (memory add, resume through an expiry, mcp's
// tools) takes those first, and a file written by it unnamed read as an
// edit of the user's (attack39c LOW: memory add said nothing).
func (e *env) sayTaken() {
	for _, eng := range e.opened {
		printPushed(e, eng)
		printNotWritten(e, eng)
	}
}

// hookPromisorTimeout bounds, in a hook, the wait for the promisor remote
// of a partial clone to give one object (gitstore.Options): well inside
// Claude Code's default hook timeout of 60 s, where the two minutes
// strata waits elsewhere had the hook killed before it answered
// (attack31b C).
const hookPromisorTimeout = 10 * time.Second

// storeOptions are what the repository is opened with: a hook's shorter
// bounds.
func (e *env) storeOptions() gitstore.Options {
	if e.hook {
		return gitstore.Options{PromisorTimeout: hookPromisorTimeout}
	}
	return gitstore.Options{}
}

// sudoRefusal is the one line that refuses a command that writes, run as
// root through sudo in the repository at root of the user uid: it names
// the command line to run as that user instead.
func sudoRefusal(e *env, root string, uid int) error {
	id := "uid " + strconv.Itoa(uid)
	who, name, as := id, id, state.ShellWord("#"+strconv.Itoa(uid))
	if n := os.Getenv("SUDO_USER"); n != "" && state.ShellWord(n) == n && !strings.HasPrefix(n, "-") {
		who, name, as = n+" ("+id+")", n, n
	}
	line := "strata …"
	if len(e.args) > 1 {
		words := []string{"strata"}
		for _, a := range e.args[1:] {
			words = append(words, state.ShellWord(a))
		}
		line = strings.Join(words, " ")
	}
	return fmt.Errorf("%s belongs to %s, and strata runs as root through sudo: what it would write there would be root's and would stop %s's own strata and git; run it as %s (sudo -u %s %s) or without sudo; nothing was written",
		state.TermSafe(root), who, name, name, as, line)
}

// writeJSON prints one indented JSON document, every --json and --hook
// output: escaped by state.JSONSafe (DEL, C1 and format characters as
// \uXXXX, as encoding/json writes C0), so recorded text sends nothing a
// terminal acts on and the document decodes to the same values.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(state.JSONSafe(b.Bytes()))
	return err
}

// jsonLines is a writer of JSON records, one or more whole ones per Write
// (slog's JSON handler): each is escaped by state.JSONSafe as writeJSON's.
type jsonLines struct{ w io.Writer }

func (j jsonLines) Write(p []byte) (int, error) {
	if _, err := j.w.Write(state.JSONSafe(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// parsePoint reads --at/--rev into a history point.
func parsePoint(e *env, at, rev string) (engine.Point, error) {
	if at != "" && rev != "" {
		return engine.Point{}, usagef("--at and --rev cannot be used together")
	}
	if at != "" {
		t, err := state.ParseTime(at, e.Now())
		if err != nil {
			return engine.Point{}, usagef("--at: %v", err)
		}
		return engine.Point{At: t}, nil
	}
	return engine.Point{Rev: rev}, nil
}

// resolvePaths turns arguments into kept paths; every refusal is reported
// before anything runs.
func resolvePaths(eng *engine.Engine, e *env, args []string) ([]engine.Kept, error) {
	out := make([]engine.Kept, 0, len(args))
	for _, a := range args {
		k, err := eng.Resolve(e.Dir, a)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}
