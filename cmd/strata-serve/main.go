// Command strata-serve holds strata's two servers, the MCP server
// (`strata mcp`) and the timeline's web server (`strata timeline --serve`),
// and the timeline's page (`strata timeline`), so that strata itself, which
// every hook call starts, links neither the MCP SDK nor net/http (as git
// leaves HTTP to git-remote-https) nor html/template. strata checks its
// arguments, opens the repository, then replaces itself with this program
// (found next to strata, else on PATH):
//
//	strata-serve mcp -dir ROOT -version V
//	strata-serve timeline -dir ROOT -addr ADDR [-since RFC3339] [-home]
//	strata-serve page -dir ROOT [-since RFC3339] [-home] [-o FILE]
//
// This calling convention is between the two binaries only; users call
// strata. Exit codes are strata's: 0, 2 for a usage error, 3 otherwise.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/internal/buildinfo"
	"github.com/strata-dev/strata/interrupt"
	"github.com/strata-dev/strata/mcpserver"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/timeline"
	"github.com/strata-dev/strata/timeline/loopback"
	"github.com/strata-dev/strata/timeline/web"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// buildVersion is stamped by make (-X main.buildVersion), as strata's is.
var buildVersion string

// revision names the build this binary comes from (a test sets it: a test
// binary records none).
var revision = func() string { return buildinfo.ID(buildVersion) }

func run(args []string, in io.Reader, out, errw io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	catch, stop := interrupt.Catcher(cancel)
	defer stop()
	catch()
	if len(args) == 0 {
		fmt.Fprintln(errw, "strata-serve: run by strata (strata mcp, strata timeline --serve), not by hand")
		return 2
	}
	fs := flag.NewFlagSet("strata-serve "+args[0], flag.ContinueOnError)
	fs.SetOutput(errw)
	dir := fs.String("dir", "", "the repository's root")
	ver := fs.String("version", "dev", "strata's version")
	addr := fs.String("addr", "", "loopback address to serve the timeline on")
	since := fs.String("since", "", "only changes at or after this instant (RFC 3339)")
	file := fs.String("o", "", "write the page to this file (page)")
	build := fs.String("build", "", "the revision strata was built from")
	home := fs.Bool("home", false, "include the home ref's events (timeline, page)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 || *dir == "" {
		fmt.Fprintf(errw, "strata-serve: bad arguments %q (it is run by strata)\n", args)
		return 2
	}
	if mine := revision(); buildinfo.Mismatch(*build, mine) {
		self, _ := os.Executable()
		fmt.Fprintf(errw, "strata: %s was built from %s, strata from %s: install both from one build (make install, or go install ./cmd/strata ./cmd/strata-serve)\n", self, mine, *build)
		return 3
	}
	var err error
	switch args[0] {
	case "mcp":
		log := slog.New(slog.NewTextHandler(errw, nil))
		log.Info("serving MCP on stdio", "root", *dir)
		err = mcpserver.Serve(ctx, in, out, mcpserver.Options{Dir: *dir, Now: state.Now, Version: *ver, Log: log})
	case "timeline":
		err = serveTimeline(ctx, *dir, *addr, *since, *home, out)
	case "page":
		err = writePage(*dir, *since, *file, *home, out)
	default:
		fmt.Fprintf(errw, "strata-serve: unknown server %q (it is run by strata)\n", args[0])
		return 2
	}
	if err != nil {
		fmt.Fprintf(errw, "strata: %s\n", err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 3
	}
	return 0
}

// usageError is an error of strata's arguments (exit 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func serveTimeline(ctx context.Context, dir, addr, since string, home bool, out io.Writer) error {
	if err := loopback.Check(addr); err != nil { // strata checked it; never serve elsewhere
		return usageError{fmt.Errorf("--serve: %w", err)}
	}
	eng, from, err := openTimeline(dir, since)
	if err != nil {
		return err
	}
	// Without home, the home ref is neither read nor watched.
	o := timeline.Options{Since: from, Home: home}
	page := web.Page{Build: func() (*timeline.Timeline, error) { return timeline.Build(eng, o) },
		Heads: func() (string, error) { return eng.HistoryHeads(home) }}
	err = web.Serve(ctx, addr, page, out)
	if errors.Is(err, web.ErrNotLoopback) {
		return usageError{fmt.Errorf("--serve: %w", err)}
	}
	return err
}

