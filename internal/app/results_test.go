package app

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/writelock"
)

// TestAppResultsWriteTheDomainsJSON: each app type made from a domain
// value writes the same JSON as the domain value did (the JSON of the CLI,
// HTTP and MCP, which tests and clients read), with every field set, so
// that a field the domain gains and app does not carry fails here.
func TestAppResultsWriteTheDomainsJSON(t *testing.T) {
	tests := []struct {
		name    string
		domain  any
		convert func(any) any
	}{
		{"hit", &palace.Hit{}, func(v any) any { return SearchHit{Hit: Hit(*v.(*palace.Hit))} }},
		{"digest", &palace.Digest{}, func(v any) any { return wakeUpResultOf(*v.(*palace.Digest)) }},
		{"mine report", &palace.MineReport{}, func(v any) any { return mineReportOf(*v.(*palace.MineReport)) }},
		{"import", &capture.Result{}, func(v any) any { return importResultOf(*v.(*capture.Result)) }},
		{"restore", &reflector.RestoreResult{}, func(v any) any { return RestoreResult(*v.(*reflector.RestoreResult)) }},
		{"condense", &reflector.Result{}, func(v any) any { return condenseResult(*v.(*reflector.Result)) }},
		{"reflector backoff", &reflector.AgentState{}, func(v any) any { return reflectorBackoffOf(*v.(*reflector.AgentState)) }},
		{"index stats", &store.Stats{}, func(v any) any { return indexStatsOf(*v.(*store.Stats)) }},
		{"line", &memfile.Line{}, func(v any) any { return lineInfoOf(*v.(*memfile.Line)) }},
		{"lock holder", &writelock.Holder{}, func(v any) any { return LockHolder(*v.(*writelock.Holder)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill(reflect.ValueOf(tt.domain).Elem())
			want, err := json.Marshal(tt.domain)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tt.convert(tt.domain))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("app's JSON\n%s\nthe domain's\n%s", got, want)
			}
		})
	}
}

// TestAppResultsKeepEmptyListsAsTheDomainHadThem: a nil list stays nil
// (null, or left out) and an empty one empty ([]), as the domain wrote
// them.
func TestAppResultsKeepEmptyListsAsTheDomainHadThem(t *testing.T) {
	tests := []struct {
		name         string
		domain, conv any
	}{
		{"nil skips", palace.MineReport{}, mineReportOf(palace.MineReport{})},
		{"empty skips", palace.MineReport{Skipped: []palace.Skip{}}, mineReportOf(palace.MineReport{Skipped: []palace.Skip{}})},
		{"nil wings", store.Stats{}, indexStatsOf(store.Stats{})},
		{"empty wings", store.Stats{Wings: []store.WingStats{}}, indexStatsOf(store.Stats{Wings: []store.WingStats{}})},
		{"empty digest", palace.Digest{Recent: []palace.RecentItem{}}, wakeUpResultOf(palace.Digest{Recent: []palace.RecentItem{}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, _ := json.Marshal(tt.domain)
			got, _ := json.Marshal(tt.conv)
			if string(got) != string(want) {
				t.Errorf("app's JSON %s, the domain's %s", got, want)
			}
		})
	}
}

// fill sets every settable field of v, recursively, to a value that is
// not zero (one element in a list or a map), so that JSON writes it.
func fill(v reflect.Value) {
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s-" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	}
}
