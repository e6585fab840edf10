package minilm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/kernel"
)

// A tiny random BERT (hidden 8, 2 heads, 2 layers, FFN 16) written to disk
// in the real file formats, so that loading and the forward pass are tested
// without the real model and against an independent, naive float64
// implementation of the same equations.
const (
	tinyH, tinyHeads, tinyLayers, tinyI = 8, 2, 2, 16
	tinyMaxPos, tinyTypes               = Window, 2
)

var tinyVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", ",", "a", "cat", "dog", "##gy", "!"}

type tinyModel struct {
	dir     string
	tensors map[string]stEntry
}

func tinyTokenizerJSON() []byte {
	vocab := map[string]int{}
	for i, w := range tinyVocab {
		vocab[w] = i
	}
	var added []map[string]any
	for i, w := range tinyVocab[:5] {
		added = append(added, map[string]any{"id": i, "content": w, "special": true, "normalized": false})
	}
	tj := map[string]any{
		"added_tokens":  added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, _ := json.Marshal(tj)
	return b
}

func tinyConfigJSON() []byte {
	b, _ := json.Marshal(map[string]any{
		"model_type": "bert", "hidden_act": "gelu", "hidden_size": tinyH, "num_attention_heads": tinyHeads,
		"num_hidden_layers": tinyLayers, "intermediate_size": tinyI, "layer_norm_eps": 1e-12,
		"max_position_embeddings": tinyMaxPos, "vocab_size": len(tinyVocab), "type_vocab_size": tinyTypes,
		"position_embedding_type": "absolute",
	})
	return b
}

func newTinyModel(t testing.TB, dtype string) *tinyModel {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(shape ...int64) stEntry {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.5)
			if dtype == "F16" {
				v[i] = halfToFloat(floatToHalf(v[i])) // exactly representable
			}
		}
		return stEntry{dtype, shape, v}
	}
	h, i := int64(tinyH), int64(tinyI)
	ts := map[string]stEntry{
		"embeddings.word_embeddings.weight":       rnd(int64(len(tinyVocab)), h),
		"embeddings.position_embeddings.weight":   rnd(tinyMaxPos, h),
		"embeddings.token_type_embeddings.weight": rnd(tinyTypes, h),
		"embeddings.LayerNorm.weight":             rnd(h),
		"embeddings.LayerNorm.bias":               rnd(h),
		"pooler.dense.weight":                     rnd(h, h), // present in real files, unused
	}
	for l := range tinyLayers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, n := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"} {
			ts[p+n+".weight"] = rnd(h, h)
			ts[p+n+".bias"] = rnd(h)
		}
		ts[p+"intermediate.dense.weight"] = rnd(i, h)
		ts[p+"intermediate.dense.bias"] = rnd(i)
		ts[p+"output.dense.weight"] = rnd(h, i)
		ts[p+"output.dense.bias"] = rnd(h)
		for _, n := range []string{"attention.output.LayerNorm", "output.LayerNorm"} {
			ts[p+n+".weight"] = rnd(h)
			ts[p+n+".bias"] = rnd(h)
		}
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"model.fp16.safetensors": encodeSafetensors(t, ts),
		"tokenizer.json":         tinyTokenizerJSON(),
		"config.json":            tinyConfigJSON(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &tinyModel{dir: dir, tensors: ts}
}

