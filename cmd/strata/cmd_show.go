package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-dev/strata/engine"
)

type showOptions struct {
	Path string
	At   string
	Rev  string
}

func pointFlags(at, rev *string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "at", Usage: "the version recorded at `T` (RFC 3339, or '2h ago')", Destination: at,
			Action: func(_ *cli.Context, v string) error { return nonEmptyTime("--at", v) }},
		&cli.StringFlag{Name: "rev", Usage: "the version in commit `R` (of refs/strata/state or your own branches)", Destination: rev,
			Action: func(_ *cli.Context, v string) error { return nonEmptyRev("--rev", v) }},
	}
}

func newShowCommand(e *env) *cli.Command {
	var o showOptions
	return &cli.Command{
		Name:        "show",
		Usage:       "print a kept file exactly as recorded",
		ArgsUsage:   "PATH",
		Description: "Prints the recorded bytes of PATH: the last recorded version, or the one at --at T or in --rev R.",
		Flags:       pointFlags(&o.At, &o.Rev),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("show takes exactly one PATH")
			}
			o.Path = c.Args().First()
			return runShow(e, o)
		},
	}
}

func runShow(e *env, o showOptions) error {
	p, err := parsePoint(e, o.At, o.Rev)
	if err != nil {
		return err
	}
	eng, err := openRead(e)
	if err != nil {
		return err
	}
	k, err := eng.ResolveRecorded(e.Dir, o.Path)
	if err != nil {
		return err
	}
	data, err := eng.Show(k.Path, p)
	var tl *engine.TooLargeError
	if errors.As(err, &tl) {
		// show prints only what strata reads, and it never holds a version
		// over max_size whole; git streams it
		return fmt.Errorf("%w (git cat-file blob %s prints it)", err, tl.Blob)
	}
	if err != nil {
		return err
	}
	_, err = e.Out.Write(data)
	return err
}
