package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// syncBuffer is a bytes.Buffer safe for the server's writers and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serve runs Serve over the lines and returns what it wrote.
func serve(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, Options{Dir: dir, Version: "test"})
	}()
	select {
	case err := <-done:
		require.NoError(t, err, "the session ended; it wrote:\n%s", out.String())
	case <-time.After(drainWait / 2):
		t.Fatalf("Serve still runs after the end of its input; it wrote:\n%s", out.String())
	}
	return out.String()
}

// One bad line is one error answer: the answer already due (initialize)
// is written and the next request (ping, id 2) is answered.
func TestServeAnswersBadLines(t *testing.T) {
	dir := repo(t)
	deep := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"strata_log","arguments":{"x":` +
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}}`
	const (
		parse   = `"error":{"code":-32700,"message":"Parse error"`
		invalid = `"error":{"code":-32600,"message":"Invalid Request"`
	)
	for _, tc := range []struct{ name, line, want string }{
		{"not JSON", `{oops`, `"id":null,` + parse},
		{"a field, not an object", `"jsonrpc":"1.0"`, `"id":null,` + parse},
		{"two values", `{} {}`, `"id":null,` + parse},
		{"deeper than encoding/json goes", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), `"id":null,` + parse},
		{"null", `null`, `"id":null,` + invalid},
		{"empty batch", `[]`, `"id":null,` + invalid},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, `"id":null,` + invalid},
		{"number", `123`, `"id":null,` + invalid},
		{"string", `"ping"`, `"id":null,` + invalid},
		{"empty object", `{}`, `"id":null,` + invalid},
		{"version 1.0", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, `"id":3,` + invalid},
		{"no version", `{"id":"a","method":"ping"}`, `"id":"a",` + invalid},
		{"version not a string", `{"jsonrpc":2,"id":3,"method":"ping"}`, `"id":3,` + invalid},
		{"version key in capitals", `{"JSONRPC":"2.0","id":3,"method":"ping"}`, `"id":3,` + invalid},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `"id":null,` + invalid},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, `"id":null,` + invalid},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `"id":null,` + invalid},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `"id":1.5,` + invalid},
		{"id past float64", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `"id":1e400,` + invalid},
		// attack22 O-5: each was answered with another id (2^53, -2^53, 1000)
		{"id of 2^53+1", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `"id":9007199254740993,` + invalid},
		{"id of -(2^53+1)", `{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}`, `"id":-9007199254740993,` + invalid},
		{"id of 2^53", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, `"id":9007199254740992,` + invalid},
		{"id with an exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, `"id":1e3,` + invalid},
		{"id with a zero fraction", `{"jsonrpc":"2.0","id":1000.0,"method":"ping"}`, `"id":1000.0,` + invalid},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":7}`, `"id":3,` + invalid},
		{"nested 1000 deep", deep, `"id":9,` + invalid},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, `"id":null,` + invalid},
		{"response with a bad error", `{"jsonrpc":"2.0","id":7,"error":"x"}`, `"id":7,` + invalid},
		// attack27 F5: a duplicate key was read as its last occurrence
		{"duplicate id", `{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}`, `"id":null,` + invalid + `,"data":"duplicate key \"id\""`},
		{"duplicate tool name", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"strata_log","arguments":{},"name":"strata_nope"}}`, `"id":6,` + invalid + `,"data":"duplicate key \"name\""`},
		{"duplicate argument", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"strata_log","arguments":{"limit":1,"limit":2}}}`, `"id":8,` + invalid},
		// attack27 F5: the SDK answered a second initialize with code 0
		{"second initialize", strings.Replace(initLine, `"id":0`, `"id":1`, 1), `"id":1,` + invalid + `,"data":"initialize: the session is already initialized"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := serve(t, dir, initLine, tc.line, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			require.Contains(t, out, `{"jsonrpc":"2.0","id":0,"result":`)
			require.Contains(t, out, `{"jsonrpc":"2.0",`+tc.want)
			require.Contains(t, out, `{"jsonrpc":"2.0","id":2,"result":{}}`)
			requireLines(t, out, 3)
		})
	}
}

// An integer id of at most 53 bits is answered with the very id it came
// with, at both ends of the range.
func TestServeAnswersEvery53BitID(t *testing.T) {
	out := serve(t, repo(t), initLine, `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, `{"jsonrpc":"2.0","id":-1,"method":"ping"}`)
	require.Contains(t, out, `{"jsonrpc":"2.0","id":9007199254740991,"result":{}}`)
	require.Contains(t, out, `{"jsonrpc":"2.0","id":-9007199254740991,"result":{}}`)
	require.Contains(t, out, `{"jsonrpc":"2.0","id":-1,"result":{}}`)
	requireLines(t, out, 4)
}

// Lines the SDK alone would not take but that are requests all the same
// are answered as such: blank lines, spaces after a message, CRLF.
func TestServeTakesLooseLines(t *testing.T) {
	out := serve(t, repo(t), initLine, ``, `   `, `{"jsonrpc":"2.0","id":"s","method":"ping"}  `,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\r")
	require.Contains(t, out, `{"jsonrpc":"2.0","id":"s","result":{}}`)
	require.Contains(t, out, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	requireLines(t, out, 3)
}

// requireLines checks that out is n JSON-RPC messages, one a line.
func requireLines(t *testing.T, out string, n int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, n, out)
	for _, l := range lines {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		require.Equal(t, "2.0", m.JSONRPC, l)
	}
}

// A second call with the id of a call not yet answered is answered with
// Invalid Request and not passed on, and the end of input then waits only
// for the first call's answer. (The SDK does not answer such a call, and
// the end of input waited drainWait for it.) The test plays the SDK: it
// reads what the drain passes on and answers when it likes.
func TestDrainDuplicateID(t *testing.T) {
	in, feed := io.Pipe()
	var out notifyBuffer
	out.wrote = make(chan struct{}, 10)
	d := newDrain(in, &out, 1<<20)
	sdk := bufio.NewReader(d)

	call := `{"jsonrpc":"2.0","id":6,"method":"ping"}` + "\n"
	go feed.Write([]byte(call + call))
	got, err := sdk.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, call, got)
	select {
	case <-out.wrote:
	case <-time.After(drainWait / 2):
		t.Fatal("the second call with id 6 was not answered")
	}
	require.Equal(t, `{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid Request","data":"id: already in use by a request not yet answered"}}`+"\n", out.String())

	require.NoError(t, feed.Close())
	_, err = d.Write([]byte(`{"jsonrpc":"2.0","id":6,"result":{}}` + "\n"))
	require.NoError(t, err)
	eof := make(chan error, 1)
	go func() {
		_, err := sdk.ReadString('\n')
		eof <- err
	}()
	select {
	case err := <-eof:
		require.ErrorIs(t, err, io.EOF)
	case <-time.After(drainWait / 2):
		t.Fatal("the end of input still waits after every call was answered")
	}
}

// An id answered may be used again; a string id is not the number id.
func TestDrainIDReuse(t *testing.T) {
	in, feed := io.Pipe()
	var out notifyBuffer
	d := newDrain(in, &out, 1<<20)
	sdk := bufio.NewReader(d)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"6","method":"ping"}`,
	} {
		go feed.Write([]byte(line + "\n"))
		got, err := sdk.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, line+"\n", got)
	}
	_, err := d.Write([]byte(`{"jsonrpc":"2.0","id":6,"result":{}}` + "\n"))
	require.NoError(t, err)
	line := `{"jsonrpc":"2.0","id":6,"method":"ping"}` // answered: free again
	go feed.Write([]byte(line + "\n"))
	got, err := sdk.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, line+"\n", got)
	require.Equal(t, `{"jsonrpc":"2.0","id":6,"result":{}}`+"\n", out.String(), "no error answers")
}

// A line longer than the bound is answered, not kept whole in memory nor
// passed on, and the next line is served.
func TestDrainLongLine(t *testing.T) {
	var out notifyBuffer
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("y", 200<<10) + `"}}` + "\n"
	d := newDrain(strings.NewReader(long+ping), &out, 100<<10)
	sdk := bufio.NewReader(d)
	got, err := sdk.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ping, got)
	_, err = d.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"))
	require.NoError(t, err)
	_, err = sdk.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"line longer than 102400 bytes"}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"result":{}}`+"\n", out.String())
}

// The drain's answers and the server's never share a line, however the
// writer splits its writes.
func TestDrainWritesWholeLines(t *testing.T) {
	in, feed := io.Pipe()
	out := &trickle{}
	d := newDrain(in, out, 1<<20)
	const n = 200
	go func() {
		for i := 0; i < n; i++ {
			fmt.Fprintf(feed, "{oops %d\n", i)
		}
		feed.Close()
	}()
	for i := 0; i < n; i++ {
		_, err := fmt.Fprintf(d, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`+"\n", i)
		require.NoError(t, err)
	}
	_, err := io.ReadAll(d)
	require.NoError(t, err)
	requireLines(t, out.String(), 2*n)
}

