"""Benchmark: the COBA and CUBA E/I networks, tiarray next to the field's simulators.

The network of ``examples/ei_network_jax.py`` (Brette et al. 2007 as used by BrainPy:
80 % excitatory / 20 % inhibitory LIF neurons, dt = 0.1 ms, 5 ms refractory period,
exponential synapses, conductance-based (COBA) or current-based (CUBA, ``Params.cuba()``),
about 20 Hz), run by every implementation with the same equations, the same
connectivity and the same initial membrane potentials: both are generated once per size
(``tiarray.operators.fixed_prob_csr`` through ``_ei_common.build_connectivity``, a seeded
NumPy draw of ``v``), saved to an ``.npz`` in ``--cache`` and loaded everywhere.

Rows (``--rows``), each in seconds of wall time per simulated second, compilation and
warm-up excluded (reported as ``setup s``):

- ``ti-jax``: tiarray's ``event_csrmv(..., transpose=True)`` in the step of
  ``ei_network_jax.make_step`` (the example's own ``lax.scan`` step function: one call
  per step over both projections, merged by ``_ei_common.merge_projections``), run in a
  jitted ``lax.fori_loop`` whose trip count is an argument, so that the warm-up and the
  timed run are one executable (XLA runs ``scan`` and ``fori_loop`` as the same while
  loop); the loop carries the spike counts instead of the example's spike raster;
- ``ti-torch``: the same in the Python loop of ``ei_network_torch.run`` (torch tensors);
- ``floor``: the same JAX loop without spike propagation (both products replaced by zeros);
- ``dense``: the JAX step with ``s @ W`` (= ``W.T @ s``) on the dense matrix, only up to
  ``--dense-max-n`` (n = 40 000 would need 6.4 GB and hours);
- ``scatter``: the pure-JAX event-driven step: ``jnp.nonzero(spikes, size=cap)`` picks the
  spiking rows of the connectivity padded to a fixed row length (ELL), and
  ``jnp.zeros(n).at[targets].add(w, mode="drop")`` adds their synapses. The static
  ``cap`` is the next power of two above twice the most spikes per step seen in the
  ``ti-jax`` runs (the first volley of the initial state, far above the steady state's
  spikes per step); a step with more spikes than ``cap`` would lose spikes, so the row's
  own maximum is checked and the row marked ``cap exceeded``;
- ``brainevent``: ``brainevent.BinaryArray(spikes) @ brainevent.CSR(...)`` (homogeneous
  weight, the operator BrainPy's event-driven CSR projections call) in the same JAX step;
- ``brian2-cython``: Brian2's runtime device, cython code generation;
- ``brian2-cpp``: Brian2's C++ standalone device; the time is the simulation loop that
  Brian2 measures inside the built program (``device._last_run_time``), without code
  generation, compilation and the program's set-up.

brainevent 0.3 needs Python >= 3.12 and Brian2 2.11 Python >= 3.13, tiarray's torch
wheel is cp311: those rows run in a subprocess of ``--peer-python`` (an interpreter with
brainevent, jax, Brian2, cython and tiarray installed), which gets the ``.npz`` and
returns JSON; without ``--peer-python`` they print ``not run``.

Brian2 runs the same discrete update as the JAX step: ``ge``, ``gi`` are plain variables
decayed by a ``run_regularly`` operation before the Euler step of ``v``, the network's
schedule is ``thresholds, synapses, resets, groups`` (the JAX step's order), float32
throughout (``prefs.core.default_float_dtype``).

Scaling (``--scaling``): ``fixed-k`` (default) keeps 80 synapses per neuron
(p = 80 / n: p = 0.02 at n = 4000) and the weights, so that every size is statistically
the same network and the work grows with n; 400 000 neurons are 32 M synapses (128 MB of
indices). ``fixed-p`` is BrainPy's scaled COBA: p = 0.02 and weights times 4000 / n, so
the work grows with n^2; it stops at sizes whose synapses fit int32 indices (n = 40 000:
32 M synapses; n = 400 000 would be 3.2 G).

Agreement: the network is chaotic, so spike trains diverge between implementations and
only rates can agree. Before the rows, ``--tol-runs`` K runs of ``ti-jax`` from K other
initial states on the same connectivity give the rates' mean m and standard deviation s
for this size and duration; a row agrees when both of its rates lie within
``t s sqrt(1 + 1/K)`` of m, t the 0.999 quantile of Student's t with K - 1 degrees of
freedom (a prediction interval: a run that is an independent sample of the same network
falls outside it with probability 0.002; t = 4.8 for K = 8). Other initial states are the
right null: runs from the example's own initial state perturbed by 1e-3 mV, which is what
rounding differences between implementations amount to, spread as much (COBA, 4000
neurons, 1 s: sd of the excitatory rate 0.73 Hz perturbed, 0.58 Hz over seeds; about 3 %
of the rate, so agreement "within a few percent" needs runs of a second or more). The
floor, which has no synapses, is only checked for finite rates.

Threads: ``--threads`` (default 2) for every library that has a knob: Taichi
``cpu_max_num_threads``, ``torch.set_num_threads``, Brian2's ``openmp_threads`` (C++
standalone, ``--brian-openmp`` to set it apart: 0 is Brian2's serial default; the cython
runtime is serial), numba (``brainevent.config.set_numba_parallel``;
brainevent's scatter kernel for ``transpose=True`` is serial in any case),
OMP_NUM_THREADS. XLA's CPU client has no thread-count knob: it uses the machine's CPUs.

Usage::

    python benchmarks/bench_network.py --peer-python PY --duration 1 1 0.2 \\
        --plot docs/_static/bench_network.png --json bench_network.json
    python benchmarks/bench_network.py --quick          # smoke run (CI, no peers)
    python benchmarks/bench_network.py --sizes 4000 --models coba --rows ti-jax floor
    python benchmarks/bench_network.py --gpu    # one CUDA GPU: COBA at 4000 and 400 000, JAX rows
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
sys.path.insert(0, HERE)
sys.path.insert(0, EXAMPLES)

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

ROWS = ["ti-jax", "ti-torch", "floor", "dense", "scatter", "brainevent", "brian2-cython", "brian2-cpp"]
PEER_ROWS = ("brainevent", "brian2-cython", "brian2-cpp")
LABELS = {
    "ti-jax": "tiarray, jitted JAX loop",
    "ti-torch": "tiarray, torch loop",
    "floor": "floor: JAX step, no propagation",
    "dense": "JAX dense s @ W",
    "scatter": "JAX scatter (nonzero + ELL .at[].add)",
    "brainevent": "brainevent BinaryArray @ CSR",
    "brian2-cython": "Brian2 runtime (cython)",
    "brian2-cpp": "Brian2 C++ standalone",
}
K_SYN = 80  # synapses per neuron for --scaling fixed-k (Brette et al.: 4000 x 0.02)
TOL_ALPHA = 0.002  # false-alarm probability of one rate check
PLAUSIBLE_HZ = (0.5, 200.0)
WARM_STEPS = 100


# ----------------------------------------------------------------------------- the case


def params_for(model: str, n: int, scaling: str):
    """The example's parameters; ``fixed-p`` scales the weights by 4000 / n (BrainPy)."""
    from _ei_common import Params

    p = Params() if model == "coba" else Params.cuba()
    if scaling == "fixed-p":
        s = 4000.0 / n
        p = dataclasses.replace(p, w_e=p.w_e * s, w_i=p.w_i * s)
    return p


