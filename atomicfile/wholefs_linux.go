//go:build linux

package atomicfile

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncfs(2) reports the write errors of the file system since the
// descriptor it is given was opened only from Linux 5.8 on; before, it
// returns 0 whatever happened, so a batch there keeps its per-file fsyncs.
var syncFSOK = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

// kernelAtLeast reports whether a kernel release ("6.18.44-foo") is at
// least major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	f := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// device returns the file system (device number) st is on.
func device(st os.FileInfo) (uint64, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(s.Dev), true
}

// syncFS writes out and flushes the whole file system f is on, reporting
// any write error on it since f was opened.
func syncFS(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Syncfs(int(fd))
			if serr != unix.EINTR {
				break
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "syncfs", Path: f.Name(), Err: serr}
	}
	return nil
}

// handle returns a second descriptor of f (sharing its open file, so the
// write errors syncFS reports are those since f was opened).
func handle(f *os.File) (*os.File, error) {
	var fd int
	var derr error
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// FewDirty is how much unwritten data (Dirty in /proc/meminfo, all file
// systems) the system may hold for a batch to use syncfs: syncfs writes out
// all of it, so past this a batch keeps its per-file fsyncs rather than
// wait for other programs' writes. It is 0 (syncfs never used) by default:
// measured in the same runs on the project's shared 2-core machine, a sync
// of 1 000 files with syncfs was never faster than with per-file fsyncs and
// up to 0.5 s slower (BenchmarkSyncVsGitCLI prints both). Set it (tests,
// benchmarks) to use syncfs below that amount.
var FewDirty int64

// fewDirty reports whether the system's unwritten data is under FewDirty.
func fewDirty() bool {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Dirty:"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				return false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return err == nil && FewDirty > 0 && kb*1024 < FewDirty
		}
	}
	return false
}
