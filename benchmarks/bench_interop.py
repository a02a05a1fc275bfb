"""Cost of sharing memory with tiarray, in both directions, against each framework's own
zero-copy path and against a copy, for 1e3 to 1e8 float32 elements.

    python benchmarks/bench_interop.py [--max-size 1e8]

Targets: constant time in the size; ``ta.asarray(torch_tensor)`` within 1.5x of
``np.from_dlpack(torch_tensor)``.

The second table is the per-step exchange of an RL loop (``examples/rl_zero_copy.py``) at
N = 4096 environments: observations (N, 4) from Taichi memory to the policy and actions
(N, 2) back, through TiArray views made every step, against Taichi's own copies
(``to_torch``/``from_torch`` for fields, ``to_numpy``/``from_numpy`` for ndarrays). Views
made once cost nothing per step.
"""

import argparse

import _harness  # noqa: F401
import numpy as np
from _harness import fmt_us, machine_line, print_table, timeit

import tiarray as ta


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-size", type=float, default=1e8)
    p.add_argument("--quick", action="store_true", help="sizes up to 1e5 only")
    args = p.parse_args()
    sizes = [int(s) for s in (1e3, 1e5, 1e7, 1e8) if s <= (1e5 if args.quick else args.max_size)]
    import jax
    import torch

    torch.set_num_threads(2)
    rows = []
    for n in sizes:
        rows.extend(bench_size(n, torch, jax))
    print(f"machine: {machine_line()}")
    print_table(
        "Zero-copy exchange (float32); ratio column: time / np.from_dlpack(torch) of the same size",
        rows,
        ["elements", "direction", "method", "us / call", "x np.from_dlpack(torch)"],
    )
    print_table(
        "RL per-step exchange, N = 4096 environments (obs (N, 4) out, actions (N, 2) in, float32); "
        "ratio column: time / the copies of the same state kind and framework",
        bench_rl_exchange(torch, jax, 4096),
        ["state", "policy", "method", "us / step", "x copies"],
    )


def data_ptr(x) -> int:
    """The address of the first element of a NumPy, torch, JAX or tiarray array."""
    if isinstance(x, ta.TiArray):
        return x.ptr
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if hasattr(x, "data_ptr"):  # torch
        return x.data_ptr()
    return x.unsafe_buffer_pointer()  # jax


def check(name, got, src, shares):
    """Before timing: the result holds the source's values, in the source's memory when the
    method promises zero-copy and in other memory when it copies (else the script stops)."""
    same = data_ptr(got) == data_ptr(src)
    if same != shares:
        raise SystemExit(
            f"bench_interop: '{name}' {'copied' if shares else 'did not copy'} (expected the opposite)"
        )
    if not np.array_equal(np.from_dlpack(got), np.from_dlpack(src)):
        raise SystemExit(f"bench_interop: '{name}' returned other values than its source")


