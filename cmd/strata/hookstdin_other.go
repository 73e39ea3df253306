//go:build !unix

package main

import "os"

// drainReady reads nothing where poll(2) is not at hand: the hook reads
// stdin with the signals caught.
func drainReady(*os.File, int64) ([]byte, bool, error) { return nil, false, nil }
