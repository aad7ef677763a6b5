#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (committed under tests/fuzz/corpus/) from the seeds' printed
matrices.

  python3 tests/fuzz/make_corpus.py SEEDS_DIR      (the folder of the seed documents)

corpus/fuzz_parse/: every bracketed block printed in a seed document (numpy print output,
  array(...) reprs, lists of column vectors, np.array(...) code), verbatim, plus the same
  numbers in the other accepted formats (CSV, TSV, MATLAB, JSON) and a few words.
corpus/fuzz_run/: the seeds' problems encoded in problem_decoder.h's byte format (values as raw
  doubles): seed 000 direct Q/K/V (plain and causal), seed 003 in float32 dividing by sqrt(3),
  seed 004, seed 002 in the columns layout, a multi-head / grouped-query / cross-attention
  problem with W_O and biases, masks, softcap, and huge / subnormal values.
Only the standard library: no numpy needed.
"""
import hashlib
import math
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if len(sys.argv) != 2:
    raise SystemExit("usage: make_corpus.py SEEDS_DIR")
SEEDS = sys.argv[1]
OUT = os.path.join(HERE, "corpus")


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data)


# ------------------------------------------------------------------------------------------
# Printed matrices

def blocks(text):
    """Every balanced bracketed block, with an array(/np.array( prefix and its ')' tail."""
    found = []
    i = 0
    while i < len(text):
        if text[i] != "[":
            i += 1
            continue
        depth, j = 0, i
        while j < len(text):
            depth += {"[": 1, "]": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        if depth != 0:
            break
        start, end = i, j + 1
        m = re.search(r"((?:np\.|numpy\.)?array\()$", text[max(0, i - 12):i])
        if m:
            start = i - len(m.group(1))
            close = text.find(")", end)
            if close != -1 and close - end < 40:
                end = close + 1
        block = text[start:end]
        if re.search(r"\d", block) and "](" not in block and "http" not in block:
            found.append(block)
        i = end
    return found


def numbers(block):
    """Rows of numbers of a printed 2-D block (innermost lists are rows)."""
    rows = []
    for inner in re.findall(r"\[([^\[\]]*)\]", block):
        row = [float(x) for x in re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan", inner)]
        if row:
            rows.append(row)
    return rows


seed_blocks = {}
for name in sorted(os.listdir(SEEDS)):
    with open(os.path.join(SEEDS, name), encoding="utf-8") as f:
        text = f.read()
    seed_blocks[name[:3]] = blocks(text)
    for block in seed_blocks[name[:3]]:
        write("fuzz_parse", block)
        rows = numbers(block)
        if len(rows) > 1 and len({len(r) for r in rows}) == 1:
            fmt = lambda x: repr(x)
            write("fuzz_parse", "\n".join(",".join(fmt(x) for x in r) for r in rows) + "\n")
            write("fuzz_parse", "\r\n".join("\t".join(fmt(x) for x in r) for r in rows))
            write("fuzz_parse", "[" + "; ".join(" ".join(fmt(x) for x in r) for r in rows) + "]")
            write("fuzz_parse", "[" + ", ".join("[" + ", ".join(fmt(x) for x in r) + "]" for r in rows) + "]")

for extra in ["inf -inf nan\n1 2 3", "[[np.inf, -np.inf], [np.nan, 0]]", "[[True, False], [False, True]]",
              "1e308 1e309", "4.9e-324 1e-400", "[1 2; 3 4;]", "[[1, 2,], [3, 4,]],", "\u00a01\u00a02\n3 4",
              "array([[1., 2.],\n       [3., 4.]], dtype=float32)", "[array([[1], [2]]), array([[3], [4]])]",
              "[[1, 2], [3]]", "[[1, [2]], 3]", "x 1 2", "[" * 50, "..."]:
    write("fuzz_parse", extra)


# ------------------------------------------------------------------------------------------
# Problems in problem_decoder.h's byte format

RAW = 0xFF  # a value tag past the specials: the next 8 bytes are a little-endian double
SPECIAL = {0.0: 0xC0, 1e300: 0xC4, -1e300: 0xC5, 5e-324: 0xCB, math.inf: 0xD2, -math.inf: 0xD3}


def value(x):
    return bytes([RAW]) + struct.pack("<d", x)


def problem(*, projection, L, S, D, dk, dv, mats, columns=False, causal=False, float32=False,
            mask=None, keep=False, wo=None, cross=False, biases=(), b_o=None, scale=("sqrt_dk", 0.0),
            softcap=0.0, heads=1, kv_heads=0):
    a = (projection * 1) | (columns * 2) | (causal * 4) | (float32 * 8) | ((mask is not None) * 16) \
        | (keep * 32) | ((wo is not None) * 64) | (cross * 128)
    kind = {"sqrt_dk": 0, "none": 1, "multiply": 2, "divide": 3}[scale[0]]
    b = (("Q" in biases) * 1) | (("K" in biases) * 2) | (("V" in biases) * 4) | ((b_o is not None) * 8) \
        | (kind << 4) | ((softcap != 0) * 64)
    heads_byte = heads - 1
    kv_byte = 0 if kv_heads == 0 else [d for d in range(1, heads + 1) if heads % d == 0].index(kv_heads) + 5 * 0
    if kv_heads:  # kv_byte % 5 must not be 0 and kv_byte % n picks the divisor
        n = len([d for d in range(1, heads + 1) if heads % d == 0])
        kv_byte = next(x for x in range(1, 128) if x % 5 and x % n == kv_byte)
    out = bytes([a, b, heads_byte, kv_byte, L, S, D, dk, dv, 0, 0])
    out += value(scale[1]) + value(softcap)
    for m in mats:
        for row in m:
            for x in row:
                out += value(x)
    for v in biases.values() if isinstance(biases, dict) else []:
        out += b"".join(value(x) for x in v)
    if wo is not None:
        out += b"".join(value(x) for row in wo for x in row)
    if b_o is not None:
        out += b"".join(value(x) for x in b_o)
    if mask is not None:
        for row in mask:
            for x in row:
                if keep:
                    out += bytes([1 if x else 0])
                elif x == -math.inf:
                    out += bytes([0])
                elif x == 0:
                    out += bytes([1])
                else:
                    out += bytes([2]) + value(-x)  # the decoder negates
    return out


def parsed(seed, index):
    return numbers(seed_blocks[seed][index])


def find(seed, predicate):
    for block in seed_blocks[seed]:
        rows = numbers(block)
        if rows and predicate(block, rows):
            return rows
    raise SystemExit(f"make_corpus: no matching block in seed {seed}")


# Seed 000: Q and K as printed (4x8); V = K (V's print is truncated in the seed).
q0 = find("000", lambda b, r: len(r) == 4 and len(r[0]) == 8)
k0 = [r for r in (numbers(b) for b in seed_blocks["000"]) if len(r) == 4 and len(r[0]) == 8][1]
write("fuzz_run", problem(projection=False, L=4, S=4, D=0, dk=8, dv=8, mats=[q0, k0, k0]))
write("fuzz_run", problem(projection=False, L=4, S=4, D=0, dk=8, dv=8, mats=[q0, k0, k0], causal=True))
write("fuzz_run", problem(projection=False, L=4, S=4, D=0, dk=8, dv=8, mats=[q0, k0, k0], heads=2, kv_heads=1,
                          scale=("multiply", 0.5)))

# Seed 003: inputs 3x4 and wq/wk/wv 4x3 as written in its code, float32, divided by sqrt(3).
x3 = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]
wk3 = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]
wq3 = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
wv3 = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]
write("fuzz_run", problem(projection=True, L=3, S=3, D=4, dk=3, dv=3, mats=[x3, wq3, wk3, wv3], float32=True,
                          scale=("divide", math.sqrt(3))))
write("fuzz_run", problem(projection=True, L=3, S=3, D=4, dk=3, dv=3, mats=[x3, wq3, wk3, wv3], float32=True,
                          scale=("divide", math.sqrt(3)), causal=True, softcap=2.0))

# Seed 004: X = I, W_q = W_k = I, W_v = [[1, 2], [3, 4]].
eye = [[1, 0], [0, 1]]
write("fuzz_run", problem(projection=True, L=2, S=2, D=2, dk=2, dv=2, mats=[eye, eye, eye, [[1, 2], [3, 4]]]))
write("fuzz_run", problem(projection=True, L=2, S=2, D=2, dk=2, dv=2, mats=[eye, eye, eye, [[1, 2], [3, 4]]],
                          mask=[[1, 0], [0, 0]], keep=True))

# Seed 002: all_x as printed (a list of 3 column vectors: X is 4x3, tokens as columns); the
# columns layout with the printed attention-check matrix (4x3) as a stand-in for the Ω's.
x2_cols = find("002", lambda b, r: b.lstrip().startswith("[array(") and len(r) == 12)
x2 = [[x2_cols[c * 4 + r][0] for c in range(3)] for r in range(4)]  # 4x3, columns are tokens
omega = [[1.78862847, 0.43650985, 0.09649747, -1.8634927], [-0.2773882, -0.35475898, -0.08274148, -0.62700068],
         [-0.04381817, -0.47721803, -1.31386475, 0.88462238], [0.5, -0.25, 0.125, 1.0]]
write("fuzz_run", problem(projection=True, columns=True, L=3, S=3, D=4, dk=4, dv=4, mats=[x2, omega, omega, omega],
                          scale=("none", 0.0), biases={"Q": [0.1, 0.2, 0.3, 0.4], "K": [1, 0, 0, 1], "V": [0, 0, 0, 0]}))

# Multi-head, grouped-query, cross-attention with W_O and b_O; an additive mask with -inf.
xq = [[0.5 * i - j for j in range(4)] for i in range(3)]
xkv = [[math.sin(i + j) for j in range(4)] for i in range(5)]
w4 = [[(i * 4 + j) % 7 - 3 for j in range(4)] for i in range(4)]
w2 = [[(i + j) % 3 - 1 for j in range(2)] for i in range(4)]
wo = [[1 if i == j else 0.5 for j in range(4)] for i in range(4)]
write("fuzz_run", problem(projection=True, cross=True, L=3, S=5, D=4, dk=2, dv=2, heads=2, kv_heads=1,
                          mats=[xq, xkv, w4, w2, w2], wo=wo, b_o=[1, 2, 3, 4],
                          mask=[[0, -math.inf, 0, -2.5, 0], [-math.inf] * 5, [0, 0, 0, 0, -math.inf]]))
write("fuzz_run", problem(projection=True, cross=True, L=3, S=5, D=4, dk=1, dv=1, heads=4, kv_heads=2,
                          mats=[xq, xkv, w4, w2, w2], causal=True, float32=True))

# Numerical edge cases: huge logits, all-equal scores, subnormals, a single token, d_k = 1.
write("fuzz_run", problem(projection=False, L=2, S=3, D=0, dk=1, dv=1, mats=[[[1e300], [-1e300]], [[1], [2], [-1]],
                                                                            [[1], [2], [3]]], scale=("none", 0)))
write("fuzz_run", problem(projection=False, L=1, S=3, D=0, dk=1, dv=1, mats=[[[1e150]], [[1e150]] * 3, [[1], [2], [3]]],
                          scale=("none", 0)))
write("fuzz_run", problem(projection=False, L=1, S=1, D=0, dk=1, dv=1, mats=[[[5e-324]], [[5e-324]], [[2.5e-310]]]))
write("fuzz_run", problem(projection=False, L=2, S=2, D=0, dk=1, dv=1, mats=[[[3e19], [1]], [[3e19], [1]], [[1], [2]]],
                          float32=True, scale=("none", 0)))
# The core findings of ROBUSTNESS.md, so every run meets them again: B2 (inf - inf in QKᵀ),
# B3 (float32 softcap 1e-50). B1 is the all-equal 1e300 problem above; B4 the 2-head seed 000.
write("fuzz_run", problem(projection=False, L=1, S=2, D=0, dk=2, dv=1, mats=[[[1e300, 1e300]], [[1e300, -1e300], [1, 1]],
                                                                            [[1], [2]]], scale=("none", 0)))
write("fuzz_run", problem(projection=False, L=2, S=3, D=0, dk=2, dv=3, mats=[[[1, 0], [0, 1]], [[1, 1], [0, 1], [1, 0]],
                                                                            [[1, 2, 3], [4, 5, 6], [7, 8, 9]]],
                          float32=True, softcap=1e-50))
print("corpus:", {t: len(os.listdir(os.path.join(OUT, t))) for t in sorted(os.listdir(OUT))})
