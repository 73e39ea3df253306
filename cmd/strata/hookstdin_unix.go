//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// drainReady reads from f what can be read without waiting (poll(2) with
// no timeout before each read), at most limit bytes. complete is true when
// it reached the end of the input.
func drainReady(f *os.File, limit int64) (data []byte, complete bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, false, nil
	}
	cerr := rc.Control(func(fd uintptr) {
		// Read straight into data, growing it as needed: a fixed 64 KB buffer
		// here lived on the stack (the compiler's limit for a constant-size
		// make) and cost every hook call a stack copy and 16 fresh pages.
		data = make([]byte, 0, 4<<10)
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, perr := unix.Poll(fds, 0)
			if errors.Is(perr, unix.EINTR) {
				continue
			}
			if perr != nil || n == 0 {
				return // would wait: the caller reads the rest
			}
			if len(data) == cap(data) {
				data = slices.Grow(data, len(data))
			}
			m, rerr := unix.Read(int(fd), data[len(data):cap(data)])
			if errors.Is(rerr, unix.EINTR) {
				continue
			}
			if rerr != nil {
				return // EAGAIN and the like: the caller reads the rest
			}
			if m == 0 {
				complete = true
				return
			}
			data = data[:len(data)+m]
			if int64(len(data)) > limit {
				err = fmt.Errorf("more than %d bytes", limit)
				return
			}
		}
	})
	if cerr != nil {
		return data, false, nil
	}
	return data, complete, err
}
