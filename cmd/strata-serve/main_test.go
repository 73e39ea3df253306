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
