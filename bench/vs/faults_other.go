//go:build !linux

package main

import "os"

func minorFaults(*os.ProcessState) int64 { return 0 }

func faultCost() (float64, bool) { return 0, false }
