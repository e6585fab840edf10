package minilm

import (
	"context"
	"math"
	"sync"

	"github.com/hivemem/hivemem/internal/kernel"
)

// minRowsPerWorker is the fewest tokens per worker for which forwardRows
// shares a pass out: below it (a short query) one core finishes before a
// second would have started.
const minRowsPerWorker = 12

// forwardRows is forward for one short pass on several cores, with one
// hand-off per layer instead of one per step: each worker owns a block of
// rows (tokens) and runs every row-local step on it alone — embeddings,
// the output projection, LayerNorms, the feed-forward, and the next
// layer's Q, K and V — and attention for its rows as queries. The workers
// meet once per layer, when every row's keys and values are ready. Q|K|V
// is double-buffered so that a worker computing the next layer's never
// overwrites keys another still reads; the other activations are row-local.
func (m *Model) forwardRows(ctx context.Context, seqs [][]int32, out [][]float32, workers int) error {
	H, I := m.cfg.HiddenSize, m.cfg.IntermediateSize
	nh := m.cfg.NumHeads
	d := H / nh
	scale := float32(1 / math.Sqrt(float64(d)))
	offs := make([]int, len(seqs)+1)
	for s, ids := range seqs {
		offs[s+1] = offs[s] + len(ids)
	}
	T := offs[len(seqs)]
	ws := m.getWorkspace(T, workers)
	defer m.putWorkspace(ws)
	for s, ids := range seqs {
		for p := range ids {
			ws.tokSeq[offs[s]+p], ws.tokPos[offs[s]+p] = int32(s), int32(p)
		}
	}
	W := max(3*H, I)
	ws.qkv2 = growF32(ws.qkv2, 2*T*3*H)
	qkvBuf := [2][]float32{ws.qkv2[:T*3*H], ws.qkv2[T*3*H:]}
	x, wide, narrow := ws.x, ws.wide, ws.narrow

	// Row blocks in whole strips of the widest matrix kernel (12 rows).
	per := (T + workers - 1) / workers
	per = (per + 11) / 12 * 12
	bar := newBarrier(workers)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	work := func(w int) {
		lo, hi := min(w*per, T), min((w+1)*per, T)
		rows := hi - lo
		mine := wide[lo*W : hi*W] // this worker's rows of the wide scratch
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
		if rows > 0 {
			kernel.MatMulPackedSerial(qkvBuf[0][lo*3*H:], x[lo*H:], m.layers[0].qkv, rows)
		}
		for li := range m.layers {
			if err := bar.wait(ctx); err != nil {
				errs[w] = err
				return
			}
			if rows == 0 {
				continue
			}
			ly := &m.layers[li]
			qkv := qkvBuf[li%2]
			// Attention for this worker's rows as queries, all heads.
			for s := range seqs {
				qlo, qhi := max(lo, offs[s]), min(hi, offs[s+1])
				if qlo >= qhi {
					continue
				}
				for h := range nh {
					attendRows(ws.scratch[w], &ws.keys[w], &ws.values[w], qkv, narrow, offs[s], offs[s+1]-offs[s], qlo-offs[s], qhi-offs[s], h, H, d, scale)
				}
			}
			proj := mine[:rows*H]
			kernel.MatMulPackedSerial(proj, narrow[lo*H:], ly.out, rows)
			for t := range rows {
				row := x[(lo+t)*H : (lo+t+1)*H]
				addTo(row, proj[t*H:(t+1)*H])
				layerNorm(row, ly.ln1G, ly.ln1B, m.eps)
			}
			hid := mine[:rows*I]
			kernel.MatMulPackedSerial(hid, x[lo*H:], ly.fc1, rows)
			gelu(hid)
			kernel.MatMulPackedSerial(narrow[lo*H:], hid, ly.fc2, rows)
			for t := lo; t < hi; t++ {
				row := x[t*H : (t+1)*H]
				addTo(row, narrow[t*H:(t+1)*H])
				layerNorm(row, ly.ln2G, ly.ln2B, m.eps)
			}
			if li+1 < len(m.layers) {
				kernel.MatMulPackedSerial(qkvBuf[(li+1)%2][lo*3*H:], x[lo*H:], m.layers[li+1].qkv, rows)
			}
		}
	}
	for w := 1; w < workers; w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	m.pool(x, offs, out)
	return nil
}

// barrier lets n goroutines wait for each other once per layer; the last
// to arrive checks ctx, so that all of them see the same answer and stop
// together.
type barrier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n, left int
	gen     int
	err     error
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n, left: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	b.left--
	if b.left == 0 {
		b.err = ctx.Err()
		b.left, b.gen = b.n, b.gen+1
		b.cond.Broadcast()
		return b.err
	}
	for gen := b.gen; gen == b.gen; {
		b.cond.Wait()
	}
	return b.err
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
