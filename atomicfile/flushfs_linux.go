package atomicfile

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fsFlush makes a large batch durable with one syncfs(2) per file system
// instead of one fsync per file: a directory of each file system the batch
// writes in is opened before the first write there, and flush syncs each.
// From Linux 5.8 on, syncfs reports a write-back error of its file system
// that happened after that open (earlier kernels return 0 whatever
// happened, so they never get here: see flushCheap).
type fsFlush struct {
	dirs map[string]bool // directories seen: whether their file system is flushed whole
	fds  map[uint64]int  // an open directory per file system flushed whole (st_dev)
	no   map[uint64]bool // file systems that keep per-file fsyncs
}

// watch reports whether dir's file system is made durable by syncfs (see
// flushable) and then opens a directory of it, if none is open yet.
func (f *fsFlush) watch(dir string) (bool, error) {
	if ok, seen := f.dirs[dir]; seen {
		return ok, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return false, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if f.dirs == nil {
		f.dirs, f.fds, f.no = map[string]bool{}, map[uint64]int{}, map[uint64]bool{}
	}
	_, open := f.fds[st.Dev]
	switch {
	case open:
	case f.no[st.Dev] || !flushable(dir):
		f.no[st.Dev] = true
	default:
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		f.fds[st.Dev] = fd
	}
	f.dirs[dir] = !f.no[st.Dev]
	return f.dirs[dir], nil
}

// flushable reports whether dir is on a local disk file system whose
// syncfs writes and flushes all of it, as fsync does one file: ext2/3/4,
// XFS, Btrfs, F2FS, and tmpfs (where both cost nothing). Network and FUSE
// file systems (NFS, sshfs, virtiofs on older kernels) need not pass a
// syncfs on to where the data lives, while they do pass each fsync: they
// keep per-file fsyncs, as does anything not named here.
func flushable(dir string) bool {
	var sf unix.Statfs_t
	if unix.Statfs(dir, &sf) != nil {
		return false
	}
	switch uint32(sf.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}

// flush syncs every file system watched, then closes what watch opened.
func (f *fsFlush) flush() error {
	var first error
	for _, fd := range f.fds {
		if err := unix.Syncfs(fd); err != nil && first == nil {
			first = os.NewSyscallError("syncfs", err)
		}
	}
	f.close()
	return first
}

func (f *fsFlush) close() {
	for dev, fd := range f.fds {
		unix.Close(fd)
		delete(f.fds, dev)
	}
}

// flushCheap reports whether one syncfs costs no more than the n per-file
// fsyncs it replaces: the kernel reports write-back errors through syncfs
// (Linux 5.8 and later), and the machine holds little unwritten data of
// other programs, which syncfs writes out too (all of its file system's,
// so with a large copy or build in progress it could take seconds). An
// fsync costs about what writing flushPerFile bytes does, so up to that
// much per file replaced is let through.
func flushCheap(n int) bool {
	return kernelAtLeast(5, 8) && unwrittenBytes() <= int64(n)*flushPerFile
}

// unwrittenBytes is unwritten; tests replace it.
var unwrittenBytes = unwritten

// flushPerFile: one fsync on an ordinary disk (~150 us with its cache
// flush) writes ~64 KB in the same time at ~400 MB/s.
const flushPerFile = 64 << 10

// unwritten returns the machine's dirty and under-write-back bytes, or a
// huge number when /proc/meminfo cannot tell.
func unwritten() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 1 << 62
	}
	var total int64
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != "Dirty" && name != "Writeback" {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 1 << 62
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 {
			return 1 << 62
		}
		total += kb << 10
		found++
	}
	if found != 2 {
		return 1 << 62
	}
	return total
}

// kernelAtLeast reports whether the running kernel's release is at least
// major.minor.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, min := leadingInt(parts[0]), leadingInt(parts[1]) // "6.18.44-fc", "5.8-rc1"
	if maj < 0 || min < 0 {
		return false
	}
	return maj > major || maj == major && min >= minor
}

// leadingInt is the number s starts with, -1 when it starts with none.
func leadingInt(s string) int {
	i := 0
	for i < len(s) && i < 6 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return -1
	}
	return n
}
