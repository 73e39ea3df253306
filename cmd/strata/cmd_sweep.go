package main

import (
	"os"
	"os/exec"

	"github.com/strata-dev/strata/engine"
	"github.com/urfave/cli/v2"
)

// sweepCommand is the hidden command a sync starts to free the files its
// checkouts replaced (engine.SweepFreed), as git starts `git gc --auto`:
// in a process of its own, so that the sync returns without waiting for
// the disk to take the freed blocks back.
const sweepCommand = "sweep-freed"

func newSweepCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:   sweepCommand,
		Usage:  "remove the replaced files a sync left in .git/strata/freed (started by sync)",
		Hidden: true,
		Action: func(*cli.Context) error {
			eng, err := open(e)
			if err != nil {
				return err
			}
			_, err = eng.SweepFreed()
			return err
		},
	}
}

// sweepLater frees what the checkouts of a sync left in the freed
// directory: in a detached strata process when this is one, else (run
// in-process, or no process can be started) here and now.
func sweepLater(e *env, eng *engine.Engine) {
	if !eng.HasFreed() {
		return
	}
	if e.exec != nil {
		if self, err := os.Executable(); err == nil {
			// argv[0] "strata": a test binary standing in for strata
			// (testscript) runs the command by that name
			cmd := &exec.Cmd{Path: self, Args: []string{"strata", sweepCommand}, Dir: eng.Root()}
			detach(cmd)
			if cmd.Start() == nil {
				cmd.Process.Release()
				return
			}
		}
	}
	eng.SweepFreed()
}