def prob_for(n: int, scaling: str) -> float:
    return 0.02 if scaling == "fixed-p" else min(1.0, K_SYN / n)


def initial_v(n: int, seed: int) -> np.ndarray:
    """Membrane potentials around -55 mV (the example's distribution), float32."""
    return (-55.0 + 2.0 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


def make_case(n: int, scaling: str, cache: str, seed: int = 42) -> str:
    """Generate (or find) the connectivity and initial state of one size; returns the .npz path."""
    prob = prob_for(n, scaling)
    path = os.path.join(cache, f"ei_n{n}_p{prob:.6g}_seed{seed}.npz")
    if os.path.exists(path):
        return path
    n_exc = int(n * 0.8)
    expected = prob * n * n
    if expected > 0.95 * (2**31 - 1):
        raise SystemExit(
            f"bench_network.py: argument --sizes: n = {n} with p = {prob} gives about {expected:.3g} "
            "synapses, more than int32 indices hold; use --scaling fixed-k or a smaller n"
        )
    from _ei_common import build_connectivity

    n_exc, (ind_e, ptr_e), (ind_i, ptr_i) = build_connectivity(n, prob=prob, seed=seed)
    os.makedirs(cache, exist_ok=True)
    tmp = path + ".tmp.npz"
    np.savez(
        tmp, n=n, n_exc=n_exc, prob=prob, seed=seed, v0=initial_v(n, 0),
        ind_e=ind_e, ptr_e=ptr_e, ind_i=ind_i, ptr_i=ptr_i,
    )  # fmt: skip
    os.replace(tmp, path)
    return path


def load_case(path: str) -> dict:
    with np.load(path) as z:
        c = {k: z[k] for k in z.files}
    for k in ("n", "n_exc", "seed"):
        c[k] = int(c[k])
    c["prob"] = float(c["prob"])
    c["nnz"] = int(c["ind_e"].shape[0] + c["ind_i"].shape[0])
    return c


# ----------------------------------------------------------------------------- JAX rows


def _ell(ind: np.ndarray, ptr: np.ndarray, n: int) -> np.ndarray:
    """CSR rows padded to the longest row with the out-of-range target ``n``, plus one
    all-padding row (where ``jnp.nonzero``'s fill value points)."""
    counts = np.diff(ptr)
    rows = counts.shape[0]
    out = np.full((rows + 1, max(1, int(counts.max(initial=0)))), n, np.int32)
    col = np.arange(ind.shape[0]) - np.repeat(ptr[:-1], counts)
    out[np.repeat(np.arange(rows), counts), col] = ind
    return out


def _dense(ind: np.ndarray, ptr: np.ndarray, n: int, w: float) -> np.ndarray:
    counts = np.diff(ptr)
    W = np.zeros((counts.shape[0], n), np.float32)
    W[np.repeat(np.arange(counts.shape[0]), counts), ind] = w
    return W


def jax_variant(kind: str, p, case: dict, caps=None):
    """``(extra, builder)``: ``builder(extra)`` gives ``make_step``'s ``propagate`` (None:
    tiarray's) from the jitted arguments ``extra`` (a pytree of arrays)."""
    import jax.numpy as jnp

    n, n_exc = case["n"], case["n_exc"]
    w_e, w_i = jnp.float32(p.w_e), jnp.float32(p.w_i)
    if kind == "ti-jax":
        return (), lambda extra: None
    if kind == "floor":

        def floor(extra):
            return lambda spike: (jnp.zeros(n, jnp.float32), jnp.zeros(n, jnp.float32))

        return (), floor
    if kind == "dense":
        extra = (
            _dense(case["ind_e"], case["ptr_e"], n, p.w_e),
            _dense(case["ind_i"], case["ptr_i"], n, p.w_i),
        )

        def dense(extra):
            We, Wi = extra
            return lambda spike: (
                spike[:n_exc].astype(jnp.float32) @ We,
                spike[n_exc:].astype(jnp.float32) @ Wi,
            )

        return extra, dense
    if kind == "scatter":
        cap_e, cap_i = caps
        extra = (_ell(case["ind_e"], case["ptr_e"], n), _ell(case["ind_i"], case["ptr_i"], n))

        def one(s, ell, cap, w):
            act = jnp.nonzero(s, size=cap, fill_value=s.shape[0])[0]
            return jnp.zeros(n, jnp.float32).at[ell[act].reshape(-1)].add(w, mode="drop")

        def scatter(extra):
            ell_e, ell_i = extra
            return lambda spike: (
                one(spike[:n_exc], ell_e, cap_e, w_e),
                one(spike[n_exc:], ell_i, cap_i, w_i),
            )

        return extra, scatter
    if kind == "brainevent":
        import brainevent

        def csr(ind, ptr, rows, w):
            data = jnp.full((1,), w, jnp.float32)  # (1,): one homogeneous weight
            return brainevent.CSR((data, jnp.asarray(ind), jnp.asarray(ptr)), shape=(rows, n))

        # Closed over, as a BrainPy model holds them: brainevent's CSR pytree keeps indices
        # and indptr as static data (only the weights are leaves), and jax's AOT lowering
        # fails rebuilding it from argument placeholders (brainevent 0.3.0).
        ce = csr(case["ind_e"], case["ptr_e"], n_exc, p.w_e)
        ci = csr(case["ind_i"], case["ptr_i"], n - n_exc, p.w_i)

        def be(extra):
            return lambda spike: (
                brainevent.BinaryArray(spike[:n_exc]) @ ce,
                brainevent.BinaryArray(spike[n_exc:]) @ ci,
            )

        return (), be
    raise ValueError(f"jax_variant(): unknown kind {kind!r}")


def run_jax(kind: str, p, case: dict, v0s, steps: int, caps=None) -> tuple[float, list[dict]]:
    """Compile the loop once (and warm it up on WARM_STEPS steps), then run it from each
    initial state in ``v0s``. Returns ``(setup_s, [result per v0])``."""
    import tiarray.operators  # noqa: F401  (before jax: keeps Taichi's banner quiet)

    # isort: split
    import jax
    import jax.numpy as jnp
    from ei_network_jax import make_step, state_from
    from jax import lax

    n, n_exc = case["n"], case["n_exc"]
    t0 = time.perf_counter()
    extra, builder = jax_variant(kind, p, case, caps)
    extra = jax.tree_util.tree_map(jnp.asarray, extra)
    conn = tuple(jnp.asarray(case[k]) for k in ("ind_e", "ptr_e", "ind_i", "ptr_i"))

    def simulate(state, conn, extra, length):
        # connectivity as jitted arguments, not constants folded into the program
        step = make_step(p, n, n_exc, conn[:2], conn[2:], propagate=builder(extra))

        def body(i, carry):
            s, total, most = carry
            s, spike = step(s, None)
            k = jnp.stack([jnp.sum(spike[:n_exc], dtype=jnp.int32), jnp.sum(spike[n_exc:], dtype=jnp.int32)])
            return s, total + k, jnp.maximum(most, k)

        z = jnp.zeros(2, jnp.int32)
        return lax.fori_loop(0, length, body, (state, z, z))[1:]

    # The trip count is an argument: the warm-up (kernels compile on first use) and the
    # timed run are the same executable. (AOT lower/compile of a scan of static length
    # fails with brainevent's closed-over CSR in jax 0.10.2: "compiled for 21 inputs but
    # called with 9".)
    fn = jax.jit(simulate)
    jax.block_until_ready(fn(state_from(v0s[0]), conn, extra, jnp.int32(min(steps, WARM_STEPS))))
    setup = time.perf_counter() - t0
    out = []
    for v0 in v0s:
        state = jax.block_until_ready(state_from(v0))
        t1 = time.perf_counter()
        total, most = jax.block_until_ready(fn(state, conn, extra, jnp.int32(steps)))
        run_s = time.perf_counter() - t1
        out.append(dict(run_s=run_s, spikes=np.asarray(total).tolist(), max_step=np.asarray(most).tolist()))
    return setup, out


# ----------------------------------------------------------------------------- torch row


def run_torch(p, case: dict, steps: int, threads: int) -> dict:
    import tiarray.operators  # noqa: F401

    # isort: split
    import torch
    from ei_network_torch import run

    torch.set_num_threads(threads)
    n, n_exc = case["n"], case["n_exc"]
    conn_e, conn_i = (case["ind_e"], case["ptr_e"]), (case["ind_i"], case["ptr_i"])
    v0 = case["v0"]
    t0 = time.perf_counter()
    run(p, n_exc, conn_e, conn_i, torch.from_numpy(v0.copy()), min(steps, WARM_STEPS), lambda k, s: None)
    setup = time.perf_counter() - t0
    acc = torch.zeros(n, dtype=torch.int32)
    run_s = run(p, n_exc, conn_e, conn_i, torch.from_numpy(v0.copy()), steps, lambda k, s: acc.add_(s))
    counts = acc.numpy()
    return dict(run_s=run_s, setup_s=setup, spikes=[int(counts[:n_exc].sum()), int(counts[n_exc:].sum())])


# ----------------------------------------------------------------------------- Brian2 rows


def run_brian2(p, case: dict, duration_s: float, standalone: bool, openmp: int, workdir: str) -> dict:
    import warnings

    # Brian2's NaN/overflow check compares float32 state with 1e50
    warnings.filterwarnings("ignore", "overflow encountered in cast")
    import brian2 as b2
    from brian2 import ms

    if standalone:
        b2.set_device("cpp_standalone", build_on_run=False, directory=workdir)
        b2.prefs.devices.cpp_standalone.openmp_threads = openmp
    else:
        b2.prefs.codegen.target = "cython"
    b2.prefs.core.default_float_dtype = np.float32
    b2.defaultclock.dt = p.dt * ms
    n, n_exc = case["n"], case["n_exc"]
    ns = dict(
        v_rest=p.v_rest, v_th=p.v_th, v_reset=p.v_reset, tau=p.tau * ms, e_exc=p.e_exc, e_inh=p.e_inh,
        i_ext=p.i_ext, w_e=p.w_e, w_i=p.w_i,
        decay_e=float(np.float32(np.exp(-p.dt / p.tau_e))), decay_i=float(np.float32(np.exp(-p.dt / p.tau_i))),
    )  # fmt: skip
    current = "ge * (e_exc - v) + gi * (e_inh - v) + i_ext" if p.model == "coba" else "ge + gi + i_ext"
    eqs = f"dv/dt = (v_rest - v + {current}) / tau : 1 (unless refractory)\nge : 1\ngi : 1"
    t0 = time.perf_counter()
    G = b2.NeuronGroup(
        n,
        eqs,
        threshold="v >= v_th",
        reset="v = v_reset",
        refractory=p.tau_ref * ms,
        method="euler",
        namespace=ns,
    )
    G.v = case["v0"]
    # the JAX step decays ge, gi before the Euler step of v, which sees the decayed values
    G.run_regularly("ge *= decay_e\ngi *= decay_i", when="groups", order=-1)
    syn = []
    for src, var, ind, ptr in ((G[:n_exc], "ge", case["ind_e"], case["ptr_e"]),
                               (G[n_exc:], "gi", case["ind_i"], case["ptr_i"])):  # fmt: skip
        S = b2.Synapses(src, G, on_pre=f"{var}_post += {'w_e' if var == 'ge' else 'w_i'}", namespace=ns)
        S.connect(i=np.repeat(np.arange(ptr.shape[0] - 1, dtype=np.int32), np.diff(ptr)), j=ind)
        syn.append(S)
    mon = b2.SpikeMonitor(G, record=False)
    net = b2.Network(G, *syn, mon)
    net.schedule = ["start", "thresholds", "synapses", "resets", "groups", "end"]
    net.run(duration_s * 1000 * ms)
    if standalone:
        b2.device.build(directory=workdir, compile=True, run=True, debug=False)
    total = time.perf_counter() - t0
    run_s = float(b2.device._last_run_time)
    counts = np.asarray(mon.count)
    return dict(
        run_s=run_s, setup_s=total - run_s, spikes=[int(counts[:n_exc].sum()), int(counts[n_exc:].sum())]
    )


# ----------------------------------------------------------------------------- peer worker


def _peer_versions() -> dict:
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("jax", "brainevent", "numba", "brian2", "Cython"):
        try:
            out[mod] = str(__import__(mod).__version__)
        except Exception:
            pass
    try:
        out["g++"] = subprocess.run(
            ["g++", "-dumpfullversion"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        pass
    return out


def worker(req_path: str) -> int:
    """The peer side: one row in this interpreter, request and result as JSON files."""
    with open(req_path) as f:
        req = json.load(f)
    from _ei_common import Params

    p = Params(**req["params"])
    case = load_case(req["case"])
    steps = int(round(req["duration_s"] * 1000.0 / p.dt))
    impl, threads = req["impl"], req["threads"]
    if impl == "brainevent":
        import brainevent

        brainevent.config.set_numba_parallel(True, num_threads=threads)
        setup, (res,) = run_jax("brainevent", p, case, [case["v0"]], steps)
        res["setup_s"] = setup
    elif impl in ("brian2-cython", "brian2-cpp"):
        standalone = impl == "brian2-cpp"
        res = run_brian2(p, case, steps * p.dt / 1000.0, standalone, req["openmp"], req["workdir"])
    else:
        raise SystemExit(f"bench_network.py --worker: unknown implementation {impl!r}")
    res["versions"] = _peer_versions()
    with open(req["out"], "w") as f:
        json.dump(res, f)
    return 0


def run_peer(impl, peer_python, case_path, p, duration_s, threads, openmp, cache, timeout) -> dict:
    n = load_case(case_path)["n"]
    workdir = os.path.join(cache, f"brian2_{p.model}_n{n}_omp{openmp}")
    fd, req_path = tempfile.mkstemp(suffix=".json", dir=cache)
    os.close(fd)
    out_path = req_path[:-5] + ".out.json"
    req = dict(impl=impl, case=case_path, params=dataclasses.asdict(p), duration_s=duration_s,
               threads=threads, openmp=openmp, workdir=workdir, out=out_path)  # fmt: skip
    with open(req_path, "w") as f:
        json.dump(req, f)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads), JAX_PLATFORMS="cpu")
    try:
        r = subprocess.run(
            [peer_python, os.path.abspath(__file__), "--worker", req_path],
            capture_output=True, text=True, timeout=timeout, env=env,
        )  # fmt: skip
        if r.returncode != 0 or not os.path.exists(out_path):
            lines = (r.stderr or r.stdout).strip().splitlines()
            errs = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception|Exit)\b", ln)]
            return dict(error=((errs or lines)[-1:] or [f"exit status {r.returncode}"])[0][:300])
        with open(out_path) as f:
            return json.load(f)
    except subprocess.TimeoutExpired:
        return dict(error=f"timed out after {timeout} s")
    finally:
        for q in (req_path, out_path):
            if os.path.exists(q):
                os.remove(q)


