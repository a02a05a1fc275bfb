"""The Taichi runtime as tiarray sees it: lazy initialisation, the arch, devices.

tiarray never re-initialises Taichi. If the user called ``ti.init`` first, tiarray uses
that runtime as it is. Otherwise the first operation that needs Taichi calls
:func:`tiarray.init` with the defaults (CPU, unless ``TIARRAY_ARCH`` says otherwise),
without Taichi's banner, its "Starting on arch" line, or its network version check.

A process has one Taichi runtime and so one compute device: the CPU (``x64``/``arm64``)
or one CUDA GPU. Arrays on another device can be held and exchanged, but not computed on.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
import weakref

from . import _backend

__all__ = ["Device", "backend", "init", "is_initialized", "current_device", "get_device"]

# One lock for the runtime and everything compiled for it: init, the cache registry, kernel
# compilation (so that a cache is never cleared while a compile fills it).
lock = _lock = threading.RLock()
_SUPPORTED_ARCHS = {"x64": "cpu", "arm64": "cpu", "cuda": "cuda"}


class Device:
    """A device where array memory lives: ``Device("cpu")`` or ``Device("cuda", 0)``.

    Parameters
    ----------
    kind : str
        ``"cpu"`` or ``"cuda"``. The strings ``"cuda:1"`` and ``"gpu"`` are accepted too.
    index : int, optional
        The device ordinal (0 for the CPU).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.Device("cpu")
    Device('cpu')
    >>> ta.Device("cuda:1")
    Device('cuda', 1)
    """

    __slots__ = ("kind", "index")

    def __init__(self, kind: str = "cpu", index: int | None = None):
        if isinstance(kind, Device):
            kind, index = kind.kind, kind.index if index is None else index
        if not isinstance(kind, str):
            raise TypeError(
                f"Device(): argument 'kind' must be a str such as 'cpu' or 'cuda:0', got {kind!r}"
            )
        k = kind.lower()
        if ":" in k:
            k, _, idx = k.partition(":")
            if index is not None and int(idx) != index:
                raise ValueError(f"Device(): conflicting indices in {kind!r} and index={index}")
            index = int(idx)
        if k == "gpu":
            k = "cuda"
        if k not in ("cpu", "cuda"):
            raise ValueError(f"Device(): argument 'kind' must be 'cpu' or 'cuda', got {kind!r}")
        index = 0 if index is None else int(index)
        if index < 0:
            raise ValueError(f"Device(): argument 'index' must be >= 0, got {index}")
        if k == "cpu" and index != 0:
            raise ValueError(f"Device(): the CPU has index 0, got {index}")
        self.kind = k
        self.index = index

    def __repr__(self) -> str:
        return "Device('cpu')" if self.kind == "cpu" else f"Device('cuda', {self.index})"

    def __str__(self) -> str:
        return "cpu" if self.kind == "cpu" else f"cuda:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except (ValueError, TypeError):
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return self.kind == other.kind and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    @property
    def dlpack(self) -> tuple[int, int]:
        """The ``(device_type, device_id)`` pair of DLPack (kDLCPU=1, kDLCUDA=2)."""
        return (1, 0) if self.kind == "cpu" else (2, self.index)


CPU = Device("cpu")


def get_device(device, *, func: str = "tiarray", arg: str = "device") -> Device:
    """Normalise a ``device=`` argument (None means the compute device)."""
    if device is None:
        return current_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        try:
            return Device(device)
        except ValueError as e:
            raise ValueError(f"{func}(): argument '{arg}': {e}") from None
    # framework device objects: torch.device('cuda', 0), jax devices, ...
    plat = getattr(device, "platform", None)
    if isinstance(plat, str):  # jax.Device
        return Device("cpu") if plat == "cpu" else Device("cuda", getattr(device, "id", 0))
    typ = getattr(device, "type", None)
    if isinstance(typ, str) and typ in ("cpu", "cuda"):  # torch.device
        return Device(typ, getattr(device, "index", None))
    raise TypeError(
        f"{func}(): argument '{arg}' must be a tiarray.Device, a string such as 'cpu' or 'cuda:0', "
        f"or None, got {device!r}"
    )


def backend() -> str:
    """The Taichi implementation tiarray computes with: ``"taichi"`` or ``"quadrants"``.

    Chosen once, when tiarray is imported, from the environment variable
    ``TIARRAY_BACKEND`` (default: ``"taichi"`` where it is installed, else
    ``"quadrants"``). Kernels for :class:`tiarray.Operator` and plain kernel calls on
    TiArrays are written in that language (``@ti.kernel`` or ``@qd.kernel``).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.backend() in ("taichi", "quadrants")
    True
    """
    return _backend.NAME


def is_initialized() -> bool:
    """Whether a Taichi runtime exists (started by tiarray or by the user's ``ti.init``)."""
    return _backend.program() is not None


def init(arch: str | None = None, *, backend: str | None = None, **kwargs) -> Device:
    """Start the Taichi runtime for tiarray, quietly. Optional: tiarray calls it on first need.

    Parameters
    ----------
    arch : str, optional
        ``"cpu"`` or ``"cuda"`` (``"gpu"`` means ``"cuda"``). Defaults to the environment
        variable ``TIARRAY_ARCH``, then ``"cpu"``.
    backend : str, optional
        ``"taichi"`` or ``"quadrants"``: the implementation tiarray computes with. It is
        chosen when tiarray is imported, from the environment variable
        ``TIARRAY_BACKEND`` (default: ``taichi`` where it is installed, else
        ``quadrants``); passing another one here is a
        ``ValueError`` that says to set the variable before the import.
    **kwargs
        Passed on to ``ti.init`` (e.g. ``cpu_max_num_threads``, ``device_memory_GB``).
        ``debug=True`` (or the environment variable ``TIARRAY_DEBUG=1``) is the checked
        mode: Taichi checks every array access of every kernel, Operators' included, and
        an out-of-bounds access raises ``IndexError`` naming the operator and the
        argument (slower: for finding bugs; see the Errors section of :doc:`/operators`).
        ``offline_cache=True`` and ``fast_math=False`` (IEEE special values, as the
        array API requires) are the defaults.

    Returns
    -------
    Device
        The device Taichi computes on.

    Notes
    -----
    The first time tiarray uses a CPU runtime (this one, or one the user started with
    ``ti.init``), it prepares Taichi's worker threads: they get the calling thread's
    floating-point environment (Taichi creates them with flush-to-zero on, so parallel
    kernels would otherwise flush subnormals), and, on Linux when the pool has as many
    workers as the process has CPUs, worker ``k`` is bound to the ``k``-th CPU (woken
    workers otherwise often queue on one CPU; see :doc:`/internals`). Set the environment
    variable ``TIARRAY_PIN_THREADS=0`` to leave the workers' CPUs alone.

    Threads: kernels, Operators and TiArrays work from any thread, but Taichi creates
    fields (``ti.field``) only on the thread that started it. A program whose first tiarray call
    runs on a worker thread should call ``init()`` on the main thread first; tiarray warns
    (``RuntimeWarning``) when its implicit start happens elsewhere.

    Raises
    ------
    RuntimeError
        If Taichi is already running (tiarray never re-initialises it; call
        ``ti.reset()`` yourself first if you mean to), or if the arch is not one tiarray
        can exchange memory with.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.init("cpu")  # doctest: +SKIP
    Device('cpu')
    """
    if backend is not None and str(backend).strip().lower() != _backend.NAME:
        raise ValueError(
            f"tiarray.init(): argument 'backend' is {backend!r}, but tiarray was imported with the "
            f"{_backend.NAME!r} backend, which cannot change in a running process; set the environment "
            f"variable TIARRAY_BACKEND={backend} before importing tiarray"
        )
    with _lock:
        if is_initialized():
            raise RuntimeError(
                "tiarray.init(): Taichi is already initialised (by an earlier tiarray.init, an "
                "earlier tiarray operation, or ti.init); tiarray uses the running runtime and never "
                "re-initialises it"
            )
        name = (arch or os.environ.get("TIARRAY_ARCH") or "cpu").lower()
        if name not in ("cpu", "x64", "arm64", "cuda", "gpu"):
            raise ValueError(f"tiarray.init(): argument 'arch' must be 'cpu' or 'cuda', got {arch!r}")
        if kwargs.get("debug") is None:
            kwargs["debug"] = os.environ.get("TIARRAY_DEBUG", "").strip().lower() in (
                "1",
                "true",
                "yes",
                "on",
            )
        if not kwargs["debug"]:
            del kwargs["debug"]
        kwargs.setdefault("offline_cache", True)
        # IEEE semantics (NaN, infinities, signed zeros) as the array API requires: with
        # fast_math LLVM may assume there are none, and e.g. inf * 0 becomes 0.
        kwargs.setdefault("fast_math", False)
        restore_fp = _save_fp_env()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                _backend.start(name, **kwargs)
                # Taichi builds its root SNode tree on the thread that compiles first, and
                # asserts that it is the thread that started the program: build it now, on
                # this one, so that the first kernel may compile on any thread (another
                # thread's eager call, XLA's workers; it failed with Taichi's assertion
                # "add_struct_module ... main_thread_id_" when tiarray started from a thread)
                _backend.materialize()
        finally:
            # ti.init turns on flush-to-zero/denormals-are-zero on the calling thread, which
            # would silently change NumPy's (and everyone's) results in this process.
            restore_fp()
        dev = _current_device_uncached()
        if name in ("cuda", "gpu") and dev.kind != "cuda":
            raise RuntimeError("tiarray.init(): CUDA was asked for but Taichi fell back to the CPU")
        return dev


def _save_fp_env():
    """Save the calling thread's floating-point environment; returns a restorer."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        env = ctypes.create_string_buffer(256)  # >= sizeof(fenv_t) on every platform
        if libc.fegetenv(env) != 0:
            return lambda: None
    except (OSError, AttributeError):  # pragma: no cover - no C library symbols
        return lambda: None
    return lambda: libc.fesetenv(env)


# ----------------------------------------------------------------------------- per-program caches
#
# Compiled kernels, launch plans and everything derived from them belong to one Taichi
# program: after ``tiarray.init``, or a user's own ``ti.reset()``/``ti.init()``, they are
# invalid (their compiled code and launch contexts belong to the old program). Every such
# cache registers here how to clear itself; the registry compares the running program
# with the one its caches were filled under, and clears them all when it changed. Hot
# paths check with one identity comparison, ``program() is not CACHES.prog``, and call
# ``sync_caches()`` (or ``ensure_init()``) when it fails; then every registered cache is current.

program = _backend.program  # the running program (None before init): cheap


class _Registry:
    """The per-program cache registry: ``prog`` the program the caches hold entries of
    (a sentinel while no program runs, so that the hot-path check fails then),
    ``epoch`` a counter bumped at every change, ``clears`` the registered hooks."""

    __slots__ = ("prog", "epoch", "clears", "cpu_setups")

    def __init__(self):
        self.prog = _NO_PROGRAM
        self.epoch = 0
        self.clears = []  # callables, or weak methods (weakref.WeakMethod)
        self.cpu_setups = []  # callables(prog, n_threads): once per CPU program


_NO_PROGRAM = object()
CACHES = _Registry()


def register_cache(clear) -> None:
    """Call ``clear()`` whenever the running program changes. A bound method is held weakly
    (the cache of a Launcher or Operator dies with it); anything else strongly."""
    if hasattr(clear, "__self__") and hasattr(clear, "__func__"):
        clear = weakref.WeakMethod(clear)
    with _lock:
        CACHES.clears.append(clear)


def register_cpu_setup(setup) -> None:
    """Call ``setup(prog, n_threads)`` the first time tiarray uses each CPU program (the
    worker threads' preparation, ``_threads``)."""
    with _lock:
        CACHES.cpu_setups.append(setup)


def sync_caches():
    """Bring the registry to the running program (clearing every registered cache if it
    changed); returns the program (None if none runs)."""
    with _lock:
        prog = program()
        if prog is CACHES.prog or (prog is None and CACHES.prog is _NO_PROGRAM):
            return prog
        keep = []
        for c in CACHES.clears:
            f = c() if isinstance(c, weakref.WeakMethod) else c
            if f is None:
                continue  # its owner died
            f()
            keep.append(c)
        CACHES.clears[:] = keep
        _DEVICE[0] = None
        CACHES.prog = _NO_PROGRAM if prog is None else prog
        CACHES.epoch += 1
        return prog


def ensure_init():
    """The running Taichi program, starting Taichi with the defaults if needed (and the
    registry brought to it)."""
    prog = program()
    if prog is not CACHES.prog:
        if prog is None:
            with _lock:
                if program() is None:
                    init()
                    _warn_if_not_main_thread()
        prog = sync_caches()
    return prog


def _warn_if_not_main_thread():
    """Say so when tiarray's implicit start of Taichi ran off the main thread: Taichi's LLVM
    context records the thread it was created on, and from then on ``ti.field`` (a new
    SNode tree) fails its assertion ``main_thread_id_`` on every other thread -- the main
    thread included, far from the cause. Kernels and TiArrays work on any thread, so
    this is a warning, not an error (a worker-only program is fine)."""
    here = threading.current_thread()
    if here is threading.main_thread():
        return
    import warnings

    warnings.warn(
        f"tiarray started Taichi on the thread {here.name!r}, not on the main thread (its first "
        "use in this process ran there): Taichi now creates ti.fields only on that thread "
        "(elsewhere its check `main_thread_id_` fails). Call tiarray.init() (or ti.init()) on "
        "the main thread before using tiarray from other threads.",
        RuntimeWarning,
        stacklevel=4,
    )


def arch_name() -> str:
    """Taichi's name of the running arch ('x64', 'arm64', 'cuda', ...)."""
    ensure_init()
    return _backend.arch_name()


_DEVICE: list = [None]  # the running program's device (cleared by sync)


def current_device() -> Device:
    """The device Taichi computes on (starting Taichi with the defaults if needed)."""
    if program() is CACHES.prog:
        dev = _DEVICE[0]
        if dev is not None:
            return dev
    prog = ensure_init()
    dev = _current_device_uncached()
    _DEVICE[0] = dev
    if dev.kind == "cpu":
        for setup in list(CACHES.cpu_setups):
            setup(prog, cpu_workers())
    return dev


def cpu_workers() -> int:
    """The workers Taichi's CPU pool runs a parallel loop on: it has one per logical CPU of
    the machine and uses at most ``cpu_max_num_threads`` of them (at least 1). The one CPU
    thread count of tiarray: the planners, the serial thresholds, the worker preparation
    and the sparse kernels' thread slots all use it."""
    return max(1, min(_backend.cpu_max_num_threads(), os.cpu_count() or 1))


def _current_device_uncached() -> Device:
    a = arch_name()
    kind = _SUPPORTED_ARCHS.get(a)
    if kind is None:
        raise RuntimeError(
            f"tiarray works with Taichi's CPU and CUDA backends; Taichi runs on '{a}'. "
            "Call ti.init(arch=ti.cpu) or ti.init(arch=ti.cuda) before using tiarray."
        )
    if kind == "cpu":
        return CPU
    return Device("cuda", _cuda_device_index())


def _cuda_device_index() -> int:
    # Taichi uses the device selected by CUDA_VISIBLE_DEVICES / its own default: ordinal 0
    # of the visible devices.
    return 0


def is_cpu() -> bool:
    return current_device().kind == "cpu"


def sync() -> None:
    """Wait until every Taichi kernel launched so far has finished (a no-op on the CPU)."""
    if is_initialized() and arch_name() == "cuda":
        _backend.sync()
