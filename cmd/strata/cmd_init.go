package main

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

func newInitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "write a commented .strata.yaml and record the current valid state",
		Description: `Writes .strata.yaml with the defaults (commented out) when it does not exist,
and records every valid kept file: as the first commit of refs/strata/state
when nothing is recorded yet, as ordinary changes otherwise. Files that fail
their schema are listed and kept on refs/strata/rejected. Safe to run twice.`,
		Action: func(c *cli.Context) error { return runInit(c.Context, e) },
	}
}

func runInit(ctx context.Context, e *env) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	res, err := eng.Init()
	if err != nil {
		return err
	}
	if res.ConfigWritten {
		fmt.Fprintf(e.Out, "wrote %s\n", engine.ConfigFile)
	}
	recorded := 0
	var hints, broken, builtin, added []string
	for _, o := range res.Outcomes {
		if o.Entry != nil && o.Entry.Home {
			fmt.Fprintf(e.Out, "recorded %s on %s (%s; local, sync never pushes it)\n", state.ShownPath(o.Path), eng.HomeRef(), state.ShortID(o.Entry.Commit))
		} else if o.Entry != nil {
			recorded++
			if o.Entry.Action == state.ActionAdd {
				added = append(added, o.Path)
			}
		}
		switch {
		case o.Invalid() && o.Rejected != nil: // read, and its content failed: a schema of the user's may fit
			fmt.Fprintln(e.Err, o.Problems.Error())
			if p := notWellFormed(eng, o); p != nil { // no schema accepts it, the format-only one neither
				broken = append(broken, "  "+p.Error())
			} else if k, ok := eng.Config().Classify(o.Path); ok && layers.IsL1(eng.Config(), k) {
				// a built-in state file strata interprets: a rule of the
				// user's would put it in its own shape and stop that (as
				// doctor's fix says, attack37c H2)
				builtin = append(builtin, "  "+state.ShownPath(o.Path))
			} else {
				rule, err := engine.RuleLine(engine.LiteralGlob(o.Path), formatOf(o.Path))
				if err != nil { // a name that is not UTF-8: no rule of YAML names it
					rule = "# " + err.Error()
				} else {
					rule = "- " + rule
				}
				hints = append(hints, "  "+rule)
			}
		case o.Invalid(): // not read at all (a link, a pipe, too large): nothing kept, no schema helps
			fmt.Fprintln(e.Err, o.Problems.Error())
		}
	}
	// Files kept but for a control character in their name: strata
	// validate fails on them, so init says so too (and still exits 0).
	bad, err := eng.BadNames()
	if err != nil {
		return err
	}
	for _, p := range bad {
		fmt.Fprintln(e.Err, p.Error())
	}
	printWithheld(e, eng)
	head, err := eng.Head()
	if err != nil {
		return err
	}
	switch {
	case recorded > 0:
		fmt.Fprintf(e.Out, "recorded %s on %s (%s)\n", plural(recorded, "file"), eng.StateRef(), state.ShortID(head))
		printFirstRecorded(ctx, e, eng, added)
	case head != "":
		fmt.Fprintf(e.Out, "%s is up to date (%s)\n", eng.StateRef(), state.ShortID(head))
	default:
		fmt.Fprintf(e.Out, "no valid kept files yet; strata records them as they appear\n")
	}
	if len(hints) > 0 {
		fails, they, follow, them := plural(len(hints), "file")+" fail their schema", "they", "follow", "them"
		if len(hints) == 1 {
			fails, they, follow, them = "1 file fails its schema", "it", "follows", "it"
		}
		fmt.Fprintf(e.Err, "%s (kept on %s). If %s %s a shape of your own,\n"+
			"point `schema:` in %s at your own JSON Schema file, or keep %s as well-formed only:\n"+
			"files:\n%s\n",
			fails, eng.RejectedRef(), they, follow, engine.ConfigFile, them, strings.Join(hints, "\n"))
	}
	if len(builtin) > 0 {
		fmt.Fprintf(e.Err, "%d built-in state %s (kept on %s): strata interprets %s (resume, the TTL,\n"+
			"the MEMORY.md line, resolve), and a schema of your own would stop that, so fix %s by hand, then run strata record:\n%s\n",
			len(builtin), engine.Plural(len(builtin), "file fails its schema", "files fail their schema"), eng.RejectedRef(),
			engine.Plural(len(builtin), "it", "them"), engine.Plural(len(builtin), "it", "them"), strings.Join(builtin, "\n"))
	}
	if len(broken) > 0 {
		fmt.Fprintf(e.Err, "%d %s not well-formed (kept on %s): no `schema:` accepts %s, so fix %s\n"+
			"by hand, then run strata record:\n%s\n",
			len(broken), engine.Plural(len(broken), "file is", "files are"), eng.RejectedRef(),
			engine.Plural(len(broken), "it", "them"), engine.Plural(len(broken), "it", "them"), strings.Join(broken, "\n"))
	}
	return nil
}