# ----------------------------------------------------------------------------- the run


def rates(spikes, case, duration_s):
    n_exc = case["n_exc"]
    return [spikes[0] / (n_exc * duration_s), spikes[1] / ((case["n"] - n_exc) * duration_s)]


def t_quantile(q: float, dof: int) -> float:
    """The ``q`` quantile (q > 0.5) of Student's t with ``dof`` degrees of freedom
    (Simpson's rule on the density, bisection; no SciPy needed)."""
    c = math.exp(math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2)) / math.sqrt(dof * math.pi)

    def cdf(x, m=4000):
        h = x / m
        f = [c * (1 + (i * h) ** 2 / dof) ** (-(dof + 1) / 2) for i in range(m + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    lo, hi = 0.0, 1.0
    while cdf(hi) < q:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return (lo + hi) / 2


def next_pow2(x: int) -> int:
    return 1 << max(0, int(x - 1).bit_length())


def check_row(row, tol) -> str:
    r = row.get("rates")
    if r is None:
        return ""
    lo, hi = PLAUSIBLE_HZ
    if not all(math.isfinite(x) for x in r):
        row["bad"] = True
        return "**rates not finite**"
    if row["impl"] == "floor":
        return "n/a (no synapses)"
    if not all(lo < x < hi for x in r):
        row["bad"] = True
        return f"**implausible** (outside {lo}-{hi} Hz)"
    if row.get("cap_exceeded"):
        row["bad"] = True
        return "**cap exceeded** (spikes dropped)"
    if tol is None:
        return "no check (--tol-runs < 2)"
    bad = [f"{pop} {x:.2f} vs {m:.2f} +- {t:.2f}" for pop, x, m, t in zip("EI", r, tol["mean"], tol["tol"])
           if abs(x - m) > t]  # fmt: skip
    if bad:
        row["bad"] = True
        return "**DIFFERS** (" + "; ".join(bad) + ")"
    return "ok"


def run_case(args, model, n, duration, case_path, out_rows):
    case = load_case(case_path)
    p = params_for(model, n, args.scaling)
    steps = int(round(duration * 1000.0 / p.dt))
    dur = steps * p.dt / 1000.0
    base = dict(model=model, n=n, nnz=case["nnz"], prob=case["prob"])
    rows = []

    def add(impl, **kw):
        rows.append(dict(base, impl=impl, **kw))
        r = rows[-1]
        msg = r.get("not_run") or r.get("error") or f"{r['run_s'] / dur:.3f} s/sim s"
        print(f"  . {model} n={n} {impl}: {msg}", file=sys.stderr, flush=True)

    # the tolerance runs and the ti-jax row: one compiled loop, K + 1 initial states
    v0s = [case["v0"]] + [initial_v(n, s) for s in range(1, args.tol_runs + 1)]
    setup, res = run_jax("ti-jax", p, case, v0s, steps)
    ens = np.array([rates(r["spikes"], case, dur) for r in res[1:]])
    tol = None
    if len(ens) >= 2:
        mean, sd = ens.mean(axis=0), ens.std(axis=0, ddof=1)
        k = len(ens)
        c = t_quantile(1 - TOL_ALPHA / 2, k - 1)
        tol = dict(mean=mean.tolist(), sd=sd.tolist(), tol=(c * sd * math.sqrt(1 + 1 / k)).tolist(), k=k, t=c)
    max_step = np.max([r["max_step"] for r in res], axis=0)
    caps = [next_pow2(2 * int(m)) for m in max_step]
    if "ti-jax" in args.rows:
        add("ti-jax", run_s=res[0]["run_s"], setup_s=setup, rates=rates(res[0]["spikes"], case, dur))

    for impl in ("floor", "dense", "scatter"):
        if impl not in args.rows:
            continue
        if impl == "dense" and n > args.dense_max_n:
            add(
                impl,
                not_run=f"not run: n > --dense-max-n {args.dense_max_n} (dense W is {4 * n * n / 1e9:.2g} GB)",
            )
            continue
        time.sleep(0.5)  # let the previous row's threads go to sleep
        s, (r,) = run_jax(impl, p, case, [case["v0"]], steps, caps=caps)
        extra = {}
        if impl == "scatter":
            extra = dict(cap=caps, cap_exceeded=bool(any(m > c for m, c in zip(r["max_step"], caps))))
        add(impl, run_s=r["run_s"], setup_s=s, rates=rates(r["spikes"], case, dur), **extra)

    if "ti-torch" in args.rows:
        try:
            import torch  # noqa: F401

            have_torch = True
        except ImportError:
            have_torch = False
        if have_torch:
            time.sleep(0.5)
            r = run_torch(p, case, steps, args.threads)
            add("ti-torch", run_s=r["run_s"], setup_s=r["setup_s"], rates=rates(r["spikes"], case, dur))
        else:
            add("ti-torch", not_run="not run: torch is not installed")

    for impl in PEER_ROWS:
        if impl not in args.rows:
            continue
        if not args.peer_python:
            add(
                impl,
                not_run="not run: needs --peer-python (brainevent 0.3 needs Python >= 3.12, Brian2 2.11 >= 3.13)",
            )
            continue
        time.sleep(0.5)
        r = run_peer(
            impl,
            args.peer_python,
            case_path,
            p,
            dur,
            args.threads,
            args.brian_openmp,
            args.cache,
            args.peer_timeout,
        )
        if "error" in r:
            add(impl, error=f"error: {r['error']}")
            continue
        add(
            impl,
            run_s=r["run_s"],
            setup_s=r["setup_s"],
            rates=rates(r["spikes"], case, dur),
            versions=r["versions"],
        )

    ref = {r["impl"]: r["run_s"] for r in rows if "run_s" in r}
    for r in rows:
        r["check"] = check_row(r, tol)
        if "run_s" in r:
            r["s_per_s"] = r["run_s"] / dur
            r["vs_ti_jax"] = r["run_s"] / ref["ti-jax"] if "ti-jax" in ref else float("nan")
            r["vs_floor"] = r["run_s"] / ref["floor"] if "floor" in ref else float("nan")
    order = {k: i for i, k in enumerate(ROWS)}
    rows.sort(key=lambda r: order[r["impl"]])
    out_rows.extend(rows)
    return dict(model=model, n=n, duration_s=dur, tol=tol, caps=caps, ti_jax_max_step=max_step.tolist())


def _f(x, digits=3):
    if x is None or x != x:
        return "-"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}g}" if x < 0.01 else f"{x:.{digits}f}"


