package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

type forgetOptions struct {
	Paths  []string
	DryRun bool
	JSON   bool
	Remote string
}

func newForgetCommand(e *env) *cli.Command {
	var o forgetOptions
	return &cli.Command{
		Name:      "forget",
		Usage:     "take every version of a path out of the history no remote holds yet",
		ArgsUsage: "PATH...",
		Description: `Rewrites the commits of refs/strata/state that no remote has been seen to
hold (none of the refs/strata-remotes/*/state that sync fetched reaches them)
so that none brings a version of PATH: in each, PATH holds the version its
parent holds (for a merge with a remote's commit, the remote's), the PATH
lines of its message go, and a commit that recorded nothing else is dropped.
Every other path, message, author and time is kept. With --remote REMOTE,
only what REMOTE is known to hold counts as published (a version that only
another remote, or a removed one, holds is taken out too). Published commits are
never changed, so this is the way out when sync refuses to publish a path that
was made private (or is no longer kept) after a version of it was recorded,
and the way to take back a secret recorded before it was published. PATH may
be a file no rule keeps any more. The old history stays in the ref's reflog
(git reflog refs/strata/state) until git prunes it; the line printed says how
to put it back. Waits for a running sync and for records under way.
--dry-run prints what would change and writes nothing.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would change; write nothing", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document", Destination: &o.JSON},
			&cli.StringFlag{Name: "remote", Usage: "count as published only what `REMOTE` is known to hold (its tracking ref), not what other remotes hold", Destination: &o.Remote},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("forget needs at least one PATH")
			}
			o.Paths = c.Args().Slice()
			return runForget(c.Context, e, o)
		},
	}
}

func runForget(ctx context.Context, e *env, o forgetOptions) error {
	eng, err := open(e)
	if err != nil {
		return err
	}
	var paths []string
	var kept []string // named paths the rules still keep
	for _, a := range o.Paths {
		home := func() error {
			return usagef("forget %s: the auto-memory file's history is local and never published; forget works on the work tree's", a)
		}
		if strings.HasPrefix(a, "~") {
			return home()
		}
		k, err := eng.Resolve(e.Dir, a)
		var pe *engine.PathError
		switch {
		case err == nil:
			kept = append(kept, k.Path)
		case errors.As(err, &pe) && (errors.Is(err, engine.ErrNotKept) || errors.Is(err, engine.ErrBadName)):
			k.Path = pe.Path // recorded once, kept no more: what forget is for
			if err := state.CheckPath(k.Path); err != nil {
				// a name no ref can hold ("", ".", inside .git) was never
				// recorded: a usage error, as a path outside the work tree is
				if a == "" {
					return usagef("forget: an empty path")
				}
				return usagef("forget %s: %v", state.ShownPath(a), err)
			}
		default:
			return err
		}
		if strings.HasPrefix(k.Path, "~/") { // the auto-memory file named by its absolute path
			return home()
		}
		paths = append(paths, k.Path)
	}
	res, err := eng.ForgetUnpublished(ctx, paths, o.DryRun, o.Remote)
	printPushed(e, eng)
	printNotWritten(e, eng)
	for _, st := range res.Stale {
		fmt.Fprintf(e.Err, "strata: forget: could not fetch %s; what it holds counts as last fetched\n", state.TermSafe(st))
	}
	if eng.ReceivedPushes() {
		// this repository is another machine's sync remote: what that
		// machine fetched from here is published there, though no
		// tracking ref here says so (attack39 M1: its next sync gave the
		// forgotten file back, and the catch-up wrote it here again)
		fmt.Fprintf(e.Err, "strata: forget: this repository has received pushes (another machine syncs with it): what that machine fetched from here is published there, and its next sync brings it back; forget it there too (strata forget on that machine), then sync\n")
	}
	quoted, words := make([]string, len(paths)), make([]string, len(paths))
	for i, p := range paths {
		quoted[i], words[i] = state.ShownPath(p), state.ShellWord(p)
	}
	names := strings.Join(quoted, ", ")
	switch {
	case errors.Is(err, state.ErrUnchanged):
		if o.JSON {
			return writeJSON(e.Out, forgetJSON{Forgotten: res, Changed: false})
		}
		fmt.Fprintf(e.Out, "nothing to forget: no unpublished commit of %s brings a version of %s (a version a remote holds cannot be taken back)\n", eng.StateRef(), names)
		if o.Remote == "" {
			fmt.Fprintf(e.Out, "note: a commit any remote's tracking ref reaches counts as published; when sync to one remote refuses a version only another (or a removed) remote holds: strata forget %s --remote REMOTE\n", strings.Join(words, " "))
		}
		return nil
	case errors.Is(err, gitstore.ErrNothingLeft) && o.Remote != "":
		// another remote holds versions of it, this one none: nothing
		// could be sent to this one but the version refused
		publish := make([]string, len(words)) // git config --add takes one value a call
		for i, w := range words {
			publish[i] = "git config --add strata.keepPrivate " + w
		}
		them := "it"
		if len(paths) > 1 {
			them = "them"
		}
		fmt.Fprintf(e.Err, "strata: forget %s --remote %s: every commit of %s recorded only %s and %s holds none of them, so nothing would be left to send it; nothing was changed (to publish the versions anyway: %s; or do not sync with %s)\n",
			names, state.ShellWord(o.Remote), eng.StateRef(), them, state.TermSafe(o.Remote), strings.Join(publish, "; "), state.ShellWord(o.Remote))
		return errReported
	case errors.Is(err, gitstore.ErrNothingLeft):
		fmt.Fprintf(e.Err, "strata: forget %s: every commit of %s recorded only it and no remote holds one; nothing was changed (remove the ref with git update-ref -d %s to start over)\n",
			names, eng.StateRef(), eng.StateRef())
		return errReported
	case errors.Is(err, gitstore.ErrUnderFile):
		return usagef("%v", err)
	case err != nil:
		return err
	}
	if o.JSON {
		return writeJSON(e.Out, forgetJSON{Forgotten: res, Changed: !o.DryRun})
	}
	verb := "forgot"
	if o.DryRun {
		verb = "would forget"
	}
	fmt.Fprintf(e.Out, "%s %s: of the unpublished commits %d rewritten, %d dropped, %d unchanged\n",
		verb, names, len(res.Rewritten), len(res.Dropped), res.Kept)
	if o.DryRun {
		return nil
	}
	fmt.Fprintf(e.Out, "%s moved from %s to %s; to put the old history back: git update-ref %s %s %s\n",
		eng.StateRef(), state.ShortID(res.Old), state.ShortID(res.New), eng.StateRef(), res.Old, res.New)
	for _, p := range kept {
		fmt.Fprintf(e.Out, "note: %s is still kept: its file is recorded again at the next record (stop keeping it in .strata.yaml, or edit it first)\n", state.ShownPath(p))
	}
	return nil
}

type forgetJSON struct {
	engine.Forgotten
	Changed bool `json:"changed"`
}
