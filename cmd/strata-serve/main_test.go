package main

import (
	"bytes"
	"strings"
	"testing"
)

// A strata-serve built from another source than the strata that runs it
// (an older one found on PATH) refuses, naming both; one built from the
// same source, or either side without a recorded revision, runs.
func TestBuildMismatchRefused(t *testing.T) {
	defer func(r func() string) { revision = r }(revision)
	revision = func() string { return "1111111111111111111111111111111111111111" }
	var out, errw bytes.Buffer
	code := run([]string{"page", "-dir", t.TempDir(), "-build", "2222222222222222222222222222222222222222"}, strings.NewReader(""), &out, &errw)
	if code != 3 || !strings.Contains(errw.String(), "was built from 1111111111111111111111111111111111111111, strata from 2222222222222222222222222222222222222222: install both from one build") {
		t.Fatalf("exit %d, stderr %q", code, errw.String())
	}
	for _, build := range []string{"1111111111111111111111111111111111111111", ""} {
		errw.Reset()
		code = run([]string{"page", "-dir", t.TempDir(), "-build", build}, strings.NewReader(""), &out, &errw)
		if strings.Contains(errw.String(), "install both") {
			t.Fatalf("-build %q refused: %q", build, errw.String())
		}
	}
}

// An address strata-serve will not serve on is a usage error, exit 2, in
// one line that quotes it (strata checks it first; this is the second
// check), as is a listener a name put off loopback (attack36b F3, F5).
func TestServeAddrRefused(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:99999":  `strata: --serve: "127.0.0.1:99999": the port is not a number from 0 to 65535` + "\n",
		"127.0.0.1:1\n":    `strata: --serve: "127.0.0.1:1\n": the port is not a number from 0 to 65535` + "\n",
		"0.0.0.0:8080":     `strata: --serve: "0.0.0.0:8080" is not a loopback address (use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)` + "\n",
		"example.com:8080": `strata: --serve: "example.com:8080" is not a loopback address (use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)` + "\n",
	} {
		var out, errw bytes.Buffer
		code := run([]string{"timeline", "-dir", t.TempDir(), "-addr", addr}, strings.NewReader(""), &out, &errw)
		if code != 2 || errw.String() != want {
			t.Errorf("%q: exit %d, stderr %q", addr, code, errw.String())
		}
	}
}
