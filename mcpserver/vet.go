package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// What arrives on stdin is hostile. The SDK's stdio transport ends the
// session — answers still due are dropped — on the first line it cannot
// decode, so every line is vetted here first, with the SDK's own decoder
// (jsonrpc.DecodeMessage: its JSON parser, its nesting limit of 1000, its
// idea of an id), and only a line it accepts is passed on. Any other line
// is answered here as JSON-RPC 2.0 says: not JSON at all, -32700 Parse
// error with a null id; JSON but not a request, notification or response
// the SDK takes, -32600 Invalid Request with the line's id when it is a
// string or an integer, else null.

// verdict is what pump does with one line.
type verdict struct {
	skip   bool            // a blank line: nothing to pass on or answer
	reply  []byte          // not nil: write this answer, pass nothing on
	call   bool            // a request with an id: one answer will come
	method string          // the call's method
	id     jsonrpc.ID      // the call's id as the SDK reads it (and answers it)
	rawID  json.RawMessage // the id as sent, for an error answer of ours
}

// vet judges one line (its newline included or not).
func vet(line []byte) verdict {
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 {
		return verdict{skip: true}
	}
	// The SDK reads a frame with encoding/json's Decoder, which takes what
	// json.Valid takes; one value and nothing after it on the line.
	if !json.Valid(line) {
		var v any
		reason := json.Unmarshal(line, &v) // not nil: for its words only
		return verdict{reply: errorReply(nil, jsonrpc.CodeParseError, "Parse error", reason.Error())}
	}
	switch line[0] {
	case '[':
		// A batch (JSON-RPC 2.0; gone from MCP since 2025-06-18). The SDK
		// ends the session on an empty or malformed one and on any batch
		// after a 2025-06-18 initialize.
		return verdict{reply: errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "batches are not supported")}
	case '{':
	default:
		return verdict{reply: errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "not a JSON object")}
	}
	var fields map[string]json.RawMessage // exact keys, as the SDK matches them
	if err := json.Unmarshal(line, &fields); err != nil {
		return verdict{reply: errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", err.Error())}
	}
	rawID, hasID := fields["id"]
	var echo json.RawMessage // the id to answer an error with: null unless readable
	if hasID && (rawID[0] == '"' || rawID[0] == '-' || rawID[0] >= '0' && rawID[0] <= '9') {
		echo = rawID
	}
	if k, ok := dupKey(line); ok {
		if k == "id" {
			echo = nil // which one was meant cannot be told
		}
		return verdict{reply: errorReply(echo, jsonrpc.CodeInvalidRequest, "Invalid Request", "duplicate key "+clipMiddle(strconv.Quote(k)))}
	}
	if hasID && !goodID(rawID) {
		// null (MCP: an id must be a string or an integer; the SDK would
		// take a request with a null id for a notification and not answer
		// it), a fraction (the SDK would answer 1.5 as 1), an exponent
		// (1e3, answered as 1000), an integer past 53 bits (2^53+1,
		// answered as 2^53), or no number or string at all
		return verdict{reply: errorReply(echo, jsonrpc.CodeInvalidRequest, "Invalid Request", "id: must be a string or an integer of at most 53 bits")}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return verdict{reply: errorReply(echo, jsonrpc.CodeInvalidRequest, "Invalid Request", err.Error())}
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return verdict{} // a notification, or a response to a call of the server's
	}
	return verdict{call: true, method: req.Method, id: req.ID, rawID: rawID}
}

// dupKey returns the first member name that occurs twice in one object of
// line, valid JSON, at any depth: encoding/json, and so the SDK, would
// take the last one ("id":4,"id":5 answered as 5; a tool "name" given
// twice called as the second), which the sender may not mean. strata
// refuses a duplicate key in a state file for the same reason.
func dupKey(line []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	type object struct {
		keys    map[string]bool
		wantKey bool
	}
	var stack []*object // nil for an array
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &object{keys: map[string]bool{}, wantKey: true})
				continue
			case '[':
				stack = append(stack, nil)
				continue
			}
			stack = stack[:len(stack)-1] // '}' or ']': a value of its parent ended
		case string:
			if o := top(stack); o != nil && o.wantKey {
				if o.keys[t] {
					return t, true
				}
				o.keys[t], o.wantKey = true, false
				continue
			}
		}
		if o := top(stack); o != nil {
			o.wantKey = true // a member's value ended
		}
	}
}

func top[T any](s []*T) *T {
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

// maxID is the largest integer id: an integer of at most 53 bits. The SDK
// reads an id through a float64, which holds every integer up to 2^53
// exactly but rounds 2^53+1 to 2^53: past 53 bits two ids would be one.
const maxID = 1<<53 - 1

// goodID reports whether raw is an id the SDK reads back exactly: a string,
// or an integer literal (digits, an optional minus; no fraction, no
// exponent: the SDK would answer 1e3 as 1000) of at most 53 bits.
func goodID(raw json.RawMessage) bool {
	switch c := raw[0]; {
	case c == '"':
		return true
	case c == '-' || c >= '0' && c <= '9':
		digits := bytes.TrimPrefix(raw, []byte("-"))
		if len(digits) == 0 || len(digits) > len("9007199254740991") || bytes.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) {
			return false
		}
		n, err := strconv.ParseInt(string(digits), 10, 64)
		return err == nil && n <= maxID
	}
	return false
}

// errorReply is a JSON-RPC error response, one line: id is the request's id
// as sent, or nil for null.
func errorReply(id json.RawMessage, code int64, message, data string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message, Data: dataOf(data)}})
	if err != nil { // cannot be: every part is valid JSON
		panic(err)
	}
	return append(b, '\n')
}

func dataOf(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	b, _ := json.Marshal(s)
	return b
}
