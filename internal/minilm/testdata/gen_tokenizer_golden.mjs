// Regenerates tokenizer_golden.json: reference token ids from the Hugging Face
// `tokenizers` Rust library (Node binding @anush008/tokenizers@0.6.0, which
// embeds tokenizers 0.22), the same library the reference embedder compiles
// to WASM. Run outside the repo:
//
//   mkdir /tmp/tokref && cd /tmp/tokref && npm init -y && npm install @anush008/tokenizers@0.6.0
//   NODE_PATH=/tmp/tokref/node_modules node gen_tokenizer_golden.mjs <model dir>/tokenizer.json > tokenizer_golden.json
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.env.NODE_PATH ?? process.cwd(), 'x.js'));
const { Tokenizer } = require('@anush008/tokenizers');

const long = Array.from({ length: 300 }, (_, i) => `word${i % 7} and`).join(' ');
const texts = [
  '',
  ' ',
  '\t\n\r ',
  'x',
  'This is an example sentence',
  'Hello, World!',
  'HELLO wOrLd',
  'Héllo wörld — naïve café ÆØÅ 東京 🙂',
  "unaffable supercalifragilisticexpialidocious tokenization, don't you think? (e.g. 3.14-ish) [CLS] #hashtag",
  '東京タワーは中文字符测试です',
  '한국어 텍스트',
  '日本語のテキスト',
  '🙂👍🏽 family: 👨‍👩‍👧 🥰🫠',
  'price: $3.14 + 5% = ~€3,30 <ok> `code` ^|~ @home {a} [b] \\ / _under_',
  'e-mail: a.b@c.com, url https://x.y/z?q=1&r=2#frag',
  "don't won't it's rock'n'roll",
  'a'.repeat(100),
  'a'.repeat(101),
  'ab'.repeat(60) + ' tail',
  '[CLS] [SEP] [PAD] [MASK] [UNK] [cls] [CLS]x y[SEP]z [CLS[SEP]]',
  '##hashtag ## # ###',
  'control\u0000chars\u0001\u007f\u200b\u200d zero width\u00adsoft\u0085nel\u000bvt\u000cff',
  '\ufffd replacement \ufffd\ufffd',
  'nbsp\u00a0and\u3000ideographic\u2028line\u2029para\u202fnarrow',
  'Ünïcödé ÀÉÎÕÜ ß ẞ İstanbul ǅ Ǆ',
  'Ωμέγα ελληνικά',
  'Русский текст ёЁ',
  'עברית العربية हिन्दी ไทย',
  '∑∫√∞ ≤≥ ±×÷ °C',
  '«quotes» „de“ ‘single’ “double” ‹›',
  'em—dash en–dash hyphen-minus ‐ ‑ ‒',
  'fullwidth ＡＢＣ１２３！',
  'ligature ﬁ ﬂ superscript x² H₂O ½',
  'tab\tseparated\tvalues\nnew line',
  '𠀀𪜀𫝀 rare cjk 㐀 豈 丽',
  'private use \ue000\uf8ff',
  long,
];

const tok = Tokenizer.fromFile(process.argv[2]);
tok.setPadding({ maxLength: 0 });
tok.setTruncation(256);
const out = [];
for (const text of texts) {
  const ids = (await tok.encode(text)).getIds();
  out.push({ text, ids: Array.from(ids) });
}
process.stdout.write(JSON.stringify(out, null, 0).replace(/\},\{/g, '},\n{') + '\n');
