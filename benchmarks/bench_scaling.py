"""Weak and strong scaling of a sharded spiking-network step over 1, 2 and 4 devices.

The network: ``N`` leaky integrate-and-fire neurons (80% excitatory, 20% inhibitory),
each with ``K`` random outgoing synapses (a CSR matrix whose rows are presynaptic), its
neurons split over the devices with ``tiarray.operators.distributed``, in two ways:

- ``rows`` (``partition_csr_rows``): each device scatters the spikes of its neurons
  through their outgoing synapses (``event_csrmv(..., transpose=True)``), the partial
  currents are reduce-scattered (``psum_scatter``, ``N`` floats per step);
- ``columns`` (``partition_csr_columns``): the spikes are all-gathered (``N`` bools per
  step) and each device adds up its own neurons' input through their incoming synapses.

Every device then integrates its own neurons. ``STEPS`` steps run in one ``lax.scan``
inside ``jit``; the tables give the time per simulated step.

- **weak scaling**: ``N = d * n0`` neurons on ``d`` devices; efficiency ``T(1) / T(d)``;
- **strong scaling**: ``N = max(d) * n0`` neurons on every ``d``; efficiency
  ``T(1) / (d * T(d))``.

Baselines measured in the same run: the single-device network without ``shard_map``
(``1 device, plain``), and the 1-device sharded run that the ratios use.

Modes (each configuration runs in fresh processes):

- ``--mode virtual`` (default on CPUs): one process with ``d`` virtual CPU devices
  (``--xla_force_host_platform_device_count``). They share one Taichi runtime, whose
  launches take turns: this measures the overhead of the sharded program, not a speed-up.
- ``--mode processes``: ``d`` processes on 127.0.0.1 joined by ``jax.distributed``, one
  device each (CPU: gloo collectives; GPU: one GPU per process via ``CUDA_VISIBLE_DEVICES``).

Run: ``python benchmarks/bench_scaling.py`` (``--quick`` for a small network,
``--mode processes``, ``--devices 1,2,4``, ``--split rows,columns``, ``--neurons-per-device``,
``--degree``).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _harness  # noqa: E402

# ----------------------------------------------------------------------------- the model

TAU, V_TH, V_RESET, W_E, G_I = 0.95, 1.0, 0.0, 0.02, 4.0


def connectivity(n, k, seed=0):
    """``k`` random targets per presynaptic neuron (rows); weights by the row's type."""
    rng = np.random.default_rng(seed)
    indices = np.sort(rng.integers(0, n, size=(n, k), dtype=np.int32), axis=1).reshape(-1)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int32)
    w_row = np.where(np.arange(n) < int(0.8 * n), W_E, -G_I * W_E).astype(np.float32)
    weights = np.repeat(w_row, k)
    drive = rng.uniform(0.03, 0.06, size=n).astype(np.float32)  # constant, heterogeneous
    return weights, indices, indptr, drive


def _lif(v, current, drive):
    import jax.numpy as jnp

    v = TAU * v + current + drive
    fired = v > V_TH
    return jnp.where(fired, V_RESET, v), fired


def reference_current(w, i, p, spikes, n):
    """The input current of one step by NumPy (float64), and the float32 error bound of a
    sum of each element's terms in any order: (terms - 1) * 2^-24 * sum |w| per element."""
    rows = np.flatnonzero(spikes)
    syn = np.concatenate([np.arange(p[r], p[r + 1]) for r in rows]) if rows.size else np.zeros(0, int)
    ref = np.zeros(n)
    np.add.at(ref, i[syn], w[syn].astype(np.float64))
    mag = np.zeros(n)
    np.add.at(mag, i[syn], np.abs(w[syn]).astype(np.float64))
    terms = np.bincount(i[syn], minlength=n)
    return ref, np.maximum(terms - 1, 0) * 2.0**-24 * mag + 1e-30


