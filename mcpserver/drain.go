package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// drainWait bounds how long the end of input waits for answers.
const drainWait = 30 * time.Second

// drain lets the server answer every request it read before the end of its
// input ends the session: `strata mcp < requests.jsonl` answers them all
// (the SDK ends a session at EOF and drops calls still running). It counts
// requests read (messages with a method and an id) and responses written
// (messages with an id and no method), and reports EOF only once they match.
type drain struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending int
	pr      *io.PipeReader
	pw      *io.PipeWriter
	out     io.Writer
	partial []byte
}

func newDrain(in io.Reader, out io.Writer) *drain {
	d := &drain{out: out}
	d.cond = sync.NewCond(&d.mu)
	d.pr, d.pw = io.Pipe()
	go d.pump(in)
	return d
}

type probe struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (d *drain) pump(in io.Reader) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var p probe
			if json.Unmarshal(line, &p) == nil && p.Method != "" && len(p.ID) > 0 && string(p.ID) != "null" {
				d.mu.Lock()
				d.pending++
				d.mu.Unlock()
			}
			if _, werr := d.pw.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			d.waitAnswered()
			d.pw.CloseWithError(err)
			return
		}
	}
}

// waitAnswered waits until every request read has been answered, or
// drainWait has passed.
func (d *drain) waitAnswered() {
	deadline := time.AfterFunc(drainWait, func() {
		d.mu.Lock()
		d.pending = 0
		d.mu.Unlock()
		d.cond.Broadcast()
	})
	defer deadline.Stop()
	d.mu.Lock()
	for d.pending > 0 {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

func (d *drain) Read(p []byte) (int, error) { return d.pr.Read(p) }

func (d *drain) Close() error { return d.pr.Close() }

// Write passes the server's messages through, counting responses.
func (d *drain) Write(p []byte) (int, error) {
	n, err := d.out.Write(p)
	d.mu.Lock()
	d.partial = append(d.partial, p[:n]...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		var m probe
		if json.Unmarshal(d.partial[:i], &m) == nil && m.Method == "" && len(m.ID) > 0 && d.pending > 0 {
			d.pending--
		}
		d.partial = d.partial[i+1:]
	}
	d.mu.Unlock()
	d.cond.Broadcast()
	return n, err
}
