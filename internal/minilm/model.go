// Package minilm computes all-MiniLM-L6-v2 sentence embeddings in pure Go:
// a safetensors reader, the BERT WordPiece tokenizer and the BERT encoder
// forward pass with mean pooling, so that hivemem embeds text locally with no
// cgo, no Python and no network. Matrix multiplies go through
// internal/kernel, which picks a vectorised routine at run time.
package minilm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/modelfetch"
)

// ID names the model; it is stored with an index so that vectors from
// different models are never mixed.
const ID = "all-MiniLM-L6-v2"

// Batching limits for one forward pass. Texts are packed back to back (no
// padding), so these bound the activation memory: about 9 KB per token.
// Larger passes gain nothing (the packed kernels read the weights fast
// enough for one sentence) and lose once the FFN's activations outgrow
// L2: 256 tokens measured 3-5 % faster than 1024 on 32 sentences.
const (
	maxBatchTokens = 256
	maxBatchTexts  = 64
	rowGrain       = 64 // rows per chunk of element-wise work
)

// config is the part of a BERT config.json the forward pass depends on.
type config struct {
	HiddenSize            int     `json:"hidden_size"`
	NumHeads              int     `json:"num_attention_heads"`
	NumLayers             int     `json:"num_hidden_layers"`
	IntermediateSize      int     `json:"intermediate_size"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
	MaxPositions          int     `json:"max_position_embeddings"`
	VocabSize             int     `json:"vocab_size"`
	TypeVocabSize         int     `json:"type_vocab_size"`
	HiddenAct             string  `json:"hidden_act"`
	ModelType             string  `json:"model_type"`
	PositionEmbeddingType string  `json:"position_embedding_type"`
}

func readConfig(path string) (config, error) {
	var c config
	raw, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read config: %w", err)
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c config) validate() error {
	switch {
	case c.ModelType != "" && c.ModelType != "bert":
		return fmt.Errorf("model_type %q is not bert", c.ModelType)
	case c.HiddenAct != "gelu":
		return fmt.Errorf("hidden_act %q is not supported (want gelu)", c.HiddenAct)
	case c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute":
		return fmt.Errorf("position_embedding_type %q is not supported", c.PositionEmbeddingType)
	case c.HiddenSize <= 0 || c.HiddenSize > 1<<14:
		return fmt.Errorf("hidden_size %d out of range", c.HiddenSize)
	case c.NumHeads <= 0 || c.HiddenSize%c.NumHeads != 0:
		return fmt.Errorf("num_attention_heads %d does not divide hidden_size %d", c.NumHeads, c.HiddenSize)
	case c.NumLayers <= 0 || c.NumLayers > 256:
		return fmt.Errorf("num_hidden_layers %d out of range", c.NumLayers)
	case c.IntermediateSize <= 0 || c.IntermediateSize > 1<<16:
		return fmt.Errorf("intermediate_size %d out of range", c.IntermediateSize)
	case c.MaxPositions < Window:
		return fmt.Errorf("max_position_embeddings %d is below the %d-token window", c.MaxPositions, Window)
	case c.VocabSize <= 0 || c.TypeVocabSize <= 0:
		return fmt.Errorf("vocab_size %d / type_vocab_size %d must be positive", c.VocabSize, c.TypeVocabSize)
	case !(c.LayerNormEps > 0 && c.LayerNormEps < 1):
		return fmt.Errorf("layer_norm_eps %g out of range", c.LayerNormEps)
	}
	return nil
}

// layer holds one encoder layer's weights. The Linear weights (with their
// biases) are packed for kernel.MatMulPacked; Q, K and V are stacked into
// one [3H, H] matrix so that one matmul produces all three.
type layer struct {
	qkv, out, fc1, fc2 *kernel.Packed
	ln1G, ln1B         []float32
	ln2G, ln2B         []float32
}

// Model is a loaded MiniLM encoder. It is safe for concurrent use.
type Model struct {
	cfg     config
	tok     *Tokenizer
	eps     float32
	wordEmb []float32 // [vocab, H]
	posEmb  []float32 // [maxPos, H]
	typeEmb []float32 // [types, H]; only row 0 is used
	embLNG  []float32
	embLNB  []float32
	layers  []layer

	mu   sync.Mutex
	free []*workspace // reusable activation buffers, so steady embedding allocates little
}

// Load reads the model (weights, tokenizer and config) from dir, as
// installed by `hivemem model fetch`. The Linear layers multiply in
// bfloat16 where the CPU does so natively (kernel.PackBF16): twice the
// speed, for vectors within about 4e-5 of the float32 ones in cosine distance
// on the golden sentences.
func Load(dir string) (*Model, error) { return load(dir, kernel.PackBF16) }

// packFunc packs a Linear layer's weights and biases: kernel.Pack, or
// kernel.PackBF16 where bfloat16 precision will do.
type packFunc func(b, bias []float32, n, k int) (*kernel.Packed, error)

// load is Load with the Linear layers packed by pack.
func load(dir string, pack packFunc) (*Model, error) {
	for _, name := range modelfetch.RequiredFiles {
		_, err := os.Stat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load model: %s not found in %s: run `hivemem model fetch`, or set HIVEMEM_MODEL_DIR to a directory holding %s, %s and %s",
				name, dir, modelfetch.WeightsFile, modelfetch.TokenizerFile, modelfetch.ConfigFile)
		}
		if err != nil {
			return nil, fmt.Errorf("load model: %w", err)
		}
	}
	cfg, err := readConfig(filepath.Join(dir, modelfetch.ConfigFile))
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	tok, err := LoadTokenizer(filepath.Join(dir, modelfetch.TokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	if maxID := tok.maxID(); int(maxID) >= cfg.VocabSize {
		return nil, fmt.Errorf("load model: tokenizer id %d is outside the model's vocab_size %d (tokenizer.json and config.json do not belong together)", maxID, cfg.VocabSize)
	}
	st, err := openSafetensors(filepath.Join(dir, modelfetch.WeightsFile))
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	defer st.Close()
	m, err := loadWeights(st, cfg, pack)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m.tok = tok
	return m, nil
}

func loadWeights(st *safetensors, cfg config, pack packFunc) (*Model, error) {
	H, I, L := cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers
	h, i := int64(H), int64(I)
	// The arena holds the embeddings and the LayerNorm parameters; the
	// Linear weights pass through one reused buffer on their way to being
	// packed, so loading needs little more memory than the model.
	total := cfg.VocabSize*H + cfg.MaxPositions*H + cfg.TypeVocabSize*H + 2*H + L*4*H
	arena := make([]float32, total)
	take := func(n int) []float32 {
		s := arena[:n:n]
		arena = arena[n:]
		return s
	}
	m := &Model{cfg: cfg, eps: float32(cfg.LayerNormEps), layers: make([]layer, L)}
	read := func(dst []float32, name string, shape ...int64) ([]float32, error) {
		return dst, st.readInto(dst, name, shape...)
	}
	var err error
	if m.wordEmb, err = read(take(cfg.VocabSize*H), "embeddings.word_embeddings.weight", int64(cfg.VocabSize), h); err != nil {
		return nil, err
	}
	if m.posEmb, err = read(take(cfg.MaxPositions*H), "embeddings.position_embeddings.weight", int64(cfg.MaxPositions), h); err != nil {
		return nil, err
	}
	if m.typeEmb, err = read(take(cfg.TypeVocabSize*H), "embeddings.token_type_embeddings.weight", int64(cfg.TypeVocabSize), h); err != nil {
		return nil, err
	}
	if m.embLNG, err = read(take(H), "embeddings.LayerNorm.weight", h); err != nil {
		return nil, err
	}
	if m.embLNB, err = read(take(H), "embeddings.LayerNorm.bias", h); err != nil {
		return nil, err
	}
	wbuf := make([]float32, max(3*H*H, I*H))
	bbuf := make([]float32, max(3*H, I))
	// linear packs the weights and biases of the named Linear layers, stacked
	// in that order (each out×in), into one matrix.
	linear := func(p string, out, in int64, names ...string) (*kernel.Packed, error) {
		n := int(out) * len(names)
		for k, name := range names {
			if _, err := read(wbuf[k*int(out*in):(k+1)*int(out*in)], p+name+".weight", out, in); err != nil {
				return nil, err
			}
			if _, err := read(bbuf[k*int(out):(k+1)*int(out)], p+name+".bias", out); err != nil {
				return nil, err
			}
		}
		return pack(wbuf[:n*int(in)], bbuf[:n], n, int(in))
	}
	for l := range m.layers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		ly := &m.layers[l]
		if ly.qkv, err = linear(p, h, h, "attention.self.query", "attention.self.key", "attention.self.value"); err != nil {
			return nil, err
		}
		if ly.out, err = linear(p, h, h, "attention.output.dense"); err != nil {
			return nil, err
		}
		if ly.fc1, err = linear(p, i, h, "intermediate.dense"); err != nil {
			return nil, err
		}
		if ly.fc2, err = linear(p, h, i, "output.dense"); err != nil {
			return nil, err
		}
		for _, v := range []struct {
			dst  *[]float32
			name string
		}{
			{&ly.ln1G, "attention.output.LayerNorm.weight"}, {&ly.ln1B, "attention.output.LayerNorm.bias"},
			{&ly.ln2G, "output.LayerNorm.weight"}, {&ly.ln2B, "output.LayerNorm.bias"},
		} {
			if *v.dst, err = read(take(H), p+v.name, h); err != nil {
				return nil, err
			}
		}
	}
	if len(arena) != 0 {
		return nil, fmt.Errorf("internal error: %d weights unassigned", len(arena))
	}
	return m, nil
}

// Dim is the embedding dimension (384).
func (m *Model) Dim() int { return m.cfg.HiddenSize }

// ModelID names the model for the index.
func (m *Model) ModelID() string { return ID }

// Tokenizer returns the model's tokenizer, e.g. to size chunks to the window.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Embed returns one L2-normalised vector per text. Texts longer than the
// window are truncated to it. A text's vector does not depend on the other
// texts in the call (beyond float rounding in the matrix kernel). Cancelling
// ctx stops the work between layers.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	ids := make([][]int32, len(texts))
	total := 0
	for i, t := range texts {
		ids[i] = m.tok.encode32(t)
		total += len(ids[i])
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	passTokens := maxBatchTokens
	if workers > 1 && total > maxBatchTokens {
		// Enough texts for several passes: one pass per core at a time,
		// each on one goroutine (no hand-offs inside a pass), in a
		// multiple of the cores' number of passes so that none idles at
		// the end.
		passes := (total + maxBatchTokens - 1) / maxBatchTokens
		passes = (passes + workers - 1) / workers * workers
		passTokens = (total + passes - 1) / passes
	}
	type pass struct{ start, end int }
	var passes []pass
	for start := 0; start < len(texts); {
		end, tokens := start, 0
		for end < len(texts) && end-start < maxBatchTexts && (end == start || tokens+len(ids[end]) <= passTokens) {
			tokens += len(ids[end])
			end++
		}
		passes = append(passes, pass{start, end})
		start = end
	}
	if workers == 1 || len(passes) == 1 {
		for _, p := range passes {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("embed: %w", err)
			}
			if err := m.forward(ctx, ids[p.start:p.end], out[p.start:p.end], workers); err != nil {
				return nil, fmt.Errorf("embed: %w", err)
			}
		}
		return out, nil
	}
	var (
		next     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(workers, len(passes)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(passes) {
					return
				}
				p := passes[i]
				err := ctx.Err()
				if err == nil {
					err = m.forward(ctx, ids[p.start:p.end], out[p.start:p.end], 1)
				}
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					next.Store(int64(len(passes)))
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("embed: %w", firstErr)
	}
	return out, nil
}

// workspace holds the activations of one forward pass: x is the hidden
// state; wide holds Q|K|V during attention and the FFN's inner activations
// after it; narrow holds the attention output, then the FFN output.
type workspace struct {
	x, wide, narrow []float32
	scratch         [][]float32     // per worker, for attention's scores
	keys, values    []kernel.Packed // per worker, one head's keys and values
	qkv2            []float32       // forwardRows: Q|K|V of two layers
	tokSeq          []int32         // sequence index of each packed token
	tokPos          []int32         // position of each packed token in its sequence
}

func (m *Model) getWorkspace(tokens, workers int) *workspace {
	m.mu.Lock()
	var ws *workspace
	if n := len(m.free); n > 0 {
		ws, m.free = m.free[n-1], m.free[:n-1]
	}
	m.mu.Unlock()
	if ws == nil {
		ws = &workspace{}
	}
	H, I := m.cfg.HiddenSize, m.cfg.IntermediateSize
	grow := func(s []float32, n int) []float32 {
		if cap(s) < n {
			return make([]float32, n)
		}
		return s[:n]
	}
	ws.x = grow(ws.x, tokens*H)
	ws.wide = grow(ws.wide, tokens*max(3*H, I))
	ws.narrow = grow(ws.narrow, tokens*H)
	if cap(ws.tokSeq) < tokens {
		ws.tokSeq, ws.tokPos = make([]int32, tokens), make([]int32, tokens)
	}
	ws.tokSeq, ws.tokPos = ws.tokSeq[:tokens], ws.tokPos[:tokens]
	// One head of attention: the scores (L·L).
	need := Window * Window
	for len(ws.scratch) < workers {
		ws.scratch = append(ws.scratch, nil)
	}
	if len(ws.keys) < workers {
		ws.keys, ws.values = make([]kernel.Packed, workers), make([]kernel.Packed, workers)
	}
	for w := range ws.scratch {
		ws.scratch[w] = grow(ws.scratch[w], need)
	}
	return ws
}

func (m *Model) putWorkspace(ws *workspace) {
	m.mu.Lock()
	if len(m.free) < 2 {
		m.free = append(m.free, ws)
	}
	m.mu.Unlock()
}

// forward runs the encoder over a batch of token sequences packed back to
// back (so there is no padding to mask, and a sequence's result cannot
// depend on its neighbours) and writes each sequence's pooled, normalised
// vector to out. Large matrix multiplies run on the whole batch, which
// kernel.MatMulPacked spreads across up to workers cores; the element-wise
// steps and attention are shared out here. With one worker everything runs
// on the calling goroutine.
func (m *Model) forward(ctx context.Context, seqs [][]int32, out [][]float32, workers int) error {
	H, I := m.cfg.HiddenSize, m.cfg.IntermediateSize
	nh := m.cfg.NumHeads
	offs := make([]int, len(seqs)+1)
	for s, ids := range seqs {
		offs[s+1] = offs[s] + len(ids)
	}
	T := offs[len(seqs)]
	if workers > 1 && T >= workers*minRowsPerWorker {
		return m.forwardRows(ctx, seqs, out, workers)
	}
	ws := m.getWorkspace(T, workers)
	matMul := kernel.MatMulPacked
	if workers == 1 {
		matMul = kernel.MatMulPackedSerial
	}
	defer m.putWorkspace(ws)
	for s, ids := range seqs {
		for p := range ids {
			ws.tokSeq[offs[s]+p], ws.tokPos[offs[s]+p] = int32(s), int32(p)
		}
	}
	grain := max(8, min(rowGrain, (T+workers-1)/workers))
	x, wide, narrow := ws.x, ws.wide, ws.narrow

	// Embeddings: word + position + token type 0, then LayerNorm.
	parallel(workers, T, grain, func(_, lo, hi int) {
		for t := lo; t < hi; t++ {
			id := int(seqs[ws.tokSeq[t]][ws.tokPos[t]])
			row := x[t*H : (t+1)*H]
			we := m.wordEmb[id*H : (id+1)*H]
			pe := m.posEmb[int(ws.tokPos[t])*H:][:H]
			te := m.typeEmb[:H]
			for j := range row {
				row[j] = we[j] + pe[j] + te[j]
			}
			layerNorm(row, m.embLNG, m.embLNB, m.eps)
		}
	})

	d := H / nh
	scale := float32(1 / math.Sqrt(float64(d)))
	for li := range m.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		ly := &m.layers[li]
		// Q, K, V for every token, biases included.
		qkv := wide[:T*3*H]
		matMul(qkv, x, ly.qkv, T)
		// Self-attention, one job per (sequence, head), into narrow.
		parallel(workers, len(seqs)*nh, 1, func(w, lo, hi int) {
			for job := lo; job < hi; job++ {
				s, h := job/nh, job%nh
				attend(ws.scratch[w], &ws.keys[w], &ws.values[w], qkv, narrow, offs[s], offs[s+1]-offs[s], h, H, d, scale)
			}
		})
		// Output projection (with its bias), + residual, LayerNorm.
		proj := wide[:T*H]
		matMul(proj, narrow, ly.out, T)
		parallel(workers, T, grain, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				row, res := x[t*H:(t+1)*H], proj[t*H:(t+1)*H]
				addTo(row, res)
				layerNorm(row, ly.ln1G, ly.ln1B, m.eps)
			}
		})
		// Feed-forward: H → I (with bias), GELU, I → H (with bias),
		// + residual, LayerNorm.
		hid := wide[:T*I]
		matMul(hid, x, ly.fc1, T)
		parallel(workers, T, grain, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				gelu(hid[t*I : (t+1)*I])
			}
		})
		matMul(narrow, hid, ly.fc2, T)
		parallel(workers, T, grain, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				row := x[t*H : (t+1)*H]
				addTo(row, narrow[t*H:(t+1)*H])
				layerNorm(row, ly.ln2G, ly.ln2B, m.eps)
			}
		})
	}

	m.pool(x, offs, out)
	return nil
}

// pool writes to out[s] the mean of sequence s's rows of x (every token,
// [CLS] and [SEP] included), L2-normalised.
func (m *Model) pool(x []float32, offs []int, out [][]float32) {
	H := m.cfg.HiddenSize
	for s := range out[:len(offs)-1] {
		v := make([]float32, H)
		for t := offs[s]; t < offs[s+1]; t++ {
			addTo(v, x[t*H:(t+1)*H])
		}
		inv := 1 / float32(offs[s+1]-offs[s])
		for j := range v {
			v[j] *= inv
		}
		kernel.Normalize(v)
		out[s] = v
	}
}

// attend computes head h of self-attention for the sequence in rows
// [off, off+L) of qkv and writes the head's slice of cx: the head's keys and
// values are packed for the matrix kernel (serial: attention already runs in
// parallel over heads), scores = Q·Kᵀ, softmax, then scores·V straight into
// cx.
func attend(sc []float32, keys, values *kernel.Packed, qkv, cx []float32, off, L, h, H, d int, scale float32) {
	attendRows(sc, keys, values, qkv, cx, off, L, 0, L, h, H, d, scale)
}

// attendRows is attend for the queries [qlo, qhi) of the sequence only.
func attendRows(sc []float32, keys, values *kernel.Packed, qkv, cx []float32, off, L, qlo, qhi, h, H, d int, scale float32) {
	base := qkv[off*3*H:]
	keys.PackStrided(base[H+h*d:], L, d, 3*H, 1)     // key j, element i: row j
	values.PackStrided(base[2*H+h*d:], d, L, 1, 3*H) // Vᵀ: element i of value j
	nq := qhi - qlo
	s := sc[:nq*L]
	kernel.MatMulPackedStrided(s, L, base[qlo*3*H+h*d:], 3*H, keys, nq)
	for i := range nq {
		softmax(s[i*L:(i+1)*L], scale)
	}
	kernel.MatMulPackedStrided(cx[(off+qlo)*H+h*d:], H, s, L, values, nq)
}

// parallel runs fn over [0, n) in chunks of grain, handing chunks out
// dynamically to up to `workers` goroutines so that a busy core does not
// hold the others up; w identifies the worker for its scratch space.
func parallel(workers, n, grain int, fn func(w, lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(1, grain)
	nw := min(workers, (n+grain-1)/grain)
	if nw <= 1 {
		fn(0, 0, n)
		return
	}
	var next atomic.Int64
	run := func(w int) {
		for {
			lo := int(next.Add(int64(grain))) - grain
			if lo >= n {
				return
			}
			fn(w, lo, min(lo+grain, n))
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < nw; w++ {
		wg.Go(func() { run(w) })
	}
	run(0)
	wg.Wait()
}

func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

func layerNorm(x, g, b []float32, eps float32) {
	g, b = g[:len(x)], b[:len(x)]
	var sum float32
	for _, v := range x {
		sum += v
	}
	mean := sum / float32(len(x))
	var vs float32
	for _, v := range x {
		dv := v - mean
		vs += dv * dv
	}
	inv := float32(1 / math.Sqrt(float64(vs/float32(len(x))+eps)))
	for i, v := range x {
		x[i] = (v-mean)*inv*g[i] + b[i]
	}
}

// softmax applies softmax(scale·x) in place. The exponentials are
// vectorised where the CPU allows; the rest use expNonPos, which the
// compiler inlines: math.Exp was a tenth of the forward pass.
func softmax(x []float32, scale float32) {
	mx := x[0]
	for _, v := range x[1:] {
		if v > mx {
			mx = v
		}
	}
	done, vsum := kernel.ExpShiftPrefix(x, mx, scale)
	sum := float64(vsum)
	for i, v := range x[done:] {
		e := expNonPos(float64((v - mx) * scale)) // inlined by the compiler
		x[done+i] = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}

// expNonPos is e^z for z <= 0 to about 1e-8 relative error: z = n·ln2 + r
// with |r| <= ln2/2, e^r by its Taylor series to degree 7 (remainder
// < r⁸/8! < 6e-9), and 2^n built from the exponent bits. Below -87 the
// result is under float32's normal range and returned as 0.
func expNonPos(z float64) float64 {
	if !(z > -87) {
		return 0
	}
	n := int(z*math.Log2E - 0.5)
	r := z - float64(n)*math.Ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float64frombits(uint64(n+1023)<<52)
}