def build(n, k, steps, mesh, plain=False, split="rows"):
    """A jitted function running ``steps`` steps, its arguments, and a check: a function
    returning how far (beyond the float32 bound) one step's input current lies from NumPy's
    (<= 0 means it agrees)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
    from tiarray.operators.distributed import block_csrmv, partition_csr_columns, partition_csr_rows
    from tiarray.operators.sparse import event_csrmv as op

    w, i, p, drive = connectivity(n, k)
    s_chk = np.random.default_rng(2).random(n) < 0.1  # 10 % of the neurons spike
    ref, tol = reference_current(w, i, p, s_chk, n)
    if plain:
        wj, ij, pj, dj = (jnp.asarray(a) for a in (w, i, p, drive))

        def check():
            cur = np.asarray(op(wj, ij, pj, jnp.asarray(s_chk), shape=(n, n), transpose=True), np.float64)
            return float(np.max(np.abs(cur - ref) - tol))

        def run(v, s):
            def step(c, _):
                v, s = c
                v, s = _lif(v, op(wj, ij, pj, s, shape=(n, n), transpose=True), dj)
                return (v, s), s.sum()

            (v, s), counts = jax.lax.scan(step, (v, s), None, length=steps)
            return v, s, counts.sum()

        v0 = jnp.asarray(np.random.default_rng(1).uniform(0, 1, n).astype(np.float32))
        return jax.jit(run), (v0, v0 > 2), check
    d = len(mesh.devices.flat)
    cut = partition_csr_rows if split == "rows" else partition_csr_columns
    blocks = cut(w, i, p, shape=(n, n), parts=d).shard(mesh, "d")
    if split == "rows":  # own spikes through own rows, partial currents reduce-scattered
        kw = {"reduce": "psum_scatter"}
    else:  # all spikes through own columns (incoming synapses)
        kw = {"split": "columns", "gather": True}

    def body(w, i, p, drive, v, s):
        def step(c, _):
            v, s = c
            cur = block_csrmv(w, i, p, s, shape=(n, n), axis_name="d", transpose=True, op=op, **kw)
            v, s = _lif(v, cur, drive)
            return (v, s), s.sum()

        (v, s), counts = jax.lax.scan(step, (v, s), None, length=steps)
        return v, s, jax.lax.psum(counts.sum(), "d")

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=(P("d"), P("d"), P())))
    split = NamedSharding(mesh, P("d"))

    def put(a):
        return jax.make_array_from_callback(a.shape, split, lambda idx: a[idx])

    def excess(w, i, p, s, r, t):
        cur = block_csrmv(w, i, p, s, shape=(n, n), axis_name="d", transpose=True, op=op, **kw)
        return jax.lax.pmax(jnp.max(jnp.abs(cur.astype(jnp.float32) - r) - t), "d")

    probe = jax.jit(jax.shard_map(excess, mesh=mesh, in_specs=P("d"), out_specs=P()))
    arrays = blocks.arrays()

    def check():
        # float32 on the device side: the bound is far above float32's rounding of ref
        f32 = np.float32
        return float(
            probe(*arrays, put(s_chk), put(ref.astype(f32)), put((tol + 1e-7 * np.abs(ref)).astype(f32)))
        )

    v0 = np.random.default_rng(1).uniform(0, 1, n).astype(np.float32)
    return f, (*arrays, put(drive), put(v0), put(v0 > 2)), check


def measure(fn, args, steps, repeats):
    """Seconds per simulated step (best and median of ``repeats`` runs of ``steps`` steps)
    and the mean firing rate per step."""
    import jax

    out = fn(*args)
    jax.block_until_ready(out)
    spikes = int(out[-1])
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t0) / steps)
    return min(times), float(np.median(times)), spikes


# ----------------------------------------------------------------------------- worker


def worker(a):
    import jax

    if a.mode == "processes" and a.world > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives only
        jax.distributed.initialize(
            coordinator_address=f"127.0.0.1:{a.port}",
            num_processes=a.world,
            process_id=a.rank,
            initialization_timeout=120,
        )
    devices = jax.devices()[: a.devices]
    mesh = jax.make_mesh((len(devices),), ("d",), devices=devices)
    fn, args, check = build(a.neurons, a.degree, a.steps, mesh, plain=a.plain, split=a.split)
    excess = check()  # before timing: the step's current agrees with NumPy's
    best, med, spikes = measure(fn, args, a.steps, a.repeats)
    if a.rank == 0:
        print(
            "RESULT "
            + json.dumps(
                {
                    "best": best,
                    "median": med,
                    "rate": spikes / (a.neurons * a.steps),
                    "platform": devices[0].platform,
                    "device": str(devices[0].device_kind),
                    "excess": excess,
                }
            ),
            flush=True,
        )
    if a.mode == "processes" and a.world > 1:
        jax.distributed.shutdown()


# ----------------------------------------------------------------------------- driver


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        return sum(1 for ln in out.splitlines() if ln.startswith("GPU "))
    except Exception:
        return 0


def run_config(a, d, n, plain=False, split="rows"):
    base = [sys.executable, os.path.abspath(__file__), "--worker", "--mode", a.mode, "--devices", str(d)]
    base += [
        "--neurons",
        str(n),
        "--degree",
        str(a.degree),
        "--steps",
        str(a.steps),
        "--repeats",
        str(a.repeats),
    ]
    base += ["--split", split]
    if plain:
        base.append("--plain")
    env = dict(os.environ)
    gpus = _gpu_count()
    if gpus:
        env["TIARRAY_ARCH"] = "cuda"  # Taichi on the process's GPU, where JAX computes
    if a.mode == "virtual" or d == 1:
        if not gpus:
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={d}"
            env.setdefault("JAX_PLATFORMS", "cpu")
        elif d > 1:
            raise SystemExit("--mode virtual on GPUs: one Taichi runtime per process; use --mode processes")
        cmds = [(base + ["--rank", "0", "--world", "1", "--devices", str(d)], env)]
    else:
        port = _free_port()
        cmds = []
        for r in range(d):
            e = dict(env)
            if gpus:
                e["CUDA_VISIBLE_DEVICES"] = str(r % gpus)
            else:
                e["JAX_PLATFORMS"] = "cpu"
                e["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
            argv = base + ["--rank", str(r), "--world", str(d), "--port", str(port), "--devices", str(d)]
            cmds.append((argv, e))
    procs = [
        subprocess.Popen(c, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for c, e in cmds
    ]
    try:
        outs = [p.communicate(timeout=a.timeout)[0] for p in procs]
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        raise SystemExit(f"configuration d={d}, N={n} did not finish within {a.timeout} s") from None
    for p, o in zip(procs, outs):
        if p.returncode:
            raise SystemExit(f"configuration d={d}, N={n} failed:\n{o[-3000:]}")
    for line in outs[0].splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            if not res["excess"] <= 0:
                raise SystemExit(
                    f"configuration d={d}, N={n}: the step's input current differs from NumPy's by "
                    f"{res['excess']:.3g} beyond the float32 bound"
                )
            return res
    raise SystemExit(f"no result from configuration d={d}, N={n}:\n{outs[0][-3000:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small network, few repeats")
    ap.add_argument("--mode", choices=("virtual", "processes"), default=None)
    ap.add_argument("--devices", default="1,2,4")
    ap.add_argument("--split", default="rows,columns", help="rows, columns or both (comma-separated)")
    ap.add_argument("--neurons-per-device", type=int, default=None)
    ap.add_argument("--degree", type=int, default=100)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--timeout", type=int, default=900)
    # worker arguments
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--neurons", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.devices = int(a.devices)
        return worker(a)
    gpus = _gpu_count()
    a.mode = a.mode or ("processes" if gpus else "virtual")
    n0 = a.neurons_per_device or (2048 if a.quick else (1 << 17 if gpus else 1 << 14))
    a.steps = a.steps or (20 if a.quick else 100)
    a.repeats = a.repeats or (3 if a.quick else 5)
    ds = [int(x) for x in a.devices.split(",")]
    if gpus and a.mode == "processes" and max(ds) > gpus:
        ds = [d for d in ds if d <= gpus]
        print(f"(only {gpus} GPU(s): devices {ds})")
    dmax = max(ds)
    print(f"## Scaling of a sharded event_csrmv network step ({a.mode} devices)\n")
    print(_harness.machine_line())
    print(
        f"\nLIF network, {a.degree} synapses per neuron, 80/20 E/I, {a.steps} steps per run, best of "
        f"{a.repeats} runs; time per simulated step."
    )
    splits = [x for x in a.split.split(",") if x]
    plain = run_config(a, 1, n0, plain=True)
    r_plain_big = run_config(a, 1, dmax * n0, plain=True)
    weak, strong = [], []
    for split in splits:
        for d in ds:
            weak.append((split, d, d * n0, run_config(a, d, d * n0, split=split)))
        for d in ds:
            strong.append((split, d, dmax * n0, run_config(a, d, dmax * n0, split=split)))
    print(
        f"\nplatform: {plain['platform']} ({plain['device']}); product: tiarray.operators.sparse.event_csrmv"
    )

    def table(title, rows, eff, base):
        t1 = {sp: r["best"] for sp, d, _, r in rows if d == 1}
        out = [
            {
                "devices": "1, plain (no shard_map)",
                "neurons": f"{rows[0][2]:,}",
                "ms / step": f"{base['best'] * 1e3:.3f}",
                "median": f"{base['median'] * 1e3:.3f}",
                "spikes / neuron / step": f"{base['rate']:.4f}",
            }
        ]
        for sp, d, n, r in rows:
            t = t1.get(sp)
            out.append(
                {
                    "split": sp,
                    "devices": d,
                    "neurons": f"{n:,}",
                    "ms / step": f"{r['best'] * 1e3:.3f}",
                    "median": f"{r['median'] * 1e3:.3f}",
                    "spikes / neuron / step": f"{r['rate']:.4f}",
                    "vs 1 device": f"{t / r['best']:.2f}x" if t else "",
                    "efficiency": f"{eff(t, r['best'], d):.0%}" if t else "",
                }
            )
        cols = ["split", "devices", "neurons", "ms / step", "median", "spikes / neuron / step"]
        _harness.print_table(title, out, cols + ["vs 1 device", "efficiency"])

    table(
        f"weak scaling: {n0:,} neurons per device (efficiency T(1) / T(d))",
        weak,
        lambda t1, t, d: t1 / t,
        plain,
    )
    table(
        f"strong scaling: {dmax * n0:,} neurons (efficiency T(1) / (d T(d)))",
        strong,
        lambda t1, t, d: t1 / (d * t),
        r_plain_big,
    )
    if a.mode == "virtual" and not gpus:
        print(
            "\nVirtual CPU devices share one process and one Taichi runtime (launches take turns), and"
            f" this machine has {os.cpu_count()} CPUs: the tables show the cost of the sharded program"
            " (collectives, padding, launches), not a speed-up. Use --mode processes, or GPUs."
        )


if __name__ == "__main__":
    main()
