#!/usr/bin/python3
"""PyTorch's side of the training benchmark (issue 30): steps per second of the model of issue 30
trained with AdamW, one thread, eager mode, for comparison with the core (native, wasm).

    /usr/bin/python3 bench/train_torch.py CONFIG.json [--seconds S] [--warmup W]
    echo '{"model": {...}, "batch": 16, "optimizer": {"lr": 0.001}}' | /usr/bin/python3 bench/train_torch.py -

CONFIG is a training configuration as `attention-explorer train` reads it; only "model", "batch"
[16] and "optimizer" are used here ("lr" [0.001], "beta1" [0.9], "beta2" [0.999], "eps" [1e-8],
"weight_decay" [0.01, on matrices only], "clip" [1.0, global gradient norm; 0 or null: none]);
other keys ("task", "steps", "seed", ...) are ignored. The model follows the contract of issue 30
(positions learned / sinusoidal / rope / none, GQA, MLP with relu or gelu-tanh, pre-norm layernorm or
rmsnorm, bias, tied embedding) in its "precision" [float32]. Each step draws a random batch of
batch x context tokens (targets: the next token, values random: this measures speed only), runs
forward, cross-entropy, backward, clipping and the AdamW step. After W seconds of warm-up [1] it
times whole steps until at least S seconds [3] have passed, then prints one JSON line:
    {"framework": "pytorch", "torch": VERSION, "steps_per_second": X, "steps": N, "threads": 1,
     "seconds": ELAPSED, "blas": the BLAS library loaded}
Debian's torch calls whichever libblas.so.3 the system selects (update-alternatives); with the
reference BLAS (package libblas3) it ran the two models of issue 30's benchmark 5-6 times slower
than with OpenBLAS (libopenblas0-pthread), so record "blas" with the numbers.

torch (Debian's python3-torch) is needed only for this benchmark and to regenerate the fixtures;
use /usr/bin/python3 (tests/fixtures/torch_double is a NumPy stand-in for torch, not this).

    /usr/bin/python3 bench/train_torch.py --verify
checks instead that this model, in float64 with the fixture's weights, gives the loss, logits and
gradients of tests/fixtures/model/torch_models.json (so the benchmark trains the model the core has).
"""
import argparse
import json
import math
import os
import sys
import time

# One thread also for a BLAS that torch does not configure (Debian's torch calls the system's
# libblas.so.3; OpenBLAS would otherwise start a thread per core). Set before torch loads it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-5


def full_config(model):
    m = {"positions": "learned", "mlp": 0, "activation": "gelu", "norm": "none", "bias": False,
         "tied": False, "precision": "float32"}
    m.update(model)
    if "d_head" not in m:
        if m["d_model"] % m["heads"]:
            raise SystemExit("model.heads must divide model.d_model when model.d_head is absent")
        m["d_head"] = m["d_model"] // m["heads"]
    m.setdefault("kv_heads", m["heads"])
    if m["heads"] % m["kv_heads"]:
        raise SystemExit("model.kv_heads must divide model.heads")
    if m["positions"] == "rope" and m["d_head"] % 2:
        raise SystemExit("model.d_head must be even with rope")
    if m["positions"] == "sinusoidal" and m["d_model"] % 2:
        raise SystemExit("model.d_model must be even with sinusoidal positions")
    return m


class Norm(nn.Module):
    def __init__(self, kind, d):
        super().__init__()
        self.kind = kind
        self.g = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d)) if kind == "layernorm" else None

    def forward(self, x):
        if self.kind == "layernorm":
            return F.layer_norm(x, (x.shape[-1],), self.g, self.b, EPS)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.g


def matrix(rows, cols):
    return nn.Parameter(torch.randn(rows, cols) / math.sqrt(rows))


def vector(n):
    return nn.Parameter(torch.zeros(n))


