"""Taichi's CPU worker threads: their floating-point environment, and one CPU each.

Once per CPU runtime (started by tiarray or by the user's ``ti.init``), tiarray runs a
probe kernel whose tasks occupy every worker of Taichi's thread pool at once, and uses it
for two things.

**The floating-point environment.** ``ti.init`` turns on flush-to-zero and
denormals-are-zero in the calling thread before Taichi creates its workers, which inherit
it; ``tiarray.init`` restores the calling thread afterwards, but the workers kept FTZ/DAZ,
so parallel kernels flushed subnormal inputs and results to zero while the same kernel on
a small (serial) input did not. Each probe task calls the C library's ``fesetenv`` with
the calling thread's environment, so every thread that runs kernels computes alike. The
call is made from the kernel through Taichi's external-function call, with the address of
``fesetenv`` compiled in; that kernel is therefore never stored in Taichi's offline cache
(the address changes from process to process).

**Pinning.**

Taichi's CPU thread pool (taichi 1.7) wakes its sleeping workers with a condition
variable at every parallel launch. Linux often queues the woken workers on the CPU of the
thread that woke them; the second worker then waits in that CPU's run queue until the
load balancer moves it (seen in ``/proc/<tid>/schedstat``). On the 2-CPU machine tiarray
is measured on, two equal tasks of 1.64 ms took 2.43 ms with free workers and 1.69 ms
with pinned ones (``python benchmarks/bench_launch.py``, third table). OpenMP runtimes
avoid the problem differently: their workers spin for a while after each parallel
region.

So tiarray binds worker ``k`` to the ``k``-th CPU the process may run on, but only
where that is safe and meaningful:

- on Linux (``os.sched_setaffinity`` on thread ids, ``/proc/self/task``);
- when the pool uses exactly as many workers as the process has CPUs
  (``min(cpu_max_num_threads, os.cpu_count()) == len(os.sched_getaffinity(0))``; Taichi
  1.7's pool has one worker per logical CPU of the machine): a process that asked for
  fewer threads (several processes sharing a machine) is left alone, since binding their
  workers to the same first CPUs would pile them up;
- unless ``TIARRAY_PIN_THREADS=0`` is set.

The probe's ``n`` parallel tasks wait for each other (a counter, with a time cap), so
``n`` distinct threads each run for a moment; the threads whose CPU time grew during the
probe are the workers. If the probe cannot show exactly ``n`` such threads, nothing is
pinned. The other threads of the process (the caller's,
Taichi's compile threads) are never touched.

No ``from __future__ import annotations`` here: Taichi reads the probe's annotations.
"""

import ctypes
import os
import sys
import threading
import warnings

import numpy as np

from . import _backend, _runtime
from ._backend import ti
from ._launch import Launcher

__all__ = ["prepare_workers", "pinned_workers", "workers_fp_env_set"]

# of the running program (a per-program cache): whether its workers were prepared, the
# (tid, cpu) pairs pinned, and whether the workers got the calling thread's FP environment
_state: dict = {"done": False, "pinned": [], "fp": False}


def _forget() -> None:
    _state.update(done=False, pinned=[], fp=False)


_runtime.register_cache(_forget)


def _libc_fenv():
    """``(fegetenv, address of fesetenv)`` of the C library, or ``(None, None)``."""
    try:
        libc = ctypes.CDLL(None)
        return libc.fegetenv, ctypes.cast(libc.fesetenv, ctypes.c_void_p).value
    except (OSError, AttributeError, TypeError):  # pragma: no cover - no C library symbols
        return None, None


_FEGETENV, _FESETENV = _libc_fenv() if sys.platform != "win32" else (None, None)


def _call_fesetenv(envp):
    """At compile time: a call of ``fesetenv(envp)`` in the kernel being compiled."""
    if _FESETENV:
        _backend.call_external(_FESETENV, [envp])


# spin iterations before a probe task stops waiting (a few ns each: about 50 ms)
_CAP = 20_000_000


