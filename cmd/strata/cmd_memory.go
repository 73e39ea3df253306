package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/markdown"
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
item with the same text is not added twice. The file is written atomically
and recorded on refs/strata/state.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "section", Value: "Learnings", Usage: "heading to add under", Destination: &o.Section},
				},
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

// memoryFile opens the repository and reads its L2 file.
func memoryFile(e *env) (*engine.Engine, engine.File, error) {
	eng, err := open(e)
	if err != nil {
		return nil, engine.File{}, err
	}
	cfg := eng.Config()
	k, ok := cfg.Classify(cfg.Memory)
	if !ok {
		return nil, engine.File{}, fmt.Errorf("%s: the memory file is not a kept path", cfg.Memory)
	}
	f, p := eng.Read(k)
	if p != nil {
		return nil, f, state.Problems{*p}
	}
	return eng, f, nil
}

type memoryShowJSON struct {
	Path     string             `json:"path"`
	Exists   bool               `json:"exists"`
	Lines    int                `json:"lines"`
	Bytes    int                `json:"bytes"`
	Sections []markdown.Section `json:"sections"`
	Warnings []markdown.Warning `json:"warnings,omitempty"`
}

func runMemoryShow(e *env, o memoryOptions) error {
	_, f, err := memoryFile(e)
	if err != nil {
		return err
	}
	d, err := markdown.Parse(f.Content)
	if err != nil {
		return err
	}
	out := memoryShowJSON{Path: f.Path, Exists: f.Exists, Lines: d.Lines(), Bytes: len(f.Content), Sections: d.Sections(), Warnings: d.Warnings()}
	if out.Sections == nil {
		out.Sections = []markdown.Section{}
	}
	if o.JSON {
		return writeJSON(e.Out, out)
	}
	if !f.Exists {
		fmt.Fprintf(e.Out, "%s: no such file (strata memory add creates it)\n", f.Path)
		return nil
	}
	fmt.Fprintf(e.Out, "%s: %d lines, %d bytes\n", f.Path, out.Lines, out.Bytes)
	for _, s := range out.Sections {
		fmt.Fprintf(e.Out, "%s%s %s  (lines %d-%d)\n", strings.Repeat("  ", len(s.Path)-1), strings.Repeat("#", s.Level), strings.Join(s.Path, " > "), s.StartLine, s.EndLine)
		for _, it := range s.Items {
			fmt.Fprintf(e.Out, "%s  - %s\n", strings.Repeat("  ", len(s.Path)-1), strings.ReplaceAll(it.Text, "\n", " "))
		}
	}
	return nil
}

func runMemoryAdd(e *env, o memoryOptions) error {
	if strings.TrimSpace(o.Text) == "" {
		return usagef("memory add: TEXT is empty")
	}
	if markdown.CleanHeading(o.Section) == "" {
		return usagef("memory add: --section is empty")
	}
	eng, f, err := memoryFile(e)
	if err != nil {
		return err
	}
	if f.Exists { // record edits made by hand first, so the add is its own change
		if _, err := eng.Record([]config.Kept{f.Kept}, state.SourceRecord); err != nil {
			return err
		}
	}
	data, changed, err := markdown.AddItem(f.Content, o.Section, 0, o.Text)
	if errors.Is(err, markdown.ErrUnsafe) {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(e.Out, "already in %s under %q\n", f.Path, markdown.CleanHeading(o.Section))
		return nil
	}
	out, err := eng.Put(f.Kept, data, state.SourceRecord)
	if err != nil {
		return err
	}
	if !out.Written {
		return out.Problems
	}
	fmt.Fprintf(e.Out, "added to %s under %q", f.Path, markdown.CleanHeading(o.Section))
	if out.Entry != nil {
		fmt.Fprintf(e.Out, " (%s)", state.ShortID(out.Entry.Commit))
	}
	fmt.Fprintln(e.Out)
	return nil
}

func runMemoryLint(e *env, o memoryOptions) error {
	eng, f, err := memoryFile(e)
	if err != nil {
		return err
	}
	problems := state.Problems{}
	if f.Exists {
		problems = append(problems, eng.ValidateContent(f.Path, f.Content, f.Schema)...)
		if !problems.Invalid() {
			d, err := markdown.Parse(f.Content)
			if err != nil {
				problems = append(problems, state.Problem{Path: f.Path, Message: err.Error()})
			} else {
				for _, w := range d.Warnings() {
					problems = append(problems, state.Problem{Path: f.Path, Line: w.Line, Message: w.Message, Warning: true})
				}
			}
		}
	}
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
			fmt.Fprintf(e.Out, "%s: no such file\n", f.Path)
		case len(problems) == 0:
			fmt.Fprintf(e.Out, "%s: ok\n", f.Path)
		}
	}
	if problems.Invalid() {
		return errReported
	}
	return nil
}
