package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// buildVersion is set by the Makefile with -ldflags "-X main.buildVersion=...".
var buildVersion = ""

func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print strata's version",
		Action: func(*cli.Context) error {
			fmt.Fprintf(e.Out, "strata %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