@ti.kernel
def _probe(count: ti.types.ndarray(ndim=1), n: ti.i32, cap: ti.i32, envp: ti.i64):
    # one task per 512 iterations (Taichi's CPU block size for run-time bounds)
    for s in range(n * 512):
        if s % 512 == 0:
            if envp != 0:
                ti.static(_call_fesetenv)(envp)
            ti.atomic_add(count[0], 1)
            c = 0
            while ti.atomic_add(count[0], 0) < n and c < cap:
                c += 1
            if c < cap:
                ti.atomic_add(count[1], 1)


def _enabled() -> bool:
    return os.environ.get("TIARRAY_PIN_THREADS", "1").strip().lower() not in ("0", "false", "no", "off")


def _run_times() -> dict:
    """``{tid: ns on a CPU}`` of every thread of this process (Linux)."""
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/schedstat") as f:
                out[int(t)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def pinned_workers() -> list:
    """``[(thread id, cpu), ...]`` of the worker threads tiarray pinned in this runtime."""
    if _runtime.program() is not _runtime.CACHES.prog:
        _runtime.sync_caches()
    return list(_state["pinned"])


def workers_fp_env_set() -> bool:
    """Whether every worker of the running CPU runtime got the calling thread's FP environment."""
    if _runtime.program() is not _runtime.CACHES.prog:
        _runtime.sync_caches()
    return bool(_state["fp"])


def _pin_cpus(n_threads: int):
    """The CPUs to bind ``n_threads`` workers to, or ``None`` where pinning does not apply."""
    if not (_enabled() and sys.platform.startswith("linux") and hasattr(os, "sched_setaffinity")):
        return None
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except OSError:  # pragma: no cover
        return None
    if n_threads < 2 or n_threads != len(cpus):
        return None
    return cpus


def prepare_workers(prog, n_threads: int) -> list:
    """Give Taichi's ``n_threads`` CPU workers the calling thread's floating-point
    environment and bind each to its own CPU (once per runtime; see the module docstring).

    Returns the ``(thread id, cpu)`` pairs pinned (empty when nothing was pinned).
    """
    with _runtime.lock:
        if _state["done"]:
            return _state["pinned"]
        _state.update(done=True, pinned=[], fp=False)
        if n_threads < 1:
            return []
        env = ctypes.create_string_buffer(1024)  # >= sizeof(fenv_t) everywhere
        envp = ctypes.addressof(env) if _FEGETENV is not None and _FEGETENV(env) == 0 else 0
        # the address of fesetenv is compiled into the kernel: never from the offline cache
        probe = Launcher(
            _probe, name="worker_probe", serial_threshold=-1, compile_options={"offline_cache": False}
        )
        count = np.zeros(2, np.int32)
        with warnings.catch_warnings():
            # Taichi warns about calling a plain Python function (_call_fesetenv) in a kernel
            warnings.simplefilter("ignore", SyntaxWarning)
            probe(count, n_threads, 1, 0)  # compile outside the measured window
        cpus = _pin_cpus(n_threads)
        me = threading.get_native_id()
        for _attempt in range(3):
            count[:] = 0
            before = _run_times() if cpus else {}
            probe(count, n_threads, _CAP, envp)
            after = _run_times() if cpus else {}
            if int(count[1]) == n_threads:  # all n tasks ran at once, on n distinct workers
                break
        else:
            return []
        _state["fp"] = envp != 0
        if cpus is None:
            return []
        grew = [t for t in after if t != me and after[t] - before.get(t, 0) > 0]
        # exactly the n workers ran during the probe: anything else makes it ambiguous
        if len(grew) != n_threads:
            return []
        pinned = []
        try:
            for k, tid in enumerate(sorted(grew)):
                os.sched_setaffinity(tid, {cpus[k]})
                pinned.append((tid, cpus[k]))
        except OSError:
            for tid, _ in pinned:  # undo a partial pinning
                try:
                    os.sched_setaffinity(tid, set(cpus))
                except OSError:  # pragma: no cover
                    pass
            return []
        _state["pinned"] = pinned
        return pinned


_runtime.register_cpu_setup(prepare_workers)
