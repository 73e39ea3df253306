//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"

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
		buf := make([]byte, 64<<10)
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, perr := unix.Poll(fds, 0)
			if errors.Is(perr, unix.EINTR) {
				continue
			}
			if perr != nil || n == 0 {
				return // would wait: the caller reads the rest
			}
			m, rerr := unix.Read(int(fd), buf)
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
			data = append(data, buf[:m]...)
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
