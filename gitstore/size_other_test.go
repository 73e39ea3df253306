//go:build !unix

package gitstore

import "os"

func blocksKB(fi os.FileInfo) int64 { return (fi.Size() + 1023) / 1024 }