def print_table(rows, cases):
    print(
        "| model | n | synapses | implementation | s / sim s | / ti-jax | / floor | setup s | E Hz | I Hz | check |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        head = f"| {r['model'].upper()} | {r['n']:,} | {r['nnz']:,} | {LABELS[r['impl']]} |"
        if "run_s" not in r:
            print(head + f" {r.get('not_run') or r.get('error')} | | | | | | |")
            continue
        print(
            head
            + f" {_f(r['s_per_s'])} | {_f(r['vs_ti_jax'], 2)} | {_f(r['vs_floor'], 2)} | {_f(r['setup_s'], 2)} |"
            f" {r['rates'][0]:.2f} | {r['rates'][1]:.2f} | {r['check']} |"
        )
    print(
        "\nAgreement: mean +- sd of the rates over the tolerance runs of ti-jax; a row agrees when both its rates "
        "are within tol = t sd sqrt(1 + 1/runs) of the mean (t: Student's 0.999 quantile)\n"
    )
    print("| model | n | sim s | runs | E Hz | I Hz | t | tol E | tol I | scatter cap E/I |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cases:
        t = c["tol"]
        if t is None:
            print(
                f"| {c['model'].upper()} | {c['n']:,} | {c['duration_s']:g} | <2 | | | | | | {c['caps'][0]}/{c['caps'][1]} |"
            )
            continue
        print(
            f"| {c['model'].upper()} | {c['n']:,} | {c['duration_s']:g} | {t['k']} | {t['mean'][0]:.2f} +- {t['sd'][0]:.2f}"
            f" | {t['mean'][1]:.2f} +- {t['sd'][1]:.2f} | {t['t']:.3g} | {t['tol'][0]:.2f} | {t['tol'][1]:.2f} |"
            f" {c['caps'][0]}/{c['caps'][1]} |"
        )


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [m for m in ("coba", "cuba") if any(r["model"] == m for r in rows)]
    impls = [i for i in ROWS if any(r["impl"] == i and "run_s" in r for r in rows)]
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 5.4), squeeze=False)
    width = 0.8 / max(1, len(impls))
    for ax, m in zip(axes[0], models):
        sizes = sorted({r["n"] for r in rows if r["model"] == m})
        for j, impl in enumerate(impls):
            xs, ys, bad = [], [], []
            for i, n in enumerate(sizes):
                r = next((r for r in rows if r["model"] == m and r["n"] == n and r["impl"] == impl), None)
                if r is not None and "run_s" in r:
                    xs.append(i + (j - (len(impls) - 1) / 2) * width)
                    ys.append(r["s_per_s"])
                    bad.append(r.get("bad", False))
            bars = ax.bar(xs, ys, width, label=LABELS[impl])
            for b, wrong in zip(bars, bad):
                if wrong:
                    b.set_hatch("xx")
        ax.set_xticks(range(len(sizes)), [f"{n:,}" for n in sizes])
        ax.set_yscale("log")
        ax.set_xlabel("neurons")
        ax.set_ylabel("wall s per simulated s")
        ax.set_title(f"{m.upper()} network")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("benchmarks/bench_network.py (hatched: rates disagree)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine_lines(args, load0):
    import _harness

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    import taichi.lang.impl as ti_impl

    return [
        f"- {cpu}; {_harness.machine_line()}",
        f"- threads: {args.threads} (Taichi cpu_max_num_threads={ti_impl.current_cfg().cpu_max_num_threads}, "
        f"torch {args.threads}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, Brian2 C++ openmp_threads="
        f"{args.brian_openmp}, numba {args.threads}; XLA: its own pool over the machine's {os.cpu_count()} CPUs; "
        "Brian2 cython: serial)",
        f"- load average at start {' '.join(f'{x:.2f}' for x in load0)}, at end "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", metavar="REQUEST", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="neurons (default 4000 40000 400000)")
    ap.add_argument(
        "--models", nargs="+", choices=("coba", "cuba"), default=None, help="default coba cuba (--gpu: coba)"
    )
    ap.add_argument(
        "--duration",
        type=float,
        nargs="+",
        default=None,
        help="simulated seconds per row: one value, or one per size (default 1)",
    )
    ap.add_argument("--rows", nargs="+", choices=ROWS, default=ROWS)
    ap.add_argument("--scaling", choices=("fixed-k", "fixed-p"), default="fixed-k")
    ap.add_argument("--quick", action="store_true", help="1000 neurons, 0.1 s (CI smoke run)")
    ap.add_argument("--peer-python", default=None, help="interpreter with brainevent 0.3 and Brian2 (3.12+)")
    ap.add_argument("--peer-timeout", type=float, default=3600.0, help="seconds per peer row")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--brian-openmp",
        type=int,
        default=None,
        help="OpenMP threads of Brian2's C++ standalone (default: --threads; 0: Brian2's default, serial)",
    )
    ap.add_argument(
        "--tol-runs", type=int, default=None, help="ti-jax runs for the tolerance (default 8, quick 16)"
    )
    ap.add_argument("--dense-max-n", type=int, default=4000)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tiarray-bench-network"))
    ap.add_argument("--plot", default=None, help="write a bar chart (PNG) here")
    ap.add_argument("--json", default=None, help="write the rows as JSON here")
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="on one CUDA GPU: COBA at 4000 and 400000 neurons, 0.2 s, the JAX rows (see gpu_main)",
    )
    ap.add_argument("--gpu-repeats", type=int, default=3, help="--gpu: timed runs per row (median, min)")
    ap.add_argument("--gpu-device", choices=["cuda", "cpu"], default="cuda", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.gpu:
        return gpu_main(args)
    args.models = args.models or ["coba", "cuba"]
    if args.threads < 1:
        ap.error(f"argument --threads: must be >= 1, got {args.threads}")
    args.brian_openmp = args.threads if args.brian_openmp is None else args.brian_openmp
    if args.brian_openmp < 0:
        ap.error(f"argument --brian-openmp: must be >= 0, got {args.brian_openmp}")
    sizes = args.sizes or (
        [1000] if args.quick else [4000, 40000, 400000] if args.scaling == "fixed-k" else [4000, 40000]
    )
    if any(n < 10 for n in sizes):
        ap.error(f"argument --sizes: each size must be >= 10, got {sizes}")
    durations = args.duration or [0.1 if args.quick else 1.0]
    if len(durations) == 1:
        durations = durations * len(sizes)
    if len(durations) != len(sizes) or min(durations) <= 0:
        ap.error(
            f"argument --duration: expected one value > 0 or one per size ({len(sizes)}), got {args.duration}"
        )
    args.tol_runs = args.tol_runs if args.tol_runs is not None else (16 if args.quick else 8)
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[k] = str(args.threads)
    load0 = os.getloadavg()
    import tiarray

    tiarray.init(cpu_max_num_threads=args.threads)
    t_start = time.perf_counter()
    rows, cases = [], []
    for n, duration in zip(sizes, durations):
        path = make_case(n, args.scaling, args.cache)
        for model in args.models:
            cases.append(run_case(args, model, n, duration, path, rows))
    print("# bench_network")
    print(
        f"- E/I network, {args.scaling} scaling ({'80 synapses per neuron' if args.scaling == 'fixed-k' else 'p = 0.02, weights x 4000/n'}), "
        f"{', '.join(f'{d:g}' for d in durations)} s simulated per row, dt 0.1 ms; wall s per simulated s, compile/warm-up excluded (setup s)"
    )
    for line in machine_lines(args, load0):
        print(line)
    peers = {k: v for r in rows for k, v in r.get("versions", {}).items()}
    if peers:
        print("- peers (--peer-python): " + ", ".join(f"{k} {v}" for k, v in peers.items()))
    print()
    print_table(rows, cases)
    print(f"\n_total {time.perf_counter() - t_start:.0f} s_")
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(meta=dict(argv=sys.argv[1:], load=[load0, os.getloadavg()]), cases=cases, rows=rows),
                      f, indent=1, default=str)  # fmt: skip
    bad = [f"{r['model']} n={r['n']} {r['impl']}: {r['check']}" for r in rows if r.get("bad")]
    bad += [f"{r['model']} n={r['n']} {r['impl']}: {r['error']}" for r in rows if "error" in r]
    if bad:
        print("\nFAILED ROWS:\n" + "\n".join(bad))
        return 1
    return 0