// notifyBuffer is a syncBuffer that signals each write.
type notifyBuffer struct {
	syncBuffer
	wrote chan struct{}
}

func (b *notifyBuffer) Write(p []byte) (int, error) {
	n, err := b.syncBuffer.Write(p)
	if b.wrote != nil {
		b.wrote <- struct{}{}
	}
	return n, err
}

// trickle writes a byte at a time, as a pipe may take a large write in
// parts, letting other goroutines run between them.
type trickle struct{ syncBuffer }

func (w *trickle) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := w.syncBuffer.Write(p[i : i+1]); err != nil {
			return i, err
		}
		runtime.Gosched()
	}
	return len(p), nil
}

// Every message the server writes is escaped as every JSON strata prints
// (state.JSONSafe): a result holding C1, DEL and bidi controls from a
// recorded file reaches the stream as \u escapes and decodes to the same
// value, and so does an answer of the drain's own (attack23-verify 6).
func TestServeEscapesControls(t *testing.T) {
	dir := repo(t)
	hostile := "{\"type\": \"APEX\", \"phase\": \"plan\u009b2J\x7f\u202eRLO\u2066\u200b\ufeff\", \"ttl\": \"36500d\", \"lastUpdated\": \"2026-11-22T09:00:00Z\"}"
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude/workflow-state.json"), []byte(hostile), 0o644))
	eng, err := engine.Open(dir)
	require.NoError(t, err)
	paths, err := eng.AllPaths()
	require.NoError(t, err)
	_, err = eng.Record(paths, state.SourceRecord)
	require.NoError(t, err)

	out := serve(t, dir, initLine,
		`{"jsonrpc":"2.0","id":"show\u202e","method":"tools/call","params":{"name":"strata_show","arguments":{"path":".claude/workflow-state.json"}}}`,
		"{\"jsonrpc\":\"1.0\",\"id\":\"bad\u009b\",\"method\":\"ping\"}")
	require.NotRegexp(t, "[\x7f\u0080-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]", out)
	require.Contains(t, out, `"id":"bad\u009b",`)
	requireLines(t, out, 3)
	var shown bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var msg struct {
			ID     any `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &msg), line)
		if msg.ID == "show\u202e" {
			shown = true
			require.Len(t, msg.Result.Content, 1, line)
			require.Equal(t, hostile, msg.Result.Content[0].Text)
		}
	}
	require.True(t, shown, "no answer to the strata_show call:\n%s", out)
}