// writePage writes the timeline's page to file, or to out without one.
func writePage(dir, since, file string, home bool, out io.Writer) error {
	eng, from, err := openTimeline(dir, since)
	if err != nil {
		return err
	}
	t, err := timeline.Build(eng, timeline.Options{Since: from, Home: home})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := timeline.Render(&buf, t); err != nil {
		return err
	}
	if file == "" {
		_, err = out.Write(buf.Bytes())
		return err
	}
	if err := writeOutput(file, buf.Bytes(), home); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	fmt.Fprintf(out, "wrote %s: %d events in %d lanes\n", file, len(t.Events), len(t.Lanes))
	if home {
		fmt.Fprintln(out, "the page includes the home ref's events: this machine's auto-memory file and its content, which strata never pushes")
	}
	if t.EventsLeftOut > 0 {
		fmt.Fprintf(out, "the %d versions recorded from %s on are not on the page, past %d (strata timeline --since %s gives a page that starts there)\n",
			t.EventsLeftOut, timeline.CutStamp(t.EventCut), timeline.MaxEvents, timeline.CutStamp(t.EventCut))
	}
	if t.LeftOut > 0 {
		fmt.Fprintf(out, "the diffs of the %d events from %s on are left out (strata timeline --since %s gives a page that starts there)\n",
			t.LeftOut, timeline.CutStamp(t.Cut), timeline.CutStamp(t.Cut))
	}
	if t.Unread > 0 {
		fmt.Fprintf(out, "the phases and decisions of the %d versions from %s on are not read (strata timeline --since %s gives a page that starts there)\n",
			t.Unread, timeline.CutStamp(t.ReadCut), timeline.CutStamp(t.ReadCut))
	}
	if !t.DecisionCut.IsZero() {
		fmt.Fprintf(out, "the decisions that first appeared from %s on are not drawn, past %d (strata decisions lists the pending ones; strata timeline --since %s gives a page that starts there)\n",
			timeline.CutStamp(t.DecisionCut), timeline.MaxDecisions, timeline.CutStamp(t.DecisionCut))
	}
	if t.DetailsLeftOut > 0 {
		fmt.Fprintf(out, "the details of %d decisions are left out (the page's diffs and details are spent; each names the strata command that prints it)\n", t.DetailsLeftOut)
	}
	return nil
}

// writeOutput writes the page to file (engine.WriteOutput): a new file
// gets 0666 less the umask and a file it replaces keeps its mode, as
// every file strata writes; a page with the home ref's events, which holds
// this machine's auto-memory notes that the home folder's permissions keep
// from other users, is 0600 whatever the umask and whatever mode a file it
// replaces had (an explicit mode is given exactly; attack36b F2).
func writeOutput(file string, data []byte, home bool) error {
	if !home {
		return engine.WriteOutput(file, data, engine.UserMode)
	}
	return engine.WriteOutput(file, data, 0o600)
}

// openTimeline opens the repository at dir and reads since (RFC 3339, or
// "" for the whole history).
func openTimeline(dir, since string) (*engine.Engine, time.Time, error) {
	var from time.Time
	if since != "" {
		var err error
		if from, err = time.Parse(time.RFC3339Nano, since); err != nil {
			return nil, from, fmt.Errorf("--since: %w", err)
		}
	}
	eng, err := engine.Open(dir)
	if err != nil {
		return nil, from, err
	}
	eng.Now = state.Now
	return eng, from, nil
}