# ----------------------------------------------------------------------------- --gpu mode

GPU_ROWS = ("ti-jax", "floor", "dense", "scatter")


def _gpu_err(e) -> str:
    return f"error: {type(e).__name__}: {' '.join(str(e).split())[:150]}".replace("|", "/")


def gpu_run_case(args, model, n, duration, case_path, out_rows, repeats):
    """:func:`run_case` for ``--gpu``: the JAX rows only, each run ``repeats`` times from the
    same initial state (median and min), every row in its own ``try`` (an error is a row)."""
    case = load_case(case_path)
    p = params_for(model, n, args.scaling)
    steps = int(round(duration * 1000.0 / p.dt))
    dur = steps * p.dt / 1000.0
    base = dict(model=model, n=n, nnz=case["nnz"], prob=case["prob"])
    rows = []

    def add(impl, runs=None, **kw):
        if runs:
            ts = [r["run_s"] for r in runs]
            kw.update(run_s=float(np.median(ts)), min_s=float(np.min(ts)), runs=len(ts))
        rows.append(dict(base, impl=impl, **kw))
        r = rows[-1]
        msg = r.get("not_run") or r.get("error") or f"{r['run_s'] / dur:.4f} s/sim s"
        print(f"  . {model} n={n} {impl}: {msg}", file=sys.stderr, flush=True)

    v0 = case["v0"]
    tol, caps, max_step = None, None, None
    try:
        v0s = [v0] * repeats + [initial_v(n, s) for s in range(1, args.tol_runs + 1)]
        setup, res = run_jax("ti-jax", p, case, v0s, steps)
        ens = np.array([rates(r["spikes"], case, dur) for r in res[repeats:]])
        if len(ens) >= 2:
            mean, sd = ens.mean(axis=0), ens.std(axis=0, ddof=1)
            k = len(ens)
            c = t_quantile(1 - TOL_ALPHA / 2, k - 1)
            tol = dict(
                mean=mean.tolist(), sd=sd.tolist(), tol=(c * sd * math.sqrt(1 + 1 / k)).tolist(), k=k, t=c
            )
        max_step = np.max([r["max_step"] for r in res], axis=0)
        caps = [next_pow2(2 * int(m)) for m in max_step]
        if "ti-jax" in args.rows:
            add("ti-jax", runs=res[:repeats], setup_s=setup, rates=rates(res[0]["spikes"], case, dur))
    except Exception as e:
        add("ti-jax", error=_gpu_err(e))
    if caps is None:  # no ti-jax run to size the scatter's cap: a cap that never drops a spike
        caps = [next_pow2(case["n_exc"]), next_pow2(n - case["n_exc"])]

    for impl in ("floor", "dense", "scatter"):
        if impl not in args.rows:
            continue
        if impl == "dense" and n > args.dense_max_n:
            add(
                impl,
                not_run=f"not run: n > --dense-max-n {args.dense_max_n} (dense W is {4 * n * n / 1e9:.2g} GB)",
            )
            continue
        try:
            s, res = run_jax(impl, p, case, [v0] * repeats, steps, caps=caps)
            extra = {}
            if impl == "scatter":
                most = np.max([r["max_step"] for r in res], axis=0)
                extra = dict(cap=caps, cap_exceeded=bool(any(m > c for m, c in zip(most, caps))))
            add(impl, runs=res, setup_s=s, rates=rates(res[0]["spikes"], case, dur), **extra)
        except Exception as e:
            add(impl, error=_gpu_err(e))

    ref = {r["impl"]: r["run_s"] for r in rows if "run_s" in r}
    for r in rows:
        r["check"] = check_row(r, tol)
        if "run_s" in r:
            r["s_per_s"] = r["run_s"] / dur
            r["min_s_per_s"] = r["min_s"] / dur
            r["vs_ti_jax"] = r["run_s"] / ref["ti-jax"] if "ti-jax" in ref else float("nan")
            r["vs_floor"] = r["run_s"] / ref["floor"] if "floor" in ref else float("nan")
    order = {k: i for i, k in enumerate(ROWS)}
    rows.sort(key=lambda r: order[r["impl"]])
    out_rows.extend(rows)
    ms = None if max_step is None else max_step.tolist()
    return dict(model=model, n=n, duration_s=dur, tol=tol, caps=caps, ti_jax_max_step=ms)


