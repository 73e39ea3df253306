package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// An id is a string or an integer literal of at most 53 bits: the SDK reads
// every other number to a float64 it answers with, a different id.
func TestGoodID(t *testing.T) {
	for raw, want := range map[string]bool{
		`"x"`: true, `""`: true, `0`: true, `-0`: true, `7`: true, `-1`: true,
		`9007199254740991`: true, `-9007199254740991`: true,
		`9007199254740992`: false, `-9007199254740992`: false, // 2^53: 54 bits
		`9007199254740993`: false, `-9007199254740993`: false, // read as 2^53
		`18446744073709551616`: false, `123456789012345678901234567890`: false,
		`1e3`: false, `1E3`: false, `1e+3`: false, `10e-1`: false, `1.5`: false, `1000.0`: false, `1e400`: false,
		`null`: false, `true`: false, `{}`: false, `[1]`: false,
	} {
		if got := goodID(json.RawMessage(raw)); got != want {
			t.Errorf("goodID(%s) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzVet feeds vet any line, as stdin may hold: it never panics; its
// answer, when it gives one, is one line of JSON-RPC 2.0 error; and a line
// it passes on is one the SDK's own decoder takes (so the SDK never ends
// the session on it).
func FuzzVet(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{oops`, `null`, `[]`, `123`, `"x"`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, "  \r\n", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v := vet(line)
		switch {
		case v.skip:
			if len(bytes.Trim(line, " \t\r\n")) != 0 {
				t.Fatalf("skipped a line that is not blank: %q", line)
			}
		case v.reply != nil:
			if bytes.Count(v.reply, []byte("\n")) != 1 || v.reply[len(v.reply)-1] != '\n' {
				t.Fatalf("answer is not one line: %q", v.reply)
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal(v.reply, &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil || resp.ID == nil {
				t.Fatalf("answer is not a JSON-RPC error: %q (%v)", v.reply, err)
			}
		default:
			if _, err := jsonrpc.DecodeMessage(bytes.Trim(line, " \t\r\n")); err != nil {
				t.Fatalf("passed on a line the SDK refuses: %q: %v", line, err)
			}
			if n, ok := v.id.Raw().(int64); v.call && ok && string(v.rawID) != strconv.FormatInt(n, 10) {
				t.Fatalf("passed on id %s, which the SDK answers as %d", v.rawID, n)
			}
		}
	})
}

// dupKey finds a member name given twice in one object, at any depth, and
// nothing else: the same name in sibling or nested objects is no duplicate.
func TestDupKey(t *testing.T) {
	for line, want := range map[string]string{
		`{"id":4,"id":5}`:                             "id",
		`{"a":1,"b":{"c":[1,{"d":1,"d":2}]}}`:         "d",
		`{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"a"}`: "",
		`{"a":[],"b":{},"a":0}`:                       "a",
		`{"a":"b","b":"a"}`:                           "",
		`[{"x":1},{"x":1}]`:                           "",
		`{"\u0061":1,"a":2}`:                          "a", // the same name, escaped
	} {
		got, ok := dupKey([]byte(line))
		if got != want || ok != (want != "") {
			t.Errorf("dupKey(%s) = %q, %v; want %q", line, got, ok, want)
		}
	}
}