class Layer(nn.Module):
    def __init__(self, m):
        super().__init__()
        d, dh = m["d_model"], m["d_head"]
        self.m = m
        self.W_Q = matrix(d, m["heads"] * dh)
        self.W_K = matrix(d, m["kv_heads"] * dh)
        self.W_V = matrix(d, m["kv_heads"] * dh)
        self.W_O = matrix(m["heads"] * dh, d)
        if m["bias"]:
            self.b_Q, self.b_K = vector(m["heads"] * dh), vector(m["kv_heads"] * dh)
            self.b_V, self.b_O = vector(m["kv_heads"] * dh), vector(d)
        if m["norm"] != "none":
            self.norm_attn = Norm(m["norm"], d)
        if m["mlp"] > 0:
            self.W_in, self.W_out = matrix(d, m["mlp"]), matrix(m["mlp"], d)
            if m["bias"]:
                self.b_in, self.b_out = vector(m["mlp"]), vector(d)
            if m["norm"] != "none":
                self.norm_mlp = Norm(m["norm"], d)

    def attention(self, x, rope, mask):
        m = self.m
        B, T, _ = x.shape
        H, G, dh = m["heads"], m["kv_heads"], m["d_head"]
        q, k, v = x @ self.W_Q, x @ self.W_K, x @ self.W_V
        if m["bias"]:
            q, k, v = q + self.b_Q, k + self.b_K, v + self.b_V
        q = q.view(B, T, H, dh).transpose(1, 2)   # B, H, T, dh
        k = k.view(B, T, G, dh).transpose(1, 2)
        v = v.view(B, T, G, dh).transpose(1, 2)
        if rope is not None:
            cos, sin = rope
            half = dh // 2

            def rot(t):
                a, b = t[..., :half], t[..., half:]
                return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
            q, k = rot(q), rot(k)
        if G != H:
            k = k.repeat_interleave(H // G, dim=1)
            v = v.repeat_interleave(H // G, dim=1)
        s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dh))
        s = s.masked_fill(mask, float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        out = out.transpose(1, 2).reshape(B, T, H * dh) @ self.W_O
        return out + self.b_O if m["bias"] else out

    def forward(self, h, rope, mask):
        m = self.m
        x = self.norm_attn(h) if m["norm"] != "none" else h
        h = h + self.attention(x, rope, mask)
        if m["mlp"] > 0:
            x = self.norm_mlp(h) if m["norm"] != "none" else h
            z = x @ self.W_in
            if m["bias"]:
                z = z + self.b_in
            z = torch.relu(z) if m["activation"] == "relu" else F.gelu(z, approximate="tanh")
            z = z @ self.W_out
            h = h + (z + self.b_out if m["bias"] else z)
        return h


class Model(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        d, V, C = m["d_model"], m["vocab"], m["context"]
        self.E = matrix(V, d)
        if m["positions"] == "learned":
            self.P = matrix(C, d)
        self.layers = nn.ModuleList(Layer(m) for _ in range(m["layers"]))
        if m["norm"] != "none":
            self.norm_final = Norm(m["norm"], d)
        if not m["tied"]:
            self.U = matrix(d, V)
        if m["bias"]:
            self.b_U = vector(V)
        pos = torch.arange(C, dtype=torch.float64)[:, None]
        if m["positions"] == "sinusoidal":
            angle = pos / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)
            pe = torch.zeros(C, d, dtype=torch.float64)
            pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
            self.register_buffer("pe", pe.to(torch.get_default_dtype()))
        if m["positions"] == "rope":
            dh = m["d_head"]
            theta = torch.pow(10000.0, -2.0 * torch.arange(dh // 2, dtype=torch.float64) / dh)
            ang = pos * theta
            self.register_buffer("cos", torch.cos(ang).to(torch.get_default_dtype()))
            self.register_buffer("sin", torch.sin(ang).to(torch.get_default_dtype()))
        self.register_buffer("mask", torch.ones(C, C, dtype=torch.bool).triu(1))

    def forward(self, tokens):
        m = self.m
        T = tokens.shape[1]
        h = self.E[tokens]
        if m["positions"] == "learned":
            h = h + self.P[:T]
        elif m["positions"] == "sinusoidal":
            h = h + self.pe[:T]
        rope = (self.cos[:T], self.sin[:T]) if m["positions"] == "rope" else None
        mask = self.mask[:T, :T]
        for layer in self.layers:
            h = layer(h, rope, mask)
        if m["norm"] != "none":
            h = self.norm_final(h)
        logits = h @ (self.E.t() if m["tied"] else self.U)
        return logits + self.b_U if m["bias"] else logits


def verify():
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                        "model", "torch_models.json")
    torch.set_default_dtype(torch.float64)
    worst = 0.0
    for case in json.load(open(path))["cases"]:
        m = full_config(case["model"])
        model = Model(m)
        named = dict(model.named_parameters())

        def walk(tree, prefix):
            if isinstance(tree, dict):
                for k, v in tree.items():
                    yield from walk(v, prefix + [k])
            elif tree and isinstance(tree[0], dict):
                for i, v in enumerate(tree):
                    yield from walk(v, prefix + [str(i)])
            else:
                yield ".".join(prefix), tree
        with torch.no_grad():
            for name, value in walk(case["weights"], []):
                named[name].copy_(torch.tensor(value))
        assert len(list(walk(case["weights"], []))) == len(named)
        tokens, targets = torch.tensor(case["tokens"]), torch.tensor(case["targets"])
        single = tokens.dim() == 1
        if single:
            tokens, targets = tokens[None], targets[None]
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, m["vocab"]), targets.reshape(-1),
                               ignore_index=-1)
        loss.backward()
        errs = [abs(loss.item() - case["loss"]),
                (logits[0] if single else logits).sub(torch.tensor(case["logits"])).abs().max().item()]
        for name, value in walk(case["gradients"], []):
            errs.append(named[name].grad.sub(torch.tensor(value)).abs().max().item())
        print(f'{case["name"]:42s} largest difference {max(errs):.1e}')
        worst = max(worst, max(errs))
    if worst > 1e-12:
        raise SystemExit(f"the benchmark's model differs from the fixtures by {worst:.1e}")
    print("the benchmark's model reproduces the fixtures (float64)")


