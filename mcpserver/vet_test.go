package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

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
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "  \r\n", "\xff\xfe",
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
		}
	})
}
