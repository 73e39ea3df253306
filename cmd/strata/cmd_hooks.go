package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/hooks"
)

func newHooksCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or run strata's git pre-commit, pre-merge-commit and pre-applypatch hooks",
		Description: `install puts a pre-commit hook, a pre-merge-commit hook for the merges git
commits by itself and a pre-applypatch hook for the commits git am makes, in
the hooks directory git uses (core.hooksPath when set). A hook that was there
is moved to NAME.strata-chained and run first; uninstall puts it back byte
for byte. Both are idempotent. Both refuse (exit 3), changing nothing, a
strata hook someone edited, and a hook file git tracks (a committed
.githooks/pre-commit: add strata hooks run pre-commit to it in a commit);
install also refuses a hook that reads its own name ($0: renamed, it could
run nothing) and the pre-commit framework's (add strata-pre-commit to
.pre-commit-config.yaml).
run pre-commit (or pre-merge-commit, or pre-applypatch) is what each hook
calls: it checks the staged blobs of kept files (not the work tree) and exits
1, refusing the commit, when one is invalid.`,
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "install the pre-commit, pre-merge-commit and pre-applypatch hooks, chaining existing ones",
				Action: func(c *cli.Context) error {
					if c.NArg() != 0 {
						return usagef("hooks install takes no arguments")
					}
					return runHooksInstall(e)
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove the hooks and restore the ones they chained",
				Action: func(c *cli.Context) error {
					if c.NArg() != 0 {
						return usagef("hooks uninstall takes no arguments")
					}
					return runHooksUninstall(e)
				},
			},
			{
				Name:      "run",
				Usage:     "run a hook's check (what the installed hook calls)",
				ArgsUsage: strings.Join(hooks.Hooks, " | "),
				Description: `Checks what the next commit does to kept files: the staged blobs of the
index git hands the hook (GIT_INDEX_FILE), compared with HEAD (and each
MERGE_HEAD commit while a merge is concluded). Schema errors, initiative
transitions allowed from no parent's status, and changes to or deletions of
committed Phase Outcomes and decision resolutions are refused. .strata.yaml,
schema files and the Phase Outcome a resolution names are read from that
index too (an untracked .strata.yaml, local configuration, applies). Nothing
is recorded on strata's refs.

--framework is for the pre-commit framework's hook (.pre-commit-hooks.yaml,
strata-pre-commit), which a team shares through its config: in a repository
strata cannot read (SHA-256, reftable, a $GIT_OBJECT_DIRECTORY it refuses)
it says so in one line and lets the commit through, as the Claude Code hook
does, where strata's own hook refuses the commit.`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "framework", Usage: "run as the pre-commit framework's hook: a repository strata cannot read lets the commit through, with one line"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 || !slices.Contains(hooks.Hooks, c.Args().First()) {
						return usagef("hooks run takes one hook name: %s", strings.Join(hooks.Hooks, " or "))
					}
					return runHooksPreCommit(e, c.Bool("framework"))
				},
			},
		},
	}
}

func runHooksInstall(e *env) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	root := eng.Root()
	all, err := hooks.Install(root, hooks.Executable())
	if err != nil {
		return err
	}
	for _, res := range all {
		under := ""
		if res.UnderFramework {
			under = fmt.Sprintf(" (the pre-commit framework's %s hook runs it)", res.Name)
		}
		if !res.Changed {
			fmt.Fprintf(e.Out, "%s hook already installed in %s%s\n", res.Name, relName(root, res.Hook), under)
			continue
		}
		fmt.Fprintf(e.Out, "installed %s hook in %s%s\n", res.Name, relName(root, res.Hook), under)
		if res.Chained != "" && !res.UnderFramework {
			fmt.Fprintf(e.Out, "it runs the existing hook first, now %s\n", relName(root, res.Chained))
		}
	}
	return nil
}

func runHooksUninstall(e *env) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	root := eng.Root()
	all, err := hooks.Uninstall(root)
	if err != nil {
		return err
	}
	for _, res := range all {
		switch {
		case !res.Changed:
			fmt.Fprintf(e.Out, "strata's %s hook is not installed in %s\n", res.Name, relName(root, res.Hook))
		case res.Restored:
			fmt.Fprintf(e.Out, "removed strata's %s hook; restored the previous hook in %s\n", res.Name, relName(root, res.Hook))
		default:
			fmt.Fprintf(e.Out, "removed strata's %s hook from %s\n", res.Name, relName(root, res.Hook))
		}
		switch {
		case res.Dropped != "":
			fmt.Fprintf(e.Out, "deleted %s, a copy of the pre-commit framework's hook that strata had chained (put back, it would run itself)\n", relName(root, res.Dropped))
		case res.Left != "":
			fmt.Fprintf(e.Out, "left %s, an older pre-commit framework hook that strata had chained, where it is (put back, it would run itself); delete it when you do not need it\n", relName(root, res.Left))
		}
	}
	return nil
}

// runHooksPreCommit is the check the installed hook runs. git runs hooks at
// the work-tree root and names the index of the commit in GIT_INDEX_FILE
// (a temporary index for `git commit -a` or `git commit PATH`).
func runHooksPreCommit(e *env, framework bool) error {
	indexFile := os.Getenv("GIT_INDEX_FILE")
	if indexFile != "" {
		var err error
		if indexFile, err = filepath.Abs(indexFile); err != nil {
			return err
		}
	}
	e.hook = true
	eng, err := engine.OpenIndex(e.Dir, indexFile, e.storeOptions())
	if framework && sharedHookPasses(e, err) {
		return nil
	}
	if err != nil {
		return err
	}
	eng.Now = e.Now
	rep, err := hooks.PreCommit(eng)
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(e.Err, p.Error())
	}
	if rep.Invalid > 0 {
		fmt.Fprintf(e.Err, "strata: commit refused: %d of %d staged state files invalid; fix them and stage them again\n", rep.Invalid, rep.Checked)
		return errReported
	}
	return nil
}

// relName names a file relative to the work-tree root when it is inside it.
func relName(root, name string) string {
	if r, err := filepath.Rel(root, name); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return name
}
