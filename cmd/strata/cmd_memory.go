package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type memoryOptions struct {
	JSON    bool
	Section string
	Text    string
}

func newMemoryCommand(e *env) *cli.Command {
	var o memoryOptions
	jsonFlag := func() cli.Flag {
		return &cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON}
	}
	return &cli.Command{
		Name:  "memory",
		Usage: "read and edit the L2 memory file (MEMORY.md)",
		Description: `The L2 file is the first that exists of .claude/memory/MEMORY.md,
.claude/MEMORY.md, MEMORY.md and Claude Code's auto-memory file for this
repository (~/.claude/projects/<key>/memory/MEMORY.md), or "memory:" in
.strata.yaml. Edits change only the lines they add or remove.`,
		Subcommands: []*cli.Command{
			{
				Name:   "show",
				Usage:  "list the sections (heading path, level, lines) and their list items",
				Flags:  []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error { return runMemoryShow(e, o) },
			},
			{
				Name:      "add",
				Usage:     "add a learning as a list item under a section, once",
				ArgsUsage: "TEXT",
				Description: `Adds "- TEXT" as the last item under the heading (--section, default
Learnings), creating "## Learnings" at the end of the file when missing. An
item with the same text is not added twice. TEXT is written as one line of
text, as the write protocol's lines are: white space becomes one space, a
control or format character its escape (\x1b, \u202e); a --section holding
one is refused. The file is written atomically and recorded on
refs/strata/state. A TEXT that starts with - goes after --:
strata memory add -- '- use uv'.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "section", Value: "Learnings", Usage: "heading to add under", Destination: &o.Section},
				},
				OnUsageError: func(c *cli.Context, err error, _ bool) error { return textTakenForFlag(c, err) },
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return usagef("memory add needs TEXT")
					}
					o.Text = strings.Join(c.Args().Slice(), " ")
					return runMemoryAdd(e, o)
				},
			},
			{
				Name:  "lint",
				Usage: "report parse problems, and warnings past 200 lines or 25 KB (what Claude Code loads)",
				Description: `Exit 1 only on errors (not UTF-8, unreadable); warnings (too long, an
unclosed code fence, a repeated heading) exit 0.`,
				Flags:  []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error { return runMemoryLint(e, o) },
			},
		},
	}
}

// textTakenForFlag words memory add's unknown flag: a learning often starts
// with "-" ("- use uv", "--dry-run is useful"), which the flag parser takes
// for a flag. It names the argument as typed and says to put -- before it;
// nil when the error is another one (finishCommand words those).
func textTakenForFlag(c *cli.Context, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	lineage := c.Lineage() // the memory command's context holds "add" and the arguments as typed
	if !ok || len(lineage) < 2 {
		return nil
	}
	name = strings.TrimLeft(name, "-")
	for _, a := range lineage[1].Args().Slice() {
		if typed, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && typed == name {
			return usagef("memory add: unknown flag %s; put -- before a TEXT that starts with -: strata memory add -- %s", state.ShellWord(a), state.ShellWord(a))
		}
	}
	return nil
}

// memoryFile opens the repository and reads its L2 file.
func memoryFile(e *env) (*layers.Agent, engine.File, error) {
	eng, err := open(e)
	if err != nil {
		return nil, engine.File{}, err
	}
	a := layers.New(eng, nil)
	f, err := a.MemoryFile()
	if err != nil {
		return nil, f, err
	}
	return a, f, nil
}

type memoryShowJSON struct {
	Path     string                 `json:"path"`
	Exists   bool                   `json:"exists"`
	Lines    int                    `json:"lines"`
	Bytes    int                    `json:"bytes"`
	Sections []layers.Section       `json:"sections"`
	Warnings []layers.MemoryWarning `json:"warnings,omitempty"`
}

func runMemoryShow(e *env, o memoryOptions) error {
	_, f, err := memoryFile(e)
	if err != nil {
		return err
	}
	d, err := layers.MemoryOutline(f.Content)
	if err != nil {
		return err
	}
	out := memoryShowJSON{Path: f.Path, Exists: f.Exists, Lines: d.Lines, Bytes: len(f.Content), Sections: d.Sections, Warnings: d.Warnings}
	if out.Sections == nil {
		out.Sections = []layers.Section{}
	}
	if o.JSON {
		return writeJSON(e.Out, out)
	}
	if !f.Exists {
		fmt.Fprintf(e.Out, "%s: no such file (strata memory add creates it)\n", state.ShownPath(f.Path))
		return nil
	}
	fmt.Fprintf(e.Out, "%s: %d lines, %d bytes\n", state.ShownPath(f.Path), out.Lines, out.Bytes)
	for _, s := range out.Sections {
		// Headings and items may come from another machine (sync): quoted
		// when a terminal would act on them.
		fmt.Fprintf(e.Out, "%s%s %s  (lines %d-%d)\n", strings.Repeat("  ", len(s.Path)-1), strings.Repeat("#", s.Level), state.TermSafe(strings.Join(s.Path, " > ")), s.StartLine, s.EndLine)
		for _, it := range s.Items {
			fmt.Fprintf(e.Out, "%s  - %s\n", strings.Repeat("  ", len(s.Path)-1), state.TermSafe(strings.ReplaceAll(it.Text, "\n", " ")))
		}
	}
	return nil
}

func runMemoryAdd(e *env, o memoryOptions) error {
	if strings.TrimSpace(o.Text) == "" {
		return usagef("memory add: TEXT is empty")
	}
	if !utf8.ValidString(o.Text) || !utf8.ValidString(o.Section) {
		// said of the argument, not of the file it would have gone into
		return usagef("memory add: TEXT or --section is not valid UTF-8")
	}
	if layers.CleanHeading(o.Section) == "" {
		return usagef("memory add: --section is empty")
	}
	if strings.ContainsAny(o.Section, "\r\n\u2028\u2029") {
		// U+2028 and U+2029 too: an editor, JavaScript or an agent's
		// context breaks the line there (attack33b F7)
		return usagef("memory add: --section is one heading, on one line")
	}
	if q := state.TermSafe(o.Section); q != o.Section {
		// refused, not escaped as TEXT is: the heading is a name matched
		// against the file's headings, and an escaped one would match a
		// heading the user typed as those letters (attack33 L1)
		return usagef("memory add: --section %s holds a control or format character; a heading is plain text", q)
	}
	a, f, err := memoryFile(e)
	if err != nil {
		return err
	}
	added, out, err := a.AddLearning(f, o.Section, o.Text)
	if err != nil {
		return err
	}
	if !added {
		fmt.Fprintf(e.Out, "already in %s under %q\n", state.ShownPath(f.Path), layers.CleanHeading(o.Section))
		return nil
	}
	fmt.Fprintf(e.Out, "added to %s under %q", state.ShownPath(f.Path), layers.CleanHeading(o.Section))
	if out.Entry != nil {
		fmt.Fprintf(e.Out, " (%s)", state.ShortID(out.Entry.Commit))
	}
	fmt.Fprintln(e.Out)
	return nil
}

func runMemoryLint(e *env, o memoryOptions) error {
	a, f, err := memoryFile(e)
	if err != nil {
		return err
	}
	problems := a.LintMemory(f)
	if o.JSON {
		if err := writeJSON(e.Out, struct {
			Path     string         `json:"path"`
			Exists   bool           `json:"exists"`
			Valid    bool           `json:"valid"`
			Problems state.Problems `json:"problems"`
		}{f.Path, f.Exists, !problems.Invalid(), problems}); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintln(e.Out, p.Error())
		}
		switch {
		case !f.Exists:
			fmt.Fprintf(e.Out, "%s: no such file\n", state.ShownPath(f.Path))
		case len(problems) == 0:
			fmt.Fprintf(e.Out, "%s: ok\n", state.ShownPath(f.Path))
		}
	}
	if problems.Invalid() {
		return errReported
	}
	return nil
}
