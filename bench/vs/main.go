// Command vs times whole processes side by side: every round runs each side
// once, in a rotating order, so a machine whose load changes during the run
// weighs on every side alike; it prints each side's median and quartiles and
// the ratio of each side to the first. Used by scripts/bench.sh; runnable by
// hand:
//
//	go run ./bench/vs -dir REPO -runs 41 'strata=strata version' 'git=git status --porcelain'
//
// A side is NAME=STEPS. STEPS are commands separated by " && ", run in turn
// without a shell; a word "{}" is replaced by the previous step's output
// (trimmed), a word "{}:REST" by that output followed by ":REST", and a last
// word "<FILE" feeds FILE to the step's standard input. -max NAME=MS states
// a side's target: the result line says met or missed. -show NAME=PEER
// prints the ratio of two sides that has no target (a floor's, say).
//
// Beside each median it prints the side's minor page faults (the median of
// its rounds, all steps), and first what one costs on this machine: a count
// that does not change with the machine's load or pace, and the price that
// does. On a virtual machine where a page fault costs tens of microseconds
// instead of a fraction of one, a process that touches more pages than its
// peer at start loses by far more than elsewhere; the two figures tell a
// change of the program from a change of the machine.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

type side struct {
	name   string
	steps  [][]string
	times  []time.Duration
	faults []int64
}

func main() {
	runs := flag.Int("runs", 41, "rounds")
	warm := flag.Int("warmup", 3, "untimed rounds first")
	dir := flag.String("dir", ".", "working directory of every command")
	var maxes []string
	flag.Func("max", "NAME=MS target of a side (repeatable)", func(s string) error { maxes = append(maxes, s); return nil })
	var shows []string
	flag.Func("show", "NAME=PEER: print NAME's median ÷ PEER's, no target (repeatable)", func(s string) error { shows = append(shows, s); return nil })
	var ratios []string
	flag.Func("ratio", "NAME=PEER:R target: NAME's median ≤ R × PEER's (R > 1), or PEER's ≥ 1/R × NAME's (R < 1) (repeatable)", func(s string) error { ratios = append(ratios, s); return nil })
	flag.Parse()
	var sides []*side
	for _, a := range flag.Args() {
		name, cmd, ok := strings.Cut(a, "=")
		if !ok {
			fail("side %q: want NAME=COMMAND", a)
		}
		s := &side{name: name}
		for _, step := range strings.Split(cmd, " && ") {
			s.steps = append(s.steps, strings.Fields(step))
		}
		sides = append(sides, s)
	}
	if len(sides) == 0 {
		fail("no sides")
	}
	load0 := loadavg()
	if c, ok := faultCost(); ok {
		fmt.Printf("  this machine: a minor page fault costs %.1f µs (touching 16 MiB of new memory, best of 5)\n", c)
	}
	for r := 0; r < *warm+*runs; r++ {
		for i := range sides {
			s := sides[(r+i)%len(sides)]
			d, f := s.run(*dir)
			if r >= *warm {
				s.times = append(s.times, d)
				s.faults = append(s.faults, f)
			}
		}
	}
	fmt.Printf("  %d interleaved rounds; load average %s at the start, %s at the end (2 cores)\n", *runs, load0, loadavg())
	med := map[string]float64{}
	for _, s := range sides {
		slices.Sort(s.times)
		q := func(f float64) float64 { return ms(s.times[int(f*float64(len(s.times)-1))]) }
		med[s.name] = q(0.5)
		slices.Sort(s.faults)
		faults := ""
		if f := s.faults[len(s.faults)/2]; f > 0 {
			faults = fmt.Sprintf(", %d page faults", f)
		}
		fmt.Printf("  %-10s median %7.2f ms  (p25 %.2f, p75 %.2f)%s\n", s.name, q(0.5), q(0.25), q(0.75), faults)
	}
	first := sides[0].name
	for _, s := range sides[1:] {
		fmt.Printf("  ratio %s / %s = %.2f×\n", s.name, first, med[s.name]/med[first])
	}
	for _, m := range shows {
		name, peer, _ := strings.Cut(m, "=")
		if med[name] == 0 || med[peer] == 0 {
			fail("-show %q", m)
		}
		fmt.Printf("  ratio %s / %s = %.2f× (no target)\n", name, peer, med[name]/med[peer])
	}
	for _, m := range ratios {
		name, rest, _ := strings.Cut(m, "=")
		peer, v, _ := strings.Cut(rest, ":")
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || med[peer] == 0 {
			fail("-ratio %q", m)
		}
		got := med[name] / med[peer]
		verdict := "met"
		if got > r {
			verdict = "MISSED"
		}
		if r < 1 {
			fmt.Printf("  target %s at least %.1f× faster than %s: %s (%.2f× faster)\n", name, 1/r, peer, verdict, 1/got)
		} else {
			fmt.Printf("  target %s ≤ %.2f× %s: %s (%.2f×)\n", name, r, peer, verdict, got)
		}
	}
	for _, m := range maxes {
		name, v, _ := strings.Cut(m, "=")
		limit, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fail("-max %q", m)
		}
		verdict := "met"
		if med[name] > limit {
			verdict = "MISSED"
		}
		fmt.Printf("  target %s ≤ %g ms: %s (median %.2f ms)\n", name, limit, verdict, med[name])
	}
}

// run runs every step of s once and returns the wall time of them all and
// their minor page faults (0 where the system does not count them).
func (s *side) run(dir string) (time.Duration, int64) {
	t0 := time.Now()
	prev := ""
	var faults int64
	for _, words := range s.steps {
		args := make([]string, 0, len(words))
		var stdin string
		for i, w := range words {
			switch {
			case w == "{}":
				w = prev
			case strings.HasPrefix(w, "{}:"):
				w = prev + w[2:]
			case i == len(words)-1 && strings.HasPrefix(w, "<"):
				stdin = w[1:]
				continue
			}
			args = append(args, w)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if stdin != "" {
			f, err := os.Open(stdin)
			if err != nil {
				fail("%v", err)
			}
			cmd.Stdin = f
			defer f.Close()
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errorsAs(err, &ee) {
				fail("%s: %v", s.name, err)
			}
		}
		faults += minorFaults(cmd.ProcessState)
		prev = strings.TrimSpace(out.String())
	}
	return time.Since(t0), faults
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vs: "+format+"\n", args...)
	os.Exit(2)
}
