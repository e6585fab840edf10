# Build all-MiniLM-L6-v2 in plain torch from hivemem's fp16 safetensors and export ONNX (fp32 weights),
# for the ONNX Runtime reference in scripts/bench-embed.sh. Needs torch and numpy (Debian: python3-torch,
# python3-numpy); downloads nothing. Usage: bench-embed-ort-export.py MODEL_DIR OUT.onnx
import json, struct, sys, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
src = sys.argv[1]; out = sys.argv[2]
f = open(src + '/model.fp16.safetensors', 'rb'); n = struct.unpack('<Q', f.read(8))[0]; hdr = json.loads(f.read(n)); base = 8 + n
dt = {'F16': np.float16, 'F32': np.float32, 'I64': np.int64}
W = {}
for k, v in hdr.items():
    if k == '__metadata__': continue
    a, b = v['data_offsets']; f.seek(base + a)
    W[k] = torch.from_numpy(np.frombuffer(f.read(b - a), dtype=dt[v['dtype']]).reshape(v['shape']).astype(np.float32 if v['dtype'] != 'I64' else np.int64))
cfg = json.load(open(src + '/config.json')); H, L, NH, EPS = cfg['hidden_size'], cfg['num_hidden_layers'], cfg['num_attention_heads'], cfg['layer_norm_eps']
g = lambda k: W[k]
class M(nn.Module):
    def forward(self, input_ids, attention_mask, token_type_ids):
        B, S = input_ids.shape
        pos = torch.arange(S).unsqueeze(0)
        x = F.embedding(input_ids, g('embeddings.word_embeddings.weight')) + F.embedding(pos, g('embeddings.position_embeddings.weight')) + F.embedding(token_type_ids, g('embeddings.token_type_embeddings.weight'))
        x = F.layer_norm(x, (H,), g('embeddings.LayerNorm.weight'), g('embeddings.LayerNorm.bias'), EPS)
        m = attention_mask.to(torch.float32); bias = (1.0 - m)[:, None, None, :] * -1e4
        d = H // NH
        for i in range(L):
            p = f'encoder.layer.{i}.'
            lin = lambda t, n: F.linear(t, g(p + n + '.weight'), g(p + n + '.bias'))
            sh = lambda t: t.view(B, S, NH, d).transpose(1, 2)
            q, k, v = sh(lin(x, 'attention.self.query')), sh(lin(x, 'attention.self.key')), sh(lin(x, 'attention.self.value'))
            a = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5 + bias, -1) @ v
            a = a.transpose(1, 2).reshape(B, S, H)
            x = F.layer_norm(x + lin(a, 'attention.output.dense'), (H,), g(p + 'attention.output.LayerNorm.weight'), g(p + 'attention.output.LayerNorm.bias'), EPS)
            h = F.gelu(lin(x, 'intermediate.dense'))
            x = F.layer_norm(x + lin(h, 'output.dense'), (H,), g(p + 'output.LayerNorm.weight'), g(p + 'output.LayerNorm.bias'), EPS)
        s = (x * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        return F.normalize(s, dim=-1)
model = M().eval()
ids = torch.tensor([[101, 7592, 2088, 102]]); am = torch.ones_like(ids); tt = torch.zeros_like(ids)
torch.onnx.export(model, (ids, am, tt), out, input_names=['input_ids', 'attention_mask', 'token_type_ids'], output_names=['sentence_embedding'],
                  dynamic_axes={'input_ids': {0: 'b', 1: 's'}, 'attention_mask': {0: 'b', 1: 's'}, 'token_type_ids': {0: 'b', 1: 's'}, 'sentence_embedding': {0: 'b'}}, opset_version=14)
with torch.no_grad(): ref = model(ids, am, tt)
np.save(out + '.ref.npy', ref.numpy()); print('exported', out, ref[0, :4])