// reference is a naive float64 BERT forward pass + mean pooling + L2 norm.
func (tm *tinyModel) reference(ids []int) []float64 {
	w := func(name string) []float64 {
		e := tm.tensors[name]
		out := make([]float64, len(e.data))
		for i, v := range e.data {
			out[i] = float64(v)
		}
		return out
	}
	linear := func(x []float64, rows int, W, b []float64, in, out int) []float64 {
		y := make([]float64, rows*out)
		for r := range rows {
			for o := range out {
				s := b[o]
				for k := range in {
					s += x[r*in+k] * W[o*in+k]
				}
				y[r*out+o] = s
			}
		}
		return y
	}
	ln := func(x []float64, rows int, g, b []float64) {
		for r := range rows {
			row := x[r*tinyH : (r+1)*tinyH]
			var mean, vs float64
			for _, v := range row {
				mean += v
			}
			mean /= tinyH
			for _, v := range row {
				vs += (v - mean) * (v - mean)
			}
			vs /= tinyH
			for j := range row {
				row[j] = (row[j]-mean)/math.Sqrt(vs+1e-12)*g[j] + b[j]
			}
		}
	}
	L := len(ids)
	we, pe, te := w("embeddings.word_embeddings.weight"), w("embeddings.position_embeddings.weight"), w("embeddings.token_type_embeddings.weight")
	x := make([]float64, L*tinyH)
	for p, id := range ids {
		for j := range tinyH {
			x[p*tinyH+j] = we[id*tinyH+j] + pe[p*tinyH+j] + te[j]
		}
	}
	ln(x, L, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
	d := tinyH / tinyHeads
	for l := range tinyLayers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		q := linear(x, L, w(p+"attention.self.query.weight"), w(p+"attention.self.query.bias"), tinyH, tinyH)
		k := linear(x, L, w(p+"attention.self.key.weight"), w(p+"attention.self.key.bias"), tinyH, tinyH)
		v := linear(x, L, w(p+"attention.self.value.weight"), w(p+"attention.self.value.bias"), tinyH, tinyH)
		ctx := make([]float64, L*tinyH)
		for h := range tinyHeads {
			for i := range L {
				scores := make([]float64, L)
				mx := math.Inf(-1)
				for j := range L {
					var s float64
					for c := range d {
						s += q[i*tinyH+h*d+c] * k[j*tinyH+h*d+c]
					}
					scores[j] = s / math.Sqrt(float64(d))
					mx = math.Max(mx, scores[j])
				}
				var sum float64
				for j := range scores {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				for j := range L {
					for c := range d {
						ctx[i*tinyH+h*d+c] += scores[j] / sum * v[j*tinyH+h*d+c]
					}
				}
			}
		}
		a := linear(ctx, L, w(p+"attention.output.dense.weight"), w(p+"attention.output.dense.bias"), tinyH, tinyH)
		for j := range a {
			a[j] += x[j]
		}
		ln(a, L, w(p+"attention.output.LayerNorm.weight"), w(p+"attention.output.LayerNorm.bias"))
		hid := linear(a, L, w(p+"intermediate.dense.weight"), w(p+"intermediate.dense.bias"), tinyH, tinyI)
		for j, v := range hid {
			hid[j] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
		}
		o := linear(hid, L, w(p+"output.dense.weight"), w(p+"output.dense.bias"), tinyI, tinyH)
		for j := range o {
			o[j] += a[j]
		}
		ln(o, L, w(p+"output.LayerNorm.weight"), w(p+"output.LayerNorm.bias"))
		x = o
	}
	pooled := make([]float64, tinyH)
	for p := range L {
		for j := range tinyH {
			pooled[j] += x[p*tinyH+j] / float64(L)
		}
	}
	var ss float64
	for _, v := range pooled {
		ss += v * v
	}
	for j := range pooled {
		pooled[j] /= math.Sqrt(ss)
	}
	return pooled
}

// TestTinyModelMatchesReference checks the forward pass against a float64
// reference, with the Linear layers in float32 (to 2e-4) and as Load packs
// them, in bfloat16 where the CPU has it (to 2e-3).
func TestTinyModelMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		dtype, pack string
	}{{"F32", "exact"}, {"F16", "exact"}, {"F32", "Load"}, {"F16", "Load"}} {
		t.Run(tc.dtype+"/"+tc.pack, func(t *testing.T) {
			tm := newTinyModel(t, tc.dtype)
			pack, tol := kernel.Pack, 2e-4
			if tc.pack == "Load" {
				pack, tol = kernel.PackBF16, 2e-3
			}
			m, err := load(tm.dir, pack)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dim() != tinyH {
				t.Fatalf("Dim = %d", m.Dim())
			}
			texts := []string{"hello world", "", "Hello, dogs!", "a cat, a doggy", "zebra", strings.Repeat("cat ", 300)}
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				ids := m.Tokenizer().Encode(text)
				want := tm.reference(ids)
				for j := range want {
					if math.Abs(float64(got[i][j])-want[j]) > tol {
						t.Errorf("%q (ids %v): got %v\nwant %v", text, ids, got[i], want)
						break
					}
				}
			}
		})
	}
}

func TestTinyTokenizer(t *testing.T) {
	tok, err := parseTokenizer(tinyTokenizerJSON())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"Hello, dogs!", []int{2, 5, 8, 11, 7, 13, 3}},
		{"doggy", []int{2, 11, 12, 3}},
		{"zebra", []int{2, 1, 3}},
		{"[MASK]cat", []int{2, 4, 10, 3}},
	}
	for _, tc := range tests {
		if got := tok.Encode(tc.text); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, dir string)
		wantErr string
	}{
		{"missing weights", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "model.fp16.safetensors")) }, "model.fp16.safetensors not found"},
		{"missing tokenizer", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "tokenizer.json")) }, "hivemem model fetch"},
		{"truncated weights", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model.fp16.safetensors")
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()-100); err != nil {
				t.Fatal(err)
			}
		}, "truncated or corrupt"},
		{"foreign weights", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "model.fp16.safetensors"), encodeSafetensors(t, map[string]stEntry{"lm_head.weight": {"F32", []int64{1}, []float32{1}}}), 0o644)
		}, "is missing (not a BERT/MiniLM checkpoint?)"},
		{"config disagrees", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.Replace(string(tinyConfigJSON()), `"intermediate_size":16`, `"intermediate_size":32`, 1)), 0o644)
		}, "config.json implies [32 8]"},
		{"vocab too small", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.Replace(string(tinyConfigJSON()), `"vocab_size":14`, `"vocab_size":10`, 1)), 0o644)
		}, "outside the model's vocab_size 10"},
		{"tanh gelu", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.Replace(string(tinyConfigJSON()), `"gelu"`, `"gelu_new"`, 1)), 0o644)
		}, `hidden_act "gelu_new" is not supported`},
		{"heads do not divide", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.Replace(string(tinyConfigJSON()), `"num_attention_heads":2`, `"num_attention_heads":3`, 1)), 0o644)
		}, "does not divide"},
		{"config not json", func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644) }, "parse"},
		{"tokenizer not json", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("[]"), 0o644)
		}, "not a tokenizer.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTinyModel(t, "F32")
			tc.mutate(t, tm.dir)
			_, err := Load(tm.dir)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "hivemem model fetch") {
		t.Errorf("missing dir: err = %v", err)
	}
}
