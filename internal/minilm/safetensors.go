package minilm

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// safetensors is an open .safetensors file: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then
// the raw data. Tensors are read one at a time and converted to float32, so
// the file's bytes are never all held in memory next to the converted
// weights.
type safetensors struct {
	path     string
	f        *os.File
	dataOff  int64 // file offset of the data section
	dataSize int64
	tensors  map[string]stTensor
}

type stTensor struct {
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// maxHeaderBytes bounds the JSON header; real headers are a few KiB.
const maxHeaderBytes = 100 << 20

var dtypeSize = map[string]int64{"F16": 2, "BF16": 2, "F32": 4, "F64": 8, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}

func openSafetensors(path string) (*safetensors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := parseSafetensors(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return st, nil
}

func parseSafetensors(f *os.File, path string) (*safetensors, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: not a safetensors file: too short (%d bytes)", path, size)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen < 2 || hlen > maxHeaderBytes || int64(hlen) > size-8 {
		return nil, fmt.Errorf("%s: not a safetensors file or truncated: header length %d, file size %d", path, hlen, size)
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(f, header); err != nil {
		return nil, fmt.Errorf("%s: read header: %w", path, err)
	}
	var rawMap map[string]json.RawMessage
	if err := json.Unmarshal(header, &rawMap); err != nil {
		return nil, fmt.Errorf("%s: not a safetensors file: header is not JSON: %w", path, err)
	}
	st := &safetensors{path: path, f: f, dataOff: 8 + int64(hlen), dataSize: size - 8 - int64(hlen), tensors: map[string]stTensor{}}
	for name, raw := range rawMap {
		if name == "__metadata__" {
			continue
		}
		var t stTensor
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: bad header entry: %w", path, name, err)
		}
		if err := st.check(name, t); err != nil {
			return nil, err
		}
		st.tensors[name] = t
	}
	return st, nil
}

// check validates one header entry against the file so that reading it later
// can neither run past the end nor misinterpret the bytes.
func (st *safetensors) check(name string, t stTensor) error {
	es, ok := dtypeSize[t.DType]
	if !ok {
		return fmt.Errorf("%s: tensor %q has unknown dtype %q", st.path, name, t.DType)
	}
	if len(t.Offsets) != 2 {
		return fmt.Errorf("%s: tensor %q: data_offsets must have 2 entries", st.path, name)
	}
	begin, end := t.Offsets[0], t.Offsets[1]
	if begin < 0 || end < begin || end > st.dataSize {
		return fmt.Errorf("%s: tensor %q: data_offsets [%d, %d] outside the %d data bytes (truncated or corrupt file)", st.path, name, begin, end, st.dataSize)
	}
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > math.MaxInt64/es/d) {
			return fmt.Errorf("%s: tensor %q: bad shape %v", st.path, name, t.Shape)
		}
		n *= d
	}
	if n*es != end-begin {
		return fmt.Errorf("%s: tensor %q: shape %v of %s needs %d bytes, data_offsets give %d", st.path, name, t.Shape, t.DType, n*es, end-begin)
	}
	return nil
}

func (st *safetensors) Close() error { return st.f.Close() }

// lookup finds a tensor by its BERT name, accepting the "bert." prefix that
// checkpoints saved from BertForX models carry.
func (st *safetensors) lookup(name string) (string, stTensor, bool) {
	for _, n := range []string{name, "bert." + name} {
		if t, ok := st.tensors[n]; ok {
			return n, t, true
		}
	}
	return "", stTensor{}, false
}

// readInto reads tensor name, which must have exactly the given shape, into
// dst (len(dst) == product of shape) as float32.
func (st *safetensors) readInto(dst []float32, name string, shape ...int64) error {
	full, t, ok := st.lookup(name)
	if !ok {
		return fmt.Errorf("%s: tensor %q is missing (not a BERT/MiniLM checkpoint?)", st.path, name)
	}
	if !slices.Equal(t.Shape, shape) {
		return fmt.Errorf("%s: tensor %q has shape %v, config.json implies %v", st.path, full, t.Shape, shape)
	}
	var conv func(dst []float32, src []byte)
	switch t.DType {
	case "F16":
		conv = f16ToF32
	case "BF16":
		conv = bf16ToF32
	case "F32":
		conv = f32ToF32
	default:
		return fmt.Errorf("%s: tensor %q has dtype %s, want F16, BF16 or F32", st.path, full, t.DType)
	}
	es := dtypeSize[t.DType]
	if int64(len(dst))*es != t.Offsets[1]-t.Offsets[0] {
		return fmt.Errorf("%s: tensor %q: internal size mismatch", st.path, full)
	}
	// Convert in bounded chunks: the fp16 bytes never exist all at once.
	const chunkElems = 1 << 18
	buf := make([]byte, min(len(dst), chunkElems)*int(es))
	off := st.dataOff + t.Offsets[0]
	for done := 0; done < len(dst); {
		n := min(len(dst)-done, chunkElems)
		b := buf[:n*int(es)]
		if _, err := st.f.ReadAt(b, off); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("%s: read tensor %q: %w", st.path, full, err)
		}
		conv(dst[done:done+n], b)
		done += n
		off += int64(len(b))
	}
	for i, v := range dst {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%s: tensor %q holds a non-finite value at index %d (corrupt weights)", st.path, full, i)
		}
	}
	return nil
}

func f16ToF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = halfToFloat(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func bf16ToF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
	}
}

func f32ToF32(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

// halfToFloat converts an IEEE 754 binary16 value to float32 exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0: // zero or subnormal: mant × 2⁻²⁴
		f := float32(mant) / (1 << 24)
		return math.Float32frombits(math.Float32bits(f) | sign)
	case 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