def print_gpu_table(rows, cases, repeats):
    print(
        f"| model | n | synapses | implementation | s / sim s (median of {repeats}) | min | / ti-jax | / floor "
        "| setup s | E Hz | I Hz | check |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        head = f"| {r['model'].upper()} | {r['n']:,} | {r['nnz']:,} | {LABELS[r['impl']]} |"
        if "run_s" not in r:
            print(head + f" {r.get('not_run') or r.get('error')} | | | | | | | |")
            continue
        print(
            head
            + f" {_f(r['s_per_s'])} | {_f(r['min_s_per_s'])} | {_f(r['vs_ti_jax'], 2)} | {_f(r['vs_floor'], 2)} |"
            f" {_f(r['setup_s'], 2)} | {r['rates'][0]:.2f} | {r['rates'][1]:.2f} | {r['check']} |"
        )
    print(
        "\nAgreement: mean +- sd of the rates over the tolerance runs of ti-jax (other initial states); a row "
        "agrees when both its rates are within tol = t sd sqrt(1 + 1/runs) of the mean\n"
    )
    print("| model | n | sim s | runs | E Hz | I Hz | t | tol E | tol I | scatter cap E/I |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cases:
        t = c["tol"]
        head = f"| {c['model'].upper()} | {c['n']:,} | {c['duration_s']:g} |"
        caps = f"{c['caps'][0]}/{c['caps'][1]}"
        if t is None:
            print(head + f" <2 | | | | | | {caps} |")
            continue
        print(
            head
            + f" {t['k']} | {t['mean'][0]:.2f} +- {t['sd'][0]:.2f} | {t['mean'][1]:.2f} +- {t['sd'][1]:.2f} |"
            f" {t['t']:.3g} | {t['tol'][0]:.2f} | {t['tol'][1]:.2f} | {caps} |"
        )


def _make_cases_on_cpu(sizes, scaling, cache) -> str:
    """Build the cases' connectivity with Taichi on the CPU, in a subprocess (the connectivity
    of the CPU rows, bit for bit, whatever the GPU's kernels would draw); cached cases are
    kept. Returns what happened; on failure :func:`make_case` builds them in this process."""
    missing = [n for n in sizes if not os.path.exists(
        os.path.join(cache, f"ei_n{n}_p{prob_for(n, scaling):.6g}_seed42.npz"))]  # fmt: skip
    if not missing:
        return f"all {len(sizes)} found in {cache}"
    code = f"import bench_network as b\nfor n in {missing!r}:\n    b.make_case(n, {scaling!r}, {cache!r})\n"
    env = dict(os.environ, TIARRAY_ARCH="cpu", JAX_PLATFORMS="cpu")
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True, text=True,
                           timeout=600)  # fmt: skip
    except Exception as e:
        return f"subprocess failed ({_gpu_err(e)}); built in this process instead"
    if r.returncode != 0:
        last = (r.stderr or r.stdout).strip().splitlines()[-1:] or [f"exit status {r.returncode}"]
        return f"subprocess failed ({last[0][:200]}); built in this process instead"
    return f"built n = {', '.join(map(str, missing))}"


def gpu_main(args) -> int:
    """``--gpu``: the network on one CUDA GPU, JAX rows only.

    The COBA network (``--models``) of the CPU rows (same equations, connectivity from
    :func:`make_case`, initial states), at 4000 and 400 000 neurons (``--sizes``; fixed-k:
    80 synapses per neuron, 32 M synapses at 400 000), ``--duration`` 0.2 s simulated
    (2000 steps) per run: ``ti-jax`` (tiarray's ``event_csrmv`` in the jitted loop),
    ``floor``, ``scatter``, and ``dense`` up to ``--dense-max-n`` (4000). Each row runs
    ``--gpu-repeats`` (3) times from the example's initial state after its warm-up: the
    table has the median and the min; ti-jax's ``--tol-runs`` (8) runs from other initial
    states give the rate tolerance of :func:`check_row`. A row that raises is reported as
    an error row; the run goes on.
    """
    cuda = args.gpu_device == "cuda"
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if not cuda:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    t_start = time.perf_counter()
    load0 = os.getloadavg()
    import tiarray

    try:
        if cuda:
            tdev = tiarray.init("cuda")  # before any other tiarray call
        else:
            tdev = tiarray.init("cpu", cpu_max_num_threads=args.threads)
    except Exception as e:
        print(f"bench_network --gpu: tiarray.init failed: {_gpu_err(e)}")
        return 2
    sizes = args.sizes or ([4000, 400000] if cuda else [1000, 2000])
    durations = args.duration or [0.2 if cuda else 0.05]
    if len(durations) == 1:
        durations = durations * len(sizes)
    if len(durations) != len(sizes) or min(durations) <= 0:
        print(
            f"bench_network --gpu: --duration: one value > 0 or one per size ({len(sizes)}), got {args.duration}"
        )
        return 2
    models = args.models or ["coba"]
    repeats = max(1, args.gpu_repeats)
    args.rows = [r for r in args.rows if r in GPU_ROWS]
    if args.tol_runs is None:
        args.tol_runs = 8 if cuda else 4
    try:
        import jax

        jdev = jax.devices()[0]
    except Exception as e:
        print(f"bench_network --gpu: JAX unusable: {_gpu_err(e)}")
        return 2
    if cuda and jdev.platform != "gpu":
        print(f"bench_network --gpu: JAX has no GPU here (its default device is {jdev})")
        return 2
    rows, cases, notes = [], [], []
    t0 = time.perf_counter()
    msg = _make_cases_on_cpu(sizes, args.scaling, args.cache)
    print(
        f"  . connectivity on the CPU: {msg} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True
    )
    notes.append(f"connectivity (Taichi on the CPU, a subprocess): {msg} in {time.perf_counter() - t0:.1f} s")
    for n, duration in zip(sizes, durations):
        t0 = time.perf_counter()
        try:
            path = make_case(n, args.scaling, args.cache)  # found in the cache, or built here
        except BaseException as e:  # make_case raises SystemExit for sizes that do not fit
            notes.append(f"n={n}: no connectivity: {_gpu_err(e)}")
            continue
        notes.append(f"n={n}: connectivity built or loaded in {time.perf_counter() - t0:.2f} s ({path})")
        print(f"  . n={n}: connectivity in {time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)
        for model in models:
            try:
                cases.append(gpu_run_case(args, model, n, duration, path, rows, repeats))
            except Exception as e:
                notes.append(f"{model} n={n}: stopped: {_gpu_err(e)}")
                rows.append(dict(model=model, n=n, nnz=0, prob=0.0, impl="ti-jax", error=_gpu_err(e)))
    import _harness

    print("# bench_network --gpu")
    print(
        f"- E/I network, {args.scaling} scaling, {', '.join(f'{d:g}' for d in durations)} s simulated per run, "
        f"dt 0.1 ms; wall s per simulated s (median and min of {repeats} runs), compile/warm-up excluded (setup s)"
    )
    print(
        f"- JAX on {jdev} ({getattr(jdev, 'device_kind', '')}), tiarray on {tdev}; {_harness.machine_line()}"
    )
    print(f"- load average at start {' '.join(f'{x:.2f}' for x in load0)}\n")
    print_gpu_table(rows, cases, repeats)
    for note in notes:
        print(f"- note: {note}")
    print(f"\n_total {time.perf_counter() - t_start:.1f} s_")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                dict(meta=dict(argv=sys.argv[1:], gpu=True), cases=cases, rows=rows), f, indent=1, default=str
            )
    bad = [f"{r['model']} n={r['n']} {r['impl']}: {r['check']}" for r in rows if r.get("bad")]
    bad += [f"{r['model']} n={r['n']} {r['impl']}: {r['error']}" for r in rows if "error" in r]
    if bad or not rows:
        print("\nFAILED ROWS:\n" + "\n".join(bad or ["no rows"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
