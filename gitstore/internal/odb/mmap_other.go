//go:build !unix

package odb

import "os"

// mapFile does not map: packs are read through their files.
func mapFile(*os.File, int64) (mem, func(), bool) { return nil, nil, false }
