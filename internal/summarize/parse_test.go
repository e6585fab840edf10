package summarize

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	const obj = `{"condensed": "- kept fact", "hoist": ["use flock for locks"]}`
	quoted, _ := json.Marshal(obj)
	envelope, _ := json.Marshal(map[string]any{
		"type": "result", "subtype": "success", "is_error": false, "result": obj, "session_id": "x",
	})
	fencedEnvelope, _ := json.Marshal(map[string]any{"type": "result", "result": "```json\n" + obj + "\n```"})
	errorEnvelope, _ := json.Marshal(map[string]any{"type": "result", "is_error": true, "result": "Credit balance is too low"})
	want := Result{Condensed: "- kept fact", Hoist: []string{"use flock for locks"}}

	tests := []struct {
		name    string
		reply   string
		want    Result
		wantErr string // substring; "" means success
	}{
		{name: "bare object", reply: obj, want: want},
		{name: "surrounding whitespace", reply: "\n\n  " + obj + "  \n", want: want},
		{name: "json fence", reply: "```json\n" + obj + "\n```", want: want},
		{name: "plain fence", reply: "```\n" + obj + "\n```\n", want: want},
		{name: "JSON string", reply: string(quoted), want: want},
		{name: "claude envelope", reply: string(envelope), want: want},
		{name: "fence inside envelope", reply: string(fencedEnvelope), want: want},
		{name: "empty hoist", reply: `{"condensed":"x","hoist":[]}`, want: Result{Condensed: "x", Hoist: []string{}}},
		{name: "trims and collapses", reply: `{"condensed":"  x\n","hoist":["  a\n  b ", "", "   "]}`, want: Result{Condensed: "x", Hoist: []string{"a b"}}},
		{name: "demotes headings", reply: `{"condensed":"## 2026-01-01 x\n# top\n- y","hoist":[]}`, want: Result{Condensed: "### 2026-01-01 x\n### top\n- y", Hoist: []string{}}},
		{name: "headings in fence kept", reply: `{"condensed":"- a\n` + "```" + `\n## code\n` + "```" + `","hoist":[]}`, want: Result{Condensed: "- a\n```\n## code\n```", Hoist: []string{}}},
		{name: "closes open fence", reply: `{"condensed":"- a\n` + "````" + `md\n## b","hoist":[]}`, want: Result{Condensed: "- a\n````md\n## b\n````", Hoist: []string{}}},

		{name: "empty", reply: "  \n", wantErr: "reply is empty"},
		{name: "prose", reply: "Here is the summary: " + obj, wantErr: "not JSON"},
		{name: "prose around fence", reply: "Sure!\n```json\n" + obj + "\n```", wantErr: "not JSON"},
		{name: "unclosed fence", reply: "```json\n" + obj, wantErr: "not closed"},
		{name: "other fence language", reply: "```python\n" + obj + "\n```", wantErr: `"python"`},
		{name: "trailing text", reply: obj + " thanks", wantErr: "after the JSON"},
		{name: "two objects", reply: obj + obj, wantErr: "after the JSON"},
		{name: "array", reply: `["x"]`, wantErr: "JSON an array, want an object"},
		{name: "number", reply: `42`, wantErr: "a number, want an object"},
		{name: "missing condensed", reply: `{"summary":"x","hoist":[]}`, wantErr: `no "condensed" key (keys: "hoist", "summary")`},
		{name: "empty condensed", reply: `{"condensed":"  ","hoist":[]}`, wantErr: `"condensed" is empty`},
		{name: "condensed not string", reply: `{"condensed":["x"],"hoist":[]}`, wantErr: `"condensed" is an array`},
		{name: "missing hoist", reply: `{"condensed":"x"}`, wantErr: `"hoist" is missing`},
		{name: "null hoist", reply: `{"condensed":"x","hoist":null}`, wantErr: `"hoist" is null`},
		{name: "hoist string", reply: `{"condensed":"x","hoist":"a"}`, wantErr: `"hoist" is a string`},
		{name: "hoist item not string", reply: `{"condensed":"x","hoist":["a",1]}`, wantErr: `"hoist"[1] is a number`},
		{name: "extra key", reply: `{"condensed":"x","hoist":[],"notes":"y"}`, wantErr: `unexpected key(s) "notes"`},
		{name: "error envelope", reply: string(errorEnvelope), wantErr: "Credit balance is too low"},
		{name: "envelope result not string", reply: `{"type":"result","result":42}`, wantErr: `"result" is a number`},
		{name: "envelope result prose", reply: `{"type":"result","result":"I cannot do that"}`, wantErr: "envelope result: reply is not JSON"},
		{name: "too deep", reply: deepString(obj, 6), wantErr: "too many envelopes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.reply)
			if !checkErr(t, err, tt.wantErr) {
				return
			}
			if got.Condensed != tt.want.Condensed || !slices.Equal(got.Hoist, tt.want.Hoist) {
				t.Fatalf("Parse = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// deepString wraps s in n levels of JSON string quoting.
func deepString(s string, n int) string {
	for range n {
		b, _ := json.Marshal(s)
		s = string(b)
	}
	return s
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Provider: "anthropic", Reason: ReasonFailed, Status: 529, Message: "overloaded_error: Overloaded"}, "summarize (anthropic): HTTP 529: overloaded_error: Overloaded"},
		{&Error{Provider: "claude-cli", Reason: ReasonFailed, Message: "timed out after 5m0s"}, "summarize (claude-cli): timed out after 5m0s"},
		{&Error{Reason: ReasonFailed}, "summarize: summarize-failed"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
