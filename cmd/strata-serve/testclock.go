//go:build strata_testclock

package main

import "github.com/strata-dev/strata/state"

// A build for tests (cmd/strata's TestMain builds one with this tag) keeps
// strata's test clock: STRATA_TEST_NOW moves its clock as it moves the
// in-process strata's.
func init() { state.UseTestClock() }