// maxNamed is how many first-recorded files init names before it counts
// the rest.
const maxNamed = 20

// printFirstRecorded names the files init recorded for the first time:
// strata sync publishes them, and a rule of a committed .strata.yaml may
// keep a file the user never gave to git (attack25 K4), so the user sees
// each before any sync. Past maxNamed, the rest are counted. One that sync
// would withhold, as git itself answers (ignored through a rule only git
// reads, such as git -c core.excludesFile), is named apart with why:
// "strata sync publishes them" was said of it too (attack37).
func printFirstRecorded(ctx context.Context, e *env, eng *engine.Engine, added []string) {
	if len(added) == 0 {
		return
	}
	held, err := eng.NotPublished(ctx, added)
	if err != nil {
		held = nil // git could not answer: sync asks again before it publishes anything
	}
	var out []string
	for _, p := range added {
		if why, ok := held[p]; ok {
			fmt.Fprintf(e.Out, "recorded here, but strata sync refuses to publish it (%s), and pushes nothing while it is recorded: take it out with strata forget %s: %s\n", why, state.ShellWord(p), state.ShownPath(p))
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return
	}
	fmt.Fprintf(e.Out, "recorded for the first time (strata sync publishes %s):\n", engine.Plural(len(out), "it", "them"))
	for i, p := range out {
		if i == maxNamed {
			fmt.Fprintf(e.Out, "  ... and %d more (strata status lists every kept file)\n", len(out)-maxNamed)
			break
		}
		fmt.Fprintf(e.Out, "  %s\n", state.ShownPath(p))
	}
}

// notWellFormed is the first problem of o's rejected version under the
// format-only schema init would advise (formatOf), nil when that schema
// accepts it. Such a file (a duplicate key, a broken line) is not kept by
// any rule until it is fixed.
func notWellFormed(eng *engine.Engine, o engine.Outcome) *state.Problem {
	data, err := eng.FileAt(o.Rejected.Commit, o.Path)
	if err != nil {
		return nil // the advice stays the usual one
	}
	for _, p := range eng.ValidateContent(o.Path, data, formatOf(o.Path)) {
		if !p.Warning {
			return &p
		}
	}
	return nil
}

// formatOf is the well-formed-only schema that fits a file's format.
func formatOf(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml":
		return "yaml"
	case ".jsonl", ".ndjson":
		return "jsonl"
	case ".md", ".markdown":
		return "markdown"
	}
	return "json"
}

// printWithheld says which files a rule would keep but strata withholds as
// private, and how to keep one anyway.
func printWithheld(e *env, eng *engine.Engine) {
	for _, p := range eng.Withheld() {
		printPrivate(e, p)
	}
}

// printPrivate is printWithheld's line for one private file.
func printPrivate(e *env, p engine.Private) {
	why, then := p.NotKept()
	if then != "" {
		then = "; " + then
	}
	fmt.Fprintf(e.Out, "%s: %s%s\n", why, state.ShownPath(p.Path), then)
}
