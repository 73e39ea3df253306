package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

type schemaInferOptions struct {
	Globs  []string
	Output string
	Apply  bool
}

func newSchemaInferCommand(e *env) *cli.Command {
	var o schemaInferOptions
	return &cli.Command{
		Name:      "infer",
		Usage:     "draft a JSON Schema that accepts every version of the matching files",
		ArgsUsage: "GLOB...",
		Description: `Reads every version of the files matching the globs (repository-relative,
path.Match syntax per segment): the work tree's, every one recorded on
refs/strata/state and every one quarantined on refs/strata/rejected. Writes a
draft 2020-12 JSON Schema that accepts all of them: the types seen, as
required the keys present in every version, enums for small closed sets of
strings, format date-time where every value is one, array item schemas,
additionalProperties left open, and a $comment counting files and versions.
Versions that do not parse are skipped with a note. The schema is checked
against every version before it is written.

Without -o the schema goes to stdout. --apply (with -o FILE.json inside the
work tree) adds {glob, schema: FILE} as the first rule of .strata.yaml for
each glob, keeping the file's comments, and validates the matching files,
those skipped because they do not parse included (exit 1 if one fails); a
matching file strata withholds as private (one git does not track, which
only a rule of .strata.yaml would keep, or one git ignores) is named with
the command that keeps it, not validated. When a rule added reaches a
built-in state file (.claude/workflow-state.json, initiative.json,
interview-state.json, delegation-log.json), one warning line on stderr says
so: under a schema of your own the file is in its own shape, and strata no
longer interprets it (resume, the TTL, the MEMORY.md line, resolve).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the schema to `FILE` (missing folders are created)", Destination: &o.Output},
			&cli.BoolFlag{Name: "apply", Usage: "add the rule to .strata.yaml and validate the files (needs -o)", Destination: &o.Apply},
		},
		Action: func(c *cli.Context) error {
			o.Globs = c.Args().Slice()
			return runSchemaInfer(e, o)
		},
	}
}

func runSchemaInfer(e *env, o schemaInferOptions) error {
	if len(o.Globs) == 0 {
		return usagef("schema infer takes at least one GLOB")
	}
	if o.Apply && o.Output == "" {
		return usagef("schema infer --apply needs -o FILE.json: the rule names the schema file")
	}
	eng, err := open(e)
	if err != nil {
		return err
	}
	root := eng.Root()
	var out, rel string
	if o.Output != "" {
		out = o.Output
		if !filepath.IsAbs(out) {
			out = filepath.Join(e.Dir, out)
		}
		if r, err := filepath.Rel(root, out); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			rel = filepath.ToSlash(r)
		}
		if o.Apply && (rel == "" || !strings.HasSuffix(rel, ".json")) {
			return usagef("schema infer --apply: -o %s must be a .json file inside the work tree", o.Output)
		}
		if o.Apply { // the rule will name it: checked as .strata.yaml checks it, before it is written
			if err := state.CheckPath(rel); err != nil {
				return usagef("schema infer --apply: -o %s: %v", o.Output, err)
			}
			if err := eng.CheckWritable(rel); err != nil {
				return err
			}
		}
	}
	globs := make([]string, len(o.Globs))
	for i, g := range o.Globs {
		globs[i] = cwdGlob(root, e.Dir, g)
	}
	inf, err := eng.InferSchema(globs)
	if err != nil {
		return err
	}
	for _, sk := range inf.Skipped {
		fmt.Fprintf(e.Err, "skipped %s\n", sk)
	}
	if inf.Versions == 0 {
		return usagef("schema infer: no readable file or recorded version matches %s", strings.Join(globs, " "))
	}
	counts := fmt.Sprintf("%d %s, %d %s", inf.Files, engine.Plural(inf.Files, "file", "files"), inf.Versions, engine.Plural(inf.Versions, "version", "versions"))
	if out == "" {
		_, err := e.Out.Write(inf.Schema)
		fmt.Fprintf(e.Err, "inferred from %s\n", counts)
		return err
	}
	// The rules are planned before the schema is written: when .strata.yaml
	// cannot take them, neither file is written.
	var edit *engine.RuleEdit
	lines := make([]string, len(globs))
	if o.Apply && int64(len(inf.Schema)) > eng.Config().MaxSize {
		// the rule would name a schema strata does not read: every file
		// under it invalid
		fmt.Fprintf(e.Err, "strata: the inferred schema is %d bytes, over max_size (%d), the largest schema file strata reads; nothing written: infer it from fewer or smaller files, or raise max_size in %s\n", len(inf.Schema), eng.Config().MaxSize, engine.ConfigFile)
		return errReported
	}
	if o.Apply {
		for i, g := range globs { // YAML holds only UTF-8: a rule naming another file is never written
			if lines[i], err = engine.RuleLine(g, rel); err != nil {
				return usagef("schema infer --apply: %v (nothing written)", err)
			}
		}
		if edit, err = engine.PlanRules(root, globs, rel); err != nil {
			return err
		}
	}
	if err := engine.WriteOutput(out, inf.Schema, engine.UserMode); err != nil {
		return fmt.Errorf("write %s: %w", o.Output, err)
	}
	fmt.Fprintf(e.Out, "wrote %s (from %s)\n", o.Output, counts)
	if !o.Apply {
		return nil
	}
	wasForeign := layers.ForeignL1(eng.Config())
	if err := edit.Write(); err != nil {
		return err
	}
	for i := range globs {
		if edit.Added[i] {
			fmt.Fprintf(e.Out, "added to %s: %s\n", engine.ConfigFile, lines[i])
		} else {
			fmt.Fprintf(e.Out, "%s already has %s\n", engine.ConfigFile, lines[i])
		}
	}
	ve := *e
	ve.Dir = root
	after, err := open(&ve)
	if err != nil {
		return err
	}
	warnForeign(e, wasForeign, layers.ForeignL1(after.Config()))
	var paths []string
	for _, p := range inf.Paths {
		if !strings.HasPrefix(p, "~") {
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
				paths = append(paths, p)
			}
		}
	}
	// A file the new rule matches but strata withholds as private (git
	// does not track it and only this rule keeps it, or git ignores it) is
	// not kept until the user's git configuration keeps it: said, not
	// validated (attack25 K4).
	if len(paths) > 0 {
		slices.Sort(paths)
		kept := paths[:0]
		for _, p := range paths {
			if _, ok := after.Config().Classify(p); !ok {
				if why := after.Config().Private(p); why != "" {
					printPrivate(e, engine.Private{Path: p, Reason: why})
					continue
				}
			}
			kept = append(kept, p)
		}
		paths = kept
	}
	if len(paths) == 0 {
		return nil
	}
	fmt.Fprintln(e.Out, "strata validate now says:")
	return runValidate(&ve, validateOptions{Paths: paths})
}

// warnForeign says, in one line on stderr, which built-in state files the
// rules just added put in a shape of the user's own: strata stops
// interpreting them, and a draft inferred from a rejected version accepts
// its bad value (attack37c H2).
func warnForeign(e *env, before, after []string) {
	var now []string
	for _, p := range after {
		if !slices.Contains(before, p) {
			now = append(now, state.ShownPath(p))
		}
	}
	if len(now) == 0 {
		return
	}
	what, it := now[0]+" is a built-in state file", "it"
	if len(now) > 1 {
		what, it = strings.Join(now, ", ")+" are built-in state files", "them"
	}
	fmt.Fprintf(e.Err, "strata: warning: %s, now under a schema of your own: strata no longer interprets %s (resume, the TTL, the MEMORY.md line, resolve); to undo, remove the rule from %s\n", what, it, engine.ConfigFile)
}

// cwdGlob makes a glob given relative to the current directory relative to
// the work tree's root, as paths are named everywhere else.
func cwdGlob(root, cwd, g string) string {
	if filepath.IsAbs(g) {
		return g // refused by Examples
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	if r, err := filepath.Rel(root, cwd); err == nil && r != "." && r != ".." && !strings.HasPrefix(r, "../") {
		return path.Join(filepath.ToSlash(r), g)
	}
	return g
}
