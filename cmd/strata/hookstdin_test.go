package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// validate --hook keeps the default signal handling when its stdin is all
// there (a file, or a pipe already written and closed, as Claude Code does),
// and catches the signals when it has to wait for the rest.
func TestHookStdinCatchesOnlyWhenWaiting(t *testing.T) {
	payload := `{"session_id": "s", "tool_input": {"file_path": "a.json"}}`
	newEnv := func(in *os.File, caught *bool) *env {
		return &env{In: in, catchSignals: func() { *caught = true }}
	}

	f := openWith(t, payload)
	caught := false
	data, err := readHookStdin(newEnv(f, &caught))
	require.NoError(t, err)
	require.Equal(t, payload, string(data))
	require.False(t, caught, "a file: nothing to wait for")

	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	pw.WriteString(payload)
	pw.Close()
	caught = false
	data, err = readHookStdin(newEnv(pr, &caught))
	pr.Close()
	require.NoError(t, err)
	require.Equal(t, payload, string(data))
	require.False(t, caught, "a closed pipe: nothing to wait for")

	pr, pw, err = os.Pipe()
	require.NoError(t, err)
	pw.WriteString(payload[:10])
	go func() {
		time.Sleep(100 * time.Millisecond)
		pw.WriteString(payload[10:])
		pw.Close()
	}()
	caught = false
	data, err = readHookStdin(newEnv(pr, &caught))
	pr.Close()
	require.NoError(t, err)
	require.Equal(t, payload, string(data), "what was there first, then the rest")
	require.True(t, caught, "an open pipe: the hook waits, so it catches the signals")
}

// A Write's hook input carries the whole file written: drainReady reads
// input far larger than its first buffer whole, and refuses input over the
// limit.
func TestHookStdinLargeInput(t *testing.T) {
	payload := `{"session_id": "s", "tool_input": {"file_path": "a.json", "content": "` +
		strings.Repeat("0123456789abcdef", 20000) + `"}}`
	f := openWith(t, payload)
	caught := false
	data, err := readHookStdin(&env{In: f, catchSignals: func() { caught = true }})
	require.NoError(t, err)
	require.Equal(t, payload, string(data))
	require.False(t, caught)

	f.Seek(0, 0)
	_, _, err = drainReady(f, 100_000)
	require.ErrorContains(t, err, "more than 100000 bytes")
}

// Without the handler, the provenance note is written with SIGINT ignored:
// an interrupt in that moment is dropped and the write completes.
func TestHookNoteIgnoresInterrupt(t *testing.T) {
	e := &env{In: strings.NewReader(""), catchSignals: func() { t.Fatal("caught") }}
	done := false
	require.NoError(t, writeHookNote(e, func() error {
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		time.Sleep(50 * time.Millisecond) // the signal arrives while ignored
		done = true
		return nil
	}))
	require.True(t, done)
}

// openWith opens a file holding payload, as a hook's stdin redirected from
// a file; it is closed when the test ends.
func openWith(t *testing.T, payload string) *os.File {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hook.json")
	require.NoError(t, os.WriteFile(file, []byte(payload), 0o644))
	f, err := os.Open(file)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// drip is a stdin that never ends and never pauses long: a byte per read,
// a millisecond apart.
type drip struct{}

func (drip) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	p[0] = ' '
	return 1, nil
}

// A stdin that drips a byte now and then, never idle long enough for the
// idle wait, is given up once the whole read has taken its total (it kept
// a hook waiting as long as the drip lasted).
func TestHookStdinDripGivesUp(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := readHookInput(drip{}, maxHookInput, time.Second, 100*time.Millisecond)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stdin still open after 100ms") {
			t.Fatalf("got %v", err)
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a measurement
		t.Fatal("still reading a dripping stdin after 30 s")
	}
}
