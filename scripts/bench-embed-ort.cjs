// ONNX Runtime (npm onnxruntime-node) throughput for all-MiniLM-L6-v2 on the
// same 40-word sentences as BenchmarkEmbed40Words, run by
// scripts/bench-embed.sh: full graph optimisation, intra-op threads = the
// thread count, one sentence per run() call and all 32 in one batch.
//
//   node bench-embed-ort.cjs <dir with node_modules> <model dir> <model.onnx> <bench_words.txt> <threads> [repeats]
//
// Prints "ort_single S C" and "ort_batch S C": the median over the repeats of
// sentences/s, and sentences per CPU-second of this process (comparable with
// Go's only at one thread, where no worker pool spins).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [dir, modelDir, onnxFile, wordsFile, threadsArg, repArg] = process.argv.slice(2);
if (!dir || !modelDir || !onnxFile || !wordsFile || !threadsArg) {
  console.error('usage: node bench-embed-ort.cjs <dir with node_modules> <model dir> <model.onnx> <bench_words.txt> <threads> [repeats]');
  process.exit(2);
}
const ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));
const threads = Number(threadsArg);
const repeats = Number(repArg ?? 5);

// BERT uncased basic tokenizer + greedy WordPiece: enough for the ASCII
// bench sentences (the Go side reports the same tokens per sentence).
const vocab = JSON.parse(fs.readFileSync(path.join(modelDir, 'tokenizer.json'), 'utf8')).model.vocab;
function encode(s) {
  const ids = [101];
  const words = s.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').match(/[a-z0-9]+|[^\sa-z0-9]/g) || [];
  for (const w of words) {
    const sub = [];
    for (let st = 0; st < w.length;) {
      let e = w.length, id = null;
      for (; st < e; e--) {
        const piece = (st ? '##' : '') + w.slice(st, e);
        if (piece in vocab) { id = vocab[piece]; break; }
      }
      if (id === null) { sub.length = 0; sub.push(100); break; }
      sub.push(id);
      st = e;
    }
    ids.push(...sub);
  }
  ids.push(102);
  return ids.slice(0, 256);
}

// Sentence i is words (7i+j) mod len(words), j < 40 — as in the Go benchmark.
const words = fs.readFileSync(wordsFile, 'utf8').split(/\s+/).filter(Boolean);
const sentences = Array.from({ length: 32 }, (_, i) =>
  Array.from({ length: 40 }, (_, j) => words[(i * 7 + j) % words.length]).join(' '));

function feeds(batch) {
  const S = Math.max(...batch.map((b) => b.length)), B = batch.length;
  const ids = new BigInt64Array(B * S), mask = new BigInt64Array(B * S);
  batch.forEach((b, r) => b.forEach((t, c) => { ids[r * S + c] = BigInt(t); mask[r * S + c] = 1n; }));
  return {
    input_ids: new ort.Tensor('int64', ids, [B, S]),
    attention_mask: new ort.Tensor('int64', mask, [B, S]),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(B * S), [B, S]),
  };
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

(async () => {
  const sess = await ort.InferenceSession.create(onnxFile, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const hw = (await sess.run(feeds([encode('hello world')]))).sentence_embedding.data;
  console.log('ort_hello_world', Array.from(hw.slice(0, 4)).map((x) => x.toFixed(5)).join(' '),
    '(sentence-transformers: -0.03448 0.03102 0.00673 0.02611)');
  const toks = sentences.map(encode);
  const ntok = toks.reduce((a, b) => a + b.length, 0);
  console.log('ort_tokens_per_sentence', (ntok / toks.length).toFixed(1));
  const modes = [
    ['ort_single', async () => { for (const t of toks) await sess.run(feeds([t])); }],
    ['ort_batch', async () => { await sess.run(feeds(toks)); }],
  ];
  for (const [label, run] of modes) {
    await run(); // warm up
    const wall = [], cpu = [];
    for (let r = 0; r < repeats; r++) {
      const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
      await run();
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const c = process.cpuUsage(c0);
      wall.push(32 / secs);
      cpu.push(32 / ((c.user + c.system) / 1e6));
    }
    console.log(label, median(wall).toFixed(1), median(cpu).toFixed(1));
  }
})().catch((err) => { console.error(err); process.exit(1); });