def blas_library():
    """The BLAS library the process loaded (Debian's torch uses the selected libblas.so.3)."""
    try:
        with open("/proc/self/maps") as fh:
            libs = sorted({line.split()[-1] for line in fh if "blas" in line.lower()})
    except OSError:
        return None
    openblas = [p for p in libs if "libopenblas" in os.path.basename(p)]
    blas = [p for p in libs if os.path.basename(p).startswith(("libblas", "libblis", "libmkl"))]
    return (openblas or blas or libs or [None])[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config", nargs="?", default="-", help="configuration JSON file, or - for stdin")
    ap.add_argument("--seconds", type=float, default=3.0, help="timed seconds, at least [3]")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds [1]")
    ap.add_argument("--verify", action="store_true",
                    help="compare the model with tests/fixtures/model/torch_models.json and exit")
    args = ap.parse_args()
    if args.verify:
        return verify()
    text = sys.stdin.read() if args.config == "-" else open(args.config).read()
    cfg = json.loads(text)
    m = full_config(cfg["model"])
    batch = int(cfg.get("batch", 16))
    opt = cfg.get("optimizer") or {}
    lr = float(opt.get("lr", 1e-3))
    betas = (float(opt.get("beta1", 0.9)), float(opt.get("beta2", 0.999)))
    eps = float(opt.get("eps", 1e-8))
    wd = float(opt.get("weight_decay", 0.01))
    clip = opt.get("clip", 1.0)

    torch.set_num_threads(1)
    torch.manual_seed(0)
    dtype = {"float32": torch.float32, "float64": torch.float64}[m["precision"]]
    torch.set_default_dtype(dtype)
    model = Model(m)
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": wd},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps)
    V, C = m["vocab"], m["context"]

    def step():
        seq = torch.randint(0, V, (batch, C + 1))
        tokens, targets = seq[:, :-1], seq[:, 1:]
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(params, float(clip))
        optimizer.step()
        return loss

    t0 = time.perf_counter()
    while True:
        loss = step()
        if time.perf_counter() - t0 >= args.warmup:
            break
    if not math.isfinite(loss.item()):
        raise SystemExit("loss is not finite during warm-up")
    steps = 0
    t0 = time.perf_counter()
    while True:
        step()
        steps += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= args.seconds:
            break
    print(json.dumps({"framework": "pytorch", "torch": torch.__version__,
                      "steps_per_second": round(steps / elapsed, 3), "steps": steps,
                      "threads": torch.get_num_threads(), "seconds": round(elapsed, 3),
                      "blas": blas_library()}))


if __name__ == "__main__":
    main()
