package main

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// hookStdinIdle is how long a hook waits for its next byte of stdin.
// Claude Code writes the hook's JSON and closes stdin at once; a stdin left
// open (a hook run by hand, a wrapper that forgets to close it) must not
// hang the agent.
const hookStdinIdle = 2 * time.Second

// hookStdinTotal bounds the whole read: a writer that sends a byte now and
// then, never two seconds apart, kept the idle wait from ever ending.
const hookStdinTotal = 10 * time.Second

// readHookInput reads r to its end, at most limit bytes, giving up when no
// byte arrives for idle, or when the whole read has taken total. The
// reading goroutine of an abandoned read stays
// blocked until the process exits, which a hook does right after.
func readHookInput(r io.Reader, limit int64, idle, total time.Duration) ([]byte, error) {
	type chunk struct {
		b   []byte
		err error
	}
	ch := make(chan chunk, 1)
	go func() {
		lr := io.LimitReader(r, limit+1)
		for {
			buf := make([]byte, 64<<10)
			n, err := lr.Read(buf)
			ch <- chunk{buf[:n], err}
			if err != nil {
				return
			}
		}
	}()
	var data []byte
	timer := time.NewTimer(idle)
	defer timer.Stop()
	deadline := time.NewTimer(total)
	defer deadline.Stop()
	for {
		select {
		case c := <-ch:
			data = append(data, c.b...)
			if int64(len(data)) > limit {
				return nil, fmt.Errorf("more than %d bytes", limit)
			}
			if errors.Is(c.err, io.EOF) {
				return data, nil
			}
			if c.err != nil {
				return nil, c.err
			}
			if !timer.Stop() {
				<-timer.C
			}
			timer.Reset(idle)
		case <-timer.C:
			return nil, fmt.Errorf("stdin still open after %s without input", idle)
		case <-deadline.C:
			return nil, fmt.Errorf("stdin still open after %s", total)
		}
	}
}