def bench_size(n, torch, jax):
    rows = []
    a = np.ones(n, np.float32)
    tt = torch.ones(n)
    jj = jax.device_put(np.asarray(ta.ones(n, dtype=ta.float32)))  # aligned: JAX shares it
    t = ta.asarray(a, copy=True)
    t[n // 2] = 3.0  # a value that differs from its neighbours, to compare contents
    a[n // 3] = 5.0
    tt[n // 4] = 7.0
    # (direction, method, call, the array it reads, whether the result shares its memory)
    cases = [
        ("import", "ta.asarray(numpy)", lambda: ta.asarray(a), a, True),
        ("import", "torch.from_numpy(numpy) [peer]", lambda: torch.from_numpy(a), a, True),
        ("import", "ta.asarray(torch)", lambda: ta.asarray(tt), tt, True),
        ("import", "np.from_dlpack(torch) [peer]", lambda: np.from_dlpack(tt), tt, True),
        ("import", "ta.asarray(jax)", lambda: ta.asarray(jj), jj, True),
        ("import", "torch.from_dlpack(jax) [peer]", lambda: torch.from_dlpack(jj), jj, True),
        ("export", "np.asarray(tiarray)", lambda: np.asarray(t), t, True),
        ("export", "np.from_dlpack(tiarray)", lambda: np.from_dlpack(t), t, True),
        ("export", "torch.from_dlpack(tiarray)", lambda: torch.from_dlpack(t), t, True),
        ("export", "jax.dlpack.from_dlpack(tiarray)", lambda: jax.dlpack.from_dlpack(t), t, True),
        ("copy", "ta.asarray(numpy, copy=True)", lambda: ta.asarray(a, copy=True), a, False),
        ("copy", "numpy.copy() [peer]", lambda: a.copy(), a, False),
    ]
    for _kind, name, fn, src, shares in cases:
        check(name, fn(), src, shares)
    times = {}
    for _kind, name, fn, _src, _shares in cases:
        times[name] = timeit(fn, min_time=0.1 if n < 1e7 else 0.5, repeats=5)
    ref = times["np.from_dlpack(torch) [peer]"]
    for kind, name, *_ in cases:
        rows.append(
            {
                "elements": f"{n:.0e}",
                "direction": kind,
                "method": name,
                "us / call": fmt_us(times[name]),
                "x np.from_dlpack(torch)": f"{times[name] / ref:.2f}",
            }
        )
    return rows


def bench_rl_exchange(torch, jax, n: int) -> list:
    """The observation/action exchange of one RL step (see the module docstring)."""
    ta.zeros(1)  # Taichi runs (the first table has started it already)
    rows = []
    for kind in ("ndarray", "field"):
        rows.extend(_rl_rows(kind, torch, jax, n))
    return rows


def _rl_rows(kind: str, torch, jax, n: int) -> list:
    import taichi as ti

    rng = np.random.default_rng(0)
    make = (lambda *s: ti.field(ti.f32, shape=s)) if kind == "field" else (lambda *s: ti.ndarray(ti.f32, s))
    obs, act = make(n, 4), make(n, 2)
    obs.from_numpy(rng.standard_normal((n, 4)).astype(np.float32))
    a_torch = torch.from_numpy(rng.standard_normal((n, 2)).astype(np.float32))
    a_jax = jax.device_put(a_torch.numpy())
    field = kind == "field"

    def views_torch():  # the policy reads o and writes its actions into the second view (out=)
        return torch.from_dlpack(ta.asarray(obs)), torch.from_dlpack(ta.asarray(act))

    def copies_torch():
        o = obs.to_torch() if field else torch.from_numpy(obs.to_numpy())
        act.from_torch(a_torch) if field else act.from_numpy(a_torch.numpy())
        return o, None

    def views_jax():  # the jitted policy's actions go to the environment kernel as a TiArray
        return jax.dlpack.from_dlpack(ta.asarray(obs)), ta.asarray(a_jax)

    def copies_jax():
        o = jax.numpy.asarray(obs.to_numpy())
        act.from_numpy(np.asarray(a_jax))
        return o, None

    # results checked before timing: the same observations; torch's views are Taichi's memory
    ref = obs.to_numpy()
    ptr = ta.asarray(obs).ptr
    cases = [
        ("torch", "views", views_torch), ("torch", "copies", copies_torch),
        ("jax", "views", views_jax), ("jax", "copies", copies_jax),
    ]  # fmt: skip
    shared = {}
    for fw, name, fn in cases:
        o, a = fn()
        if not np.array_equal(np.from_dlpack(o), ref):
            raise SystemExit(f"bench_interop: RL exchange '{fw} {name}' ({kind}) read other observations")
        shared[(fw, name)] = data_ptr(o) == ptr
        if name == "copies" and shared[(fw, name)]:
            raise SystemExit(f"bench_interop: RL exchange '{fw} copies' ({kind}) did not copy")
    if not shared[("torch", "views")]:
        raise SystemExit(f"bench_interop: RL exchange 'torch views' ({kind}) copied")
    a_view = views_torch()[1]
    a_view.copy_(a_torch)
    np.testing.assert_array_equal(act.to_numpy(), a_torch.numpy())  # the action view is Taichi's memory
    times = {(fw, name): timeit(fn, min_time=0.1, repeats=5) for fw, name, fn in cases}
    rows = []
    for (fw, name), t in times.items():
        if name == "views":
            label = "TiArray views made each step" + (
                "" if shared[(fw, name)] else " (JAX copied: unaligned)"
            )
        else:
            label = "Taichi's to_/from_ copies"
        rows.append(
            {
                "state": f"ti.{kind}",
                "policy": fw,
                "method": label,
                "us / step": fmt_us(t),
                "x copies": f"{t / times[(fw, 'copies')]:.2f}",
            }
        )
    return rows


if __name__ == "__main__":
    main()
