package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/strata-dev/strata/state"
)

// drainWait bounds how long the end of input waits for answers.
const drainWait = 30 * time.Second

// drain stands between stdin and the SDK's transport. It passes on only
// the lines the SDK can take and answers the others itself (see vet), so
// one bad line costs one error answer, not the session. And it lets the
// server answer every request it read before the end of its input ends the
// session: `strata mcp < requests.jsonl` answers them all (the SDK ends a
// session at EOF and drops calls still running). It keeps the ids of the
// calls passed on and not yet answered, and reports EOF only once none is
// left. A call whose id is one of those is answered here with Invalid
// Request and not passed on: the SDK would not answer it.
type drain struct {
	mu          sync.Mutex // guards outstanding and partial; cond waits on it
	cond        *sync.Cond
	outstanding map[jsonrpc.ID]bool
	partial     []byte
	initialized bool // an initialize request was passed on

	// wmu makes each line written to out whole: the SDK writes one
	// message, newline included, per Write, and pump writes its answers
	// between them, never inside one.
	wmu sync.Mutex
	out io.Writer

	pr      *io.PipeReader
	pw      *io.PipeWriter
	maxLine int
}

// newDrain reads lines from in, passing on lines of at most maxLine bytes.
func newDrain(in io.Reader, out io.Writer, maxLine int) *drain {
	d := &drain{out: out, outstanding: map[jsonrpc.ID]bool{}, maxLine: maxLine}
	d.cond = sync.NewCond(&d.mu)
	d.pr, d.pw = io.Pipe()
	go d.pump(in)
	return d
}

func (d *drain) pump(in io.Reader) {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	long := false // the line has passed maxLine: the rest of it is skipped
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			line = append(line, chunk...)
			long = len(bytes.TrimRight(line, "\r\n")) > d.maxLine
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		var werr error
		switch {
		case long:
			werr = d.answer(errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request",
				"line longer than "+strconv.Itoa(d.maxLine)+" bytes"))
		case len(line) > 0:
			werr = d.pass(line)
		}
		if werr != nil {
			return
		}
		line, long = line[:0], false
		if err != nil {
			d.waitAnswered()
			d.pw.CloseWithError(err)
			return
		}
	}
}

// pass vets one line, then passes it on or answers it.
func (d *drain) pass(line []byte) error {
	v := vet(line)
	if v.call && v.method == "initialize" {
		// The SDK answers a second initialize with error code 0, in no
		// range JSON-RPC reserves: it is refused here, as Invalid Request.
		d.mu.Lock()
		again := d.initialized
		d.initialized = true
		d.mu.Unlock()
		if again {
			return d.answer(errorReply(v.rawID, jsonrpc.CodeInvalidRequest, "Invalid Request",
				"initialize: the session is already initialized"))
		}
	}
	if v.call {
		d.mu.Lock()
		busy := d.outstanding[v.id]
		if !busy {
			d.outstanding[v.id] = true
		}
		d.mu.Unlock()
		if busy {
			v.reply = errorReply(v.rawID, jsonrpc.CodeInvalidRequest, "Invalid Request",
				"id: already in use by a request not yet answered")
		}
	}
	switch {
	case v.skip:
		return nil
	case v.reply != nil:
		return d.answer(v.reply)
	}
	// The SDK takes nothing but a newline after a message.
	_, err := d.pw.Write(append(bytes.TrimRight(line, " \t\r\n"), '\n'))
	return err
}

// answer writes one of pump's own answers.
func (d *drain) answer(reply []byte) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	_, err := d.out.Write(state.JSONSafe(reply))
	return err
}

// waitAnswered waits until every call passed on has been answered, or
// drainWait has passed.
func (d *drain) waitAnswered() {
	deadline := time.AfterFunc(drainWait, func() {
		d.mu.Lock()
		clear(d.outstanding)
		d.mu.Unlock()
		d.cond.Broadcast()
	})
	defer deadline.Stop()
	d.mu.Lock()
	for len(d.outstanding) > 0 {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

func (d *drain) Read(p []byte) (int, error) { return d.pr.Read(p) }

func (d *drain) Close() error { return d.pr.Close() }

// Write passes the server's messages through, noting the calls answered.
// Each is escaped by state.JSONSafe, as every JSON strata prints: a client
// decodes the same message, and a terminal showing the stream (strata mcp
// run by hand) acts on no C1 or bidi control from a recorded file.
func (d *drain) Write(p []byte) (int, error) {
	q := state.JSONSafe(p)
	d.wmu.Lock()
	n, err := d.out.Write(q)
	d.wmu.Unlock()
	if err == nil {
		n = len(p)
	} else if len(q) != len(p) {
		n = 0 // how much of p the part of q written was is not told
	}
	d.mu.Lock()
	d.partial = append(d.partial, p[:n]...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		if id, ok := answered(d.partial[:i]); ok {
			delete(d.outstanding, id)
		}
		d.partial = d.partial[i+1:]
	}
	d.mu.Unlock()
	d.cond.Broadcast()
	return n, err
}

// answered reads the id of a response the SDK wrote. The SDK writes
// "jsonrpc", "id", then "method" (a request or notification of its own) or
// "result" or "error": the tokens up to there tell, however large or deep
// the result.
func answered(msg []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	var id jsonrpc.ID
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		switch key {
		case "method":
			return jsonrpc.ID{}, false
		case "result", "error":
			return id, id.IsValid()
		case "id":
			var v any
			if dec.Decode(&v) != nil {
				return jsonrpc.ID{}, false
			}
			if id, err = jsonrpc.MakeID(v); err != nil {
				return jsonrpc.ID{}, false
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return jsonrpc.ID{}, false
			}
		}
	}
	return jsonrpc.ID{}, false
}
