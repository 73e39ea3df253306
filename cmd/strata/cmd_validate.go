package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

type validateOptions struct {
	Paths      []string
	JSON       bool
	Hook       bool
	SkipUnkept bool
}

func newValidateCommand(e *env) *cli.Command {
	var o validateOptions
	return &cli.Command{
		Name:      "validate",
		Usage:     "check kept files against their schemas and rules",
		ArgsUsage: "[PATH...]",
		Description: `Checks every kept file, or the given ones, and prints each problem as
PATH:LINE:COL: POINTER: message. A named path that strata does not keep (or
refuses: absolute, outside the work tree) is an error, exit 2 — unless
--skip-unkept, which skips it with a note (the pre-commit framework's entry
uses it). Exit 1 when anything is invalid; a symbolic link at a kept path,
or a kept file whose folder is a link out of the work tree or into .git, is
never followed and counts as an invalid file ("PATH: /: is a symbolic link;
not followed").

With --hook, strata is Claude Code's PostToolUse hook: it reads the hook's JSON
on stdin and checks tool_input.file_path when it is a kept file; exit 2 with
the problems on stderr (which Claude Code shows the agent) when it is invalid,
exit 0 otherwise, also when stdin is not hook JSON (a one-line warning).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
			&cli.BoolFlag{Name: "skip-unkept", Usage: "skip named paths that strata does not keep, with a note, instead of failing (for the pre-commit framework, which names every staged file its pattern matches)", Destination: &o.SkipUnkept},
			&cli.BoolFlag{Name: "hook", Usage: "read Claude Code's PostToolUse hook JSON on stdin; exit 2 when the written file is invalid", Destination: &o.Hook},
		},
		Action: func(c *cli.Context) error {
			o.Paths = c.Args().Slice()
			if o.Hook {
				if len(o.Paths) > 0 || o.JSON {
					return usagef("validate --hook reads the file to check from stdin; it takes no PATH and no --json")
				}
				return runValidateHook(e)
			}
			return runValidate(e, o)
		},
	}
}

// sharedHookPasses reports whether err, opening the repository for a hook
// the pre-commit framework runs (validate --skip-unkept, hooks run
// --framework), is a repository strata cannot read (SHA-256, reftable, a
// $GIT_OBJECT_DIRECTORY it refuses), and then says so in one line: such a
// hook is shared by a team through the repository's config, and lets the
// commit through, as the Claude Code hook does, rather than refuse every
// commit.
func sharedHookPasses(e *env, err error) bool {
	if fe := (*gitstore.FormatError)(nil); !errors.As(err, &fe) {
		return false
	}
	fmt.Fprintf(e.Err, "strata: %s; nothing checked\n", strings.TrimSuffix(err.Error(), "; nothing was written"))
	return true
}

type validatedFile struct {
	Path     string         `json:"path"`
	Class    state.Class    `json:"class"`
	Schema   string         `json:"schema"`
	Valid    bool           `json:"valid"`
	Problems state.Problems `json:"problems"`
}

func runValidate(e *env, o validateOptions) error {
	eng, err := openRead(e)
	if o.SkipUnkept && sharedHookPasses(e, err) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept []engine.Kept
	var badNames state.Problems
	if len(o.Paths) == 0 {
		if kept, err = eng.AllPaths(); err != nil {
			return err
		}
		if badNames, err = eng.BadNames(); err != nil {
			return err
		}
	} else {
		refused := 0
		for _, a := range o.Paths {
			k, err := eng.Resolve(e.Dir, a)
			if p, bad := engine.BadNameOf(err); bad {
				badNames = append(badNames, p)
				continue
			}
			if err != nil {
				if o.SkipUnkept {
					fmt.Fprintf(e.Err, "strata: %s; skipped\n", err)
				} else {
					fmt.Fprintf(e.Err, "strata: %s\n", err)
					refused++
				}
				continue
			}
			kept = append(kept, k)
		}
		if refused > 0 {
			// A named path that is not checked is not a pass.
			return errUsageReported
		}
	}
	results, err := eng.Validate(kept, len(o.Paths) > 0)
	if err != nil {
		return err
	}
	files := make([]validatedFile, 0, len(results))
	invalid := 0
	for _, r := range results {
		vf := validatedFile{Path: r.Path, Class: r.Class, Schema: r.Schema, Valid: !r.Problems.Invalid(), Problems: r.Problems}
		if vf.Problems == nil {
			vf.Problems = state.Problems{}
		}
		if !vf.Valid {
			invalid++
		}
		files = append(files, vf)
	}
	for _, p := range badNames {
		files = append(files, validatedFile{Path: p.Path, Problems: state.Problems{p}})
		invalid++
	}
	if o.JSON {
		if err := writeJSON(e.Out, map[string]any{"valid": invalid == 0, "files": files}); err != nil {
			return err
		}
	} else {
		for _, f := range files {
			for _, p := range f.Problems {
				fmt.Fprintln(e.Out, p.Error())
			}
		}
		fmt.Fprintf(e.Err, "%s checked, %d invalid\n", plural(len(files), "file"), invalid)
	}
	if invalid > 0 {
		return errReported
	}
	return nil
}
