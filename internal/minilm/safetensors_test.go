package minilm

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
)

// stEntry is one tensor to write into a test safetensors file.
type stEntry struct {
	dtype string
	shape []int64
	data  []float32
}

// encodeSafetensors builds a safetensors file (F32 or F16 tensors).
func encodeSafetensors(t testing.TB, tensors map[string]stEntry) []byte {
	t.Helper()
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, n := range names {
		e := tensors[n]
		begin := len(data)
		for _, v := range e.data {
			switch e.dtype {
			case "F32":
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
			case "F16":
				data = binary.LittleEndian.AppendUint16(data, floatToHalf(v))
			default:
				t.Fatalf("test cannot encode %s", e.dtype)
			}
		}
		header[n] = map[string]any{"dtype": e.dtype, "shape": e.shape, "data_offsets": []int{begin, len(data)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	return append(out, data...)
}

// floatToHalf rounds to the nearest binary16 (normal range only: enough for
// test data).
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	if f == 0 {
		return sign
	}
	if exp <= 0 || exp >= 31 {
		panic("floatToHalf: out of test range")
	}
	h := uint32(exp)<<10 | mant>>13
	if mant&0x1fff > 0x1000 || (mant&0x1fff == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

func TestHalfToFloat(t *testing.T) {
	tests := []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0},
		{0x3c00, 1},
		{0xc000, -2},
		{0x3555, 0.333251953125},
		{0x7bff, 65504},
		{0x0400, 6.103515625e-05},        // smallest normal
		{0x0001, 5.960464477539063e-08},  // smallest subnormal
		{0x03ff, 6.097555160522461e-05},  // largest subnormal
		{0x8001, -5.960464477539063e-08}, // negative subnormal
		{0x7c00, float32(math.Inf(1))},   // +Inf
		{0xfc00, float32(math.Inf(-1))},  // -Inf
	}
	for _, tc := range tests {
		if got := halfToFloat(tc.h); got != tc.want {
			t.Errorf("halfToFloat(%#04x) = %g, want %g", tc.h, got, tc.want)
		}
	}
	if got := halfToFloat(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("halfToFloat(0x8000) = %g, want -0", got)
	}
	if got := halfToFloat(0x7e00); !math.IsNaN(float64(got)) {
		t.Errorf("halfToFloat(0x7e00) = %g, want NaN", got)
	}
	// Every finite half converts exactly: converting back gives the same bits.
	for h := range uint32(1 << 16) {
		f := halfToFloat(uint16(h))
		exp := (h >> 10) & 0x1f
		if exp == 0 || exp == 0x1f {
			continue
		}
		if back := floatToHalf(f); back != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
	}
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	return filetest.Temp(t, "model.safetensors", string(data))
}

func TestSafetensorsErrors(t *testing.T) {
	good := encodeSafetensors(t, map[string]stEntry{
		"a": {"F16", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		"b": {"F32", []int64{2}, []float32{7, 8}},
	})
	header := func(h string) []byte {
		return append(binary.LittleEndian.AppendUint64(nil, uint64(len(h))), append([]byte(h), make([]byte, 16)...)...)
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"empty", nil, "too short"},
		{"short", []byte{1, 2, 3}, "too short"},
		{"header past end", binary.LittleEndian.AppendUint64(nil, 1<<20), "truncated"},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<62), "header length"},
		{"not json", header("{not json"), "header is not JSON"},
		{"gguf", append([]byte("GGUF"), make([]byte, 64)...), "not a safetensors file"},
		{"unknown dtype", header(`{"x":{"dtype":"Q4","shape":[2],"data_offsets":[0,2]}}`), "unknown dtype"},
		{"offsets past data", header(`{"x":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}}`), "outside the 16 data bytes"},
		{"shape vs offsets", header(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`), "needs 12 bytes"},
		{"negative dim", header(`{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`), "bad shape"},
		{"reversed offsets", header(`{"x":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`), "outside"},
		{"bad entry", header(`{"x":[1,2]}`), "bad header entry"},
		{"truncated data", good[:len(good)-3], "outside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := openSafetensors(writeFile(t, tc.data))
			if err == nil {
				st.Close()
				t.Fatalf("opened a bad file, want error %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}

	st, err := openSafetensors(writeFile(t, good))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dst := make([]float32, 6)
	if err := st.readInto(dst, "a", 2, 3); err != nil {
		t.Fatal(err)
	}
	if dst[5] != 6 || dst[0] != 1 {
		t.Errorf("read %v", dst)
	}
	readErrs := []struct {
		name    string
		shape   []int64
		wantErr string
	}{
		{"a", []int64{3, 2}, "has shape [2 3], config.json implies [3 2]"},
		{"missing", []int64{2}, `tensor "missing" is missing`},
	}
	for _, tc := range readErrs {
		if err := st.readInto(make([]float32, 6), tc.name, tc.shape...); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("readInto(%s, %v) err = %v, want %q", tc.name, tc.shape, err, tc.wantErr)
		}
	}
	b := make([]float32, 2)
	if err := st.readInto(b, "b", 2); err != nil || b[0] != 7 || b[1] != 8 {
		t.Errorf("F32 read: %v, %v", b, err)
	}
}

func TestSafetensorsNonFinite(t *testing.T) {
	data := encodeSafetensors(t, map[string]stEntry{"x": {"F32", []int64{2}, []float32{1, float32(math.NaN())}}})
	st, err := openSafetensors(writeFile(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.readInto(make([]float32, 2), "x", 2); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Fatalf("err = %v, want non-finite", err)
	}
}
