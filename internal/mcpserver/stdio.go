package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioLineBytes caps one line (one JSON-RPC message) read by the stdio
// transport; a longer line is answered with an invalid-request error and
// dropped.
const MaxStdioLineBytes = mcp.DefaultMaxLineLength

// StdioTransport is the transport of `hivemem mcp`: newline-delimited
// JSON-RPC on r and w, as mcp.IOTransport, except that a malformed line
// does not end the session. The SDK's transport returns a read error for
// any line it cannot decode (invalid JSON, a bare string, an object id, a
// wrong "jsonrpc" version, two objects on one line...), and the session
// dies with it. Here every line is checked first: a line that is not a
// single JSON value is answered with a parse error (-32700), one that is
// not a JSON-RPC 2.0 message (a batch included: batching is gone from MCP
// since 2025-06-18) with an invalid-request error (-32600), both with id
// null as JSON-RPC 2.0 says; the line is dropped and the next one read.
// Only valid messages reach the SDK. Closing r (EOF) ends the session.
//
// w receives whole lines only: the SDK writes each message in one Write,
// and the errors are written under the same lock.
func StdioTransport(r io.Reader, w io.Writer, lg *slog.Logger) mcp.Transport {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &stdioTransport{r: r, w: &lockedWriter{w: w}, log: lg}
}

type stdioTransport struct {
	r   io.Reader
	w   *lockedWriter
	log *slog.Logger
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	go t.filter(pw)
	return (&mcp.IOTransport{Reader: pr, Writer: t.w}).Connect(ctx)
}

// filter copies the valid lines of t.r to pw, answers the others, and
// closes pw at the end of t.r; it stops when the session closes its end.
func (t *stdioTransport) filter(pw *io.PipeWriter) {
	br := bufio.NewReaderSize(t.r, 64<<10)
	for {
		line, tooLong, err := readLine(br, MaxStdioLineBytes)
		if len(line) > 0 || tooLong {
			if ok := t.pass(line, tooLong, pw); !ok {
				return // the session is gone
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.log.Warn("mcp stdio: read", "err", err)
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// pass forwards one line to the SDK or answers it with an error. It
// reports false once the SDK side is closed.
func (t *stdioTransport) pass(line []byte, tooLong bool, pw *io.PipeWriter) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 && !tooLong {
		return true // a blank line is no message
	}
	code, msg := checkMessage(trimmed, tooLong)
	if code != 0 {
		t.log.Warn("mcp stdio: malformed message dropped", "code", code, "err", msg, "bytes", len(line))
		if err := t.w.writeError(code, msg); err != nil {
			t.log.Warn("mcp stdio: answer malformed message", "err", err)
		}
		return true
	}
	if _, err := pw.Write(append(trimmed, '\n')); err != nil {
		return false
	}
	return true
}

// checkMessage returns 0 for a line the SDK can take as one JSON-RPC 2.0
// message, else the JSON-RPC error code and message to answer with.
func checkMessage(line []byte, tooLong bool) (int, string) {
	switch {
	case tooLong:
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message longer than %d bytes", MaxStdioLineBytes)
	case !json.Valid(line):
		return jsonrpc.CodeParseError, "parse error: a line must hold exactly one JSON value"
	case line[0] == '[':
		return jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported"
	case line[0] != '{':
		return jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message: " + err.Error()
	}
	if _, ok := msg.(*jsonrpc.Response); ok {
		// No method: a response, which holds a result or an error.
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(line, &keys); err != nil {
			return jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
		}
		_, hasResult := keys["result"]
		_, hasError := keys["error"]
		if hasResult == hasError {
			return jsonrpc.CodeInvalidRequest, `invalid request: no "method" (a request needs one; a response needs one of "result" and "error")`
		}
	}
	return 0, ""
}

// readLine reads one line without its newline. A line longer than max is
// read to its end and dropped: tooLong is set and line is nil.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, tooLong, err
		}
	}
}

// lockedWriter makes each Write whole with respect to the others.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not close the underlying writer (stdout stays open).
func (l *lockedWriter) Close() error { return nil }

// writeError writes a JSON-RPC error response with id null.
func (l *lockedWriter) writeError(code int, msg string) error {
	data, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: int64(code), Message: msg}})
	if err != nil {
		return err
	}
	_, err = l.Write(append(data, '\n'))
	return err
}
