"""A pure-Python model of the just-in-time connectivity, written from its specification.

Integer arithmetic only (Python ints masked to 64 bits), so it is independent of NumPy
overflow rules and of the Taichi kernels it checks. The specification, as documented
in ``tiarray.operators.sparse._jitc_kernels``:

- ``key = mix64((u32(seed) * GOLD) ^ SEEDKEY)``; row ``i`` has the state
  ``st = mix64(key ^ (i * ROWMUL))``; draw ``k`` of the row is ``mix64(st + (k+1) * GOLD)``.
- ``p = float32(prob)``, ``q = floor(float64(p) * 2**52)``. Column skips are geometric:
  ``G = (L * M) >> S`` with ``L = -log2(u / 2**52)`` in Q30 fixed point (``u = (draw >>
  12) + 1``) and ``(M, S)`` from ``q``; the row's columns are ``j_0 = G_0``,
  ``j_{k+1} = j_k + 1 + G_{k+1}``, while ``j < n_cols``.
- Connection ``k`` of row ``i`` gets its weight from ``draw(mix64(st ^ WKEY), k)``.
"""

from __future__ import annotations

import math

MASK = (1 << 64) - 1
GOLD = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
SEEDKEY = 0x632BE59BD9B4E019
ROWMUL = 0xD1B54A32D192ED03
WKEY = 0xA0761D6478BD642F
LOG2_Q = [1549081711, -774501491, 515475263, -379519076, 275070863, -167074194, 68491410, -13282877]
INVLN2_Q30 = 1549082005

NONE, SOME, ALL = 0, 1, 2


def mix64(z):
    z &= MASK
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def key_of(seed):
    return mix64(((seed & 0xFFFFFFFF) * GOLD) ^ SEEDKEY)


def row_state(key, i):
    return mix64(key ^ ((i * ROWMUL) & MASK))


def draw(st, k):
    return mix64(st + (k + 1) * GOLD)


def neglog2_q30(x):
    """-log2(x / 2**52) in Q30 for 1 <= x <= 2**52."""
    e = x.bit_length() - 1
    frac = (x << (52 - e)) - (1 << 52)  # the 52-bit fraction of x as a float64
    t = frac >> 22
    acc = LOG2_Q[7]
    for c in reversed(LOG2_Q[:7]):
        acc = c + ((acc * t) >> 30)
    poly = (acc * t) >> 30
    return max(((52 - e) << 30) - poly, 0)


def skip_params(prob):
    import numpy as np

    p32 = np.float32(prob)
    if not p32 > 0:
        return NONE, 0, 0
    if p32 >= 1:
        return ALL, 0, 0
    q = int(float(np.float64(p32)) * 2.0**52)
    if q == 0:
        return NONE, 0, 0
    if q <= 1 << 51:
        pq = q >> 22
        acc = (1 << 30) // 61
        for k in range(59, -1, -1):
            acc = (1 << 30) // (k + 1) + ((acc * pq) >> 30)
        h = (acc * INVLN2_Q30) >> 30
        sh = max(0, q.bit_length() - 31)
        prod = (q >> sh) * h
        sh2 = max(0, prod.bit_length() - 31)
        prodm = prod >> sh2
        K = prodm.bit_length() + 25
        return SOME, (1 << K) // prodm, K - 52 + sh + sh2
    c = neglog2_q30((1 << 52) - q)
    K = c.bit_length() + 25
    return SOME, (1 << K) // c, K


def row_connections(seed, i, n_cols, prob):
    """[(column, k)] of row ``i``."""
    mode, M, S = skip_params(prob)
    if mode == NONE:
        return []
    st = row_state(key_of(seed), i)
    out = []
    j = -1
    k = 0
    while True:
        if mode == ALL:
            g = 0
        else:
            u = (draw(st, k) >> 12) + 1
            g = (neglog2_q30(u) * M) >> S
        j += g + 1
        if j >= n_cols:
            break
        out.append((j, k))
        k += 1
    return out


def weight_bits(seed, i, k):
    st = row_state(key_of(seed), i)
    return draw(mix64(st ^ WKEY), k)


def todense(shape, prob, seed, dist="homo", w1=1.0, w2=0.0, dtype="float64"):
    """The dense matrix. Uniform/normal weights use float64 math here (the kernels use
    the weight dtype; compare those with a tolerance)."""
    import numpy as np

    m, n = shape
    out = np.zeros((m, n), dtype)
    for i in range(m):
        for j, k in row_connections(seed, i, n, prob):
            if dist == "homo":
                out[i, j] = w1
            else:
                x = weight_bits(seed, i, k)
                if dist == "uniform":
                    u = (x >> 40) / 2.0**24 if dtype == "float32" else (x >> 11) / 2.0**53
                    out[i, j] = w1 + (w2 - w1) * u
                else:
                    u1 = ((x >> 32) + 1) / 2.0**32
                    u2 = (x & 0xFFFFFFFF) / 2.0**32
                    out[i, j] = w1 + w2 * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
    return out
