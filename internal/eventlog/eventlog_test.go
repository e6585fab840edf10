package eventlog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendReadSubscribe(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "hive", "log.jsonl"))
	ch, stop := l.Subscribe()
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := l.Append(Event{Kind: "mine", Agent: "a", Data: map[string]any{"i": i}}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	all, err := l.Read(0, nil)
	if err != nil || len(all) != 50 {
		t.Fatalf("Read = %d events, %v", len(all), err)
	}
	last, _ := l.Read(7, nil)
	if len(last) != 7 || last[6].Data["i"] != all[49].Data["i"] {
		t.Fatalf("Read(7) = %v", last)
	}
	if got := len(ch); got != 50 {
		t.Fatalf("subscriber saw %d events", got)
	}
	// A torn or foreign line is skipped, not fatal.
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n")
	f.Close()
	l.Append(Event{Kind: "restore"})
	got, err := l.Read(0, func(e Event) bool { return e.Kind == "restore" })
	if err != nil || len(got) != 1 {
		t.Fatalf("filtered Read = %v, %v", got, err)
	}
}

func TestAppendWritesTheHarnessLineForm(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "log.jsonl"))
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	if err := l.Append(Event{Time: at, Kind: "condense-abort", Agent: "a", Reason: "not-smaller",
		Data: map[string]any{"oldBytes": 10, "detail": "x", "kind": "ignored"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Event{Kind: "mine"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	want0 := `{"ts":1796119200123,"kind":"condense-abort","agentId":"a","reason":"not-smaller","detail":"x","oldBytes":10}`
	if lines[0] != want0 {
		t.Errorf("line = %s\nwant   %s", lines[0], want0)
	}
	// The harness's reader: JSON.parse, ts a number, kind and agentId strings.
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if _, ok := m["ts"].(float64); !ok {
			t.Errorf("%s: ts is not a number", line)
		}
		if _, ok := m["kind"].(string); !ok {
			t.Errorf("%s: kind is not a string", line)
		}
		if _, ok := m["agentId"].(string); !ok {
			t.Errorf("%s: agentId is not a string", line)
		}
	}
}

func TestParseLineReadsEitherProgramsLines(t *testing.T) {
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name, line string
		want       Event
		bad        bool
	}{
		{name: "harness spawn", line: `{"ts":1796119200000,"kind":"spawn","agentId":"coder","pid":42}`,
			want: Event{Time: ts, Kind: "spawn", Agent: "coder", Data: map[string]any{"pid": float64(42)}}},
		{name: "harness condense", line: `{"ts":1796119200000,"kind":"condense","agentId":"a","oldBytes":9000,"newBytes":3000,"evicted":5,"kept":12,"hoisted":1,"backup":"/h/b"}`,
			want: Event{Time: ts, Kind: "condense", Agent: "a", Data: map[string]any{"oldBytes": float64(9000), "newBytes": float64(3000), "evicted": float64(5), "kept": float64(12), "hoisted": float64(1), "backup": "/h/b"}}},
		{name: "harness abort", line: `{"ts":1796119200000,"kind":"condense-abort","agentId":"a","reason":"too-small"}`,
			want: Event{Time: ts, Kind: "condense-abort", Agent: "a", Reason: "too-small"}},
		{name: "harness app-start without agent", line: `{"ts":1796119200000,"kind":"app-start"}`,
			want: Event{Time: ts, Kind: "app-start"}},
		{name: "unknown kind kept plainly", line: `{"ts":1796119200000,"kind":"weird-new-thing","agentId":"x","n":[1,2]}`,
			want: Event{Time: ts, Kind: "weird-new-thing", Agent: "x", Data: map[string]any{"n": []any{float64(1), float64(2)}}}},
		{name: "string ts", line: `{"ts":"2026-12-01T10:00:00Z","kind":"drain","agentId":"b"}`,
			want: Event{Time: ts, Kind: "drain", Agent: "b"}},
		{name: "old hivemem form", line: `{"time":"2026-12-01T10:00:00Z","type":"condense-abort","agent":"a","reason":"locked","data":{"message":"busy"}}`,
			want: Event{Time: ts, Kind: "condense-abort", Agent: "a", Reason: "locked", Data: map[string]any{"message": "busy"}}},
		{name: "not json", line: `{not json`, bad: true},
		{name: "array", line: `[1,2]`, bad: true},
		{name: "no kind", line: `{"ts":1,"agentId":"a"}`, bad: true},
		{name: "kind not a string", line: `{"ts":1,"kind":7}`, bad: true},
		{name: "empty kind", line: `{"ts":1,"kind":""}`, bad: true},
		{name: "ts not a time", line: `{"ts":true,"kind":"spawn"}`, bad: true},
		{name: "agentId not a string", line: `{"ts":1,"kind":"spawn","agentId":3}`, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLine([]byte(tc.line))
			if tc.bad {
				if !errors.Is(err, ErrNotEvent) {
					t.Fatalf("ParseLine = %+v, %v; want ErrNotEvent", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Time.Equal(tc.want.Time) || got.Kind != tc.want.Kind || got.Agent != tc.want.Agent || got.Reason != tc.want.Reason || !reflect.DeepEqual(got.Data, tc.want.Data) {
				t.Errorf("ParseLine = %+v\nwant        %+v", got, tc.want)
			}
		})
	}
}

func TestMarshalLineRoundTrips(t *testing.T) {
	ev := Event{Time: time.UnixMilli(1796119200123).UTC(), Kind: "restore", Agent: "a",
		Data: map[string]any{"backup": "20261201T100000Z", "oldBytes": float64(3)}}
	line, err := MarshalLine(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseLine(line)
	if err != nil || !got.Time.Equal(ev.Time) || got.Kind != ev.Kind || got.Agent != ev.Agent || !reflect.DeepEqual(got.Data, ev.Data) {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, ev)
	}
	if _, err := MarshalLine(Event{}); err == nil {
		t.Error("an event with no kind encodes")
	}
}

func TestReadCountedSkipsMalformedLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	lines := `{"ts":1796119200000,"kind":"spawn","agentId":"a"}
{torn
{"time":"2026-12-01T10:00:00Z","type":"mine","agent":"a"}

{"no":"kind"}
{"ts":1796119200000,"kind":"condense","agentId":"a","oldBytes":1}
`
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, skipped, err := Open(p).ReadCounted(0, nil)
	if err != nil || len(evs) != 3 || skipped != 2 {
		t.Fatalf("ReadCounted = %d events, %d skipped, %v; want 3, 2", len(evs), skipped, err)
	}
	if evs[0].Kind != "spawn" || evs[1].Kind != "mine" || evs[2].Kind != "condense" {
		t.Errorf("events = %+v", evs)
	}
}
