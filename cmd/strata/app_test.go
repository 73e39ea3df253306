package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// commandTable names each command by the name it has: newAppOf finds the
// one a command line names by that name.
func TestCommandTableNames(t *testing.T) {
	app := newApp(&env{})
	if len(app.Commands) != len(commandTable) {
		t.Fatalf("%d commands, %d in the table", len(app.Commands), len(commandTable))
	}
	for i, c := range commandTable {
		if got := app.Commands[i].Name; got != c.name {
			t.Errorf("commandTable[%d] is %q, builds %q", i, c.name, got)
		}
	}
}

// A command line run on the CLI that run builds for it (only the command
// it names, when it names one) prints and exits as it does on the CLI with
// every command: help pages, flag mistakes, a subcommand's help, global
// flags and strata's help flag before the command.
func TestOneCommandAppSame(t *testing.T) {
	dir := t.TempDir()
	for _, c := range commandTable {
		for _, args := range [][]string{
			{c.name, "--help"},
			{c.name, "-h"},
			{c.name, "--no-such-flag"},
			{"-C", dir, c.name, "--help"},
			{"-C=" + dir, c.name, "--help"},
			{"-C", "/no/such/dir", c.name},
			{c.name, "no-such-subcommand", "--help"},
			{c.name, ".claude/x.json", "--help"},
			{c.name, "a", "b", "-h"},
			{"-h", c.name},
			{"--help", c.name},
			{"-C", dir, "--help", c.name},
		} {
			argv := append([]string{"strata"}, args...)
			name := commandName(argv)
			if name != c.name {
				t.Fatalf("commandName(%q) = %q, want %q", argv, name, c.name)
			}
			var want [3]string
			for k, one := range []bool{false, true} {
				var out, errb strings.Builder
				e := &env{In: strings.NewReader(""), Out: &out, Err: &errb, Dir: dir, Now: func() time.Time { return time.Unix(1700000000, 0) }, catchSignals: func() {}}
				app := newApp(e)
				if one {
					app = newAppOf(e, name)
					if name != "help" && len(app.Commands) != 1 {
						t.Fatalf("%s: the app for one command has %d", name, len(app.Commands))
					}
				}
				code := runApp(context.Background(), app, argv, e)
				got := [3]string{out.String(), errb.String(), strconv.Itoa(code)}
				if k == 0 {
					want = got
					if (slices.Contains(args, "--help") || slices.Contains(args, "-h")) && !strings.Contains(got[0], "USAGE:") {
						t.Fatalf("strata %s: no help page: %q", strings.Join(args, " "), got[0])
					}
				} else if got != want {
					t.Errorf("strata %s:\n  every command: exit %s, stdout %q, stderr %q\n  as run builds it: exit %s, stdout %q, stderr %q",
						strings.Join(args, " "), want[2], want[0], want[1], got[2], got[0], got[1])
				}
			}
		}
	}
}

// commandName finds the command after strata's own flags.
func TestCommandName(t *testing.T) {
	for args, want := range map[string]string{
		"show x --at T":     "show",
		"-C d show x":       "show",
		"-C=d show":         "show",
		"--C d show":        "show",
		"-h show":           "show",
		"--help show":       "show",
		"-C d --help show":  "show",
		"-- show":           "",
		"":                  "",
		"-C":                "",
		"nosuch --help":     "nosuch",
		"version --no-flag": "version",
	} {
		if got := commandName(append([]string{"strata"}, strings.Fields(args)...)); got != want {
			t.Errorf("commandName(strata %s) = %q, want %q", args, got, want)
		}
	}
}
