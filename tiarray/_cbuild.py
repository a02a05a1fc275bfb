"""tiarray's small native helpers: compiled with the machine's C++ compiler, cached on disk.

pip installs no compiled code. Two helpers are compiled the first time they are needed:
the XLA FFI handler (``operators/_adapters/_ffi_cpu.cpp``, when JAX first runs an Operator
on the CPU) and the DLPack release callbacks (``_dlpack_release.cpp``, at the first export).
Each build has a cache directory of its own (``$TIARRAY_CACHE_DIR``, else
``~/.cache/tiarray``) named by a hash of its source, compiler, flags and Python, where it is
built and checked once, whatever the number of processes asking at once (the first builds
under a file lock, the others wait and read its verdict). A failed build or check is
remembered too: its verdict says why, and the caller takes its pure-Python path.
``TIARRAY_NATIVE=0`` turns every helper off.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile

__all__ = ["off_by_env", "compiler", "cache_root", "tag", "build", "check", "prepared"]


def off_by_env() -> bool:
    """Whether ``TIARRAY_NATIVE`` turns the native helpers off (``0``, ``false``, ``no``, ``off``)."""
    return os.environ.get("TIARRAY_NATIVE", "").strip().lower() in ("0", "false", "no", "off")


def compiler():
    """The C++ compiler: ``$CXX`` where set (None if it is not found), else the first of
    ``c++``, ``g++``, ``clang++`` on the PATH."""
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx)
    for c in ("c++", "g++", "clang++"):
        path = shutil.which(c)
        if path:
            return path
    return None


def cache_root() -> str:
    root = os.environ.get("TIARRAY_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tiarray")
    return root


def tag(source: str, compiler: str, flags, *extra) -> str:
    """A hash of everything a build depends on: the source text, the compiler, the flags, this
    Python and platform, and ``extra`` (e.g. the Taichi version)."""
    h = hashlib.sha256()
    with open(source, "rb") as f:
        h.update(f.read())
    for part in (compiler, tuple(flags), sys.version, platform.machine(), platform.system(), *extra):
        h.update(repr(part).encode())
    return h.hexdigest()[:16]


def build(compiler: str, source: str, so: str, flags) -> str:
    """Compile ``source`` into the shared library ``so`` (written whole or not at all);
    RuntimeError with the compiler's message if it fails."""
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=os.path.dirname(so))
    os.close(fd)
    cmd = [compiler, *flags, "-o", tmp, source]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {(r.stderr or r.stdout).strip()[-600:]}")
        os.replace(tmp, so)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return so


def check(code: str, so: str, *args, timeout: float, env=None) -> str:
    """``"ok"``, or why the library ``so`` must not be used: ``code`` run by a fresh interpreter
    (``python -c code so *args``) must exit with status 0 within ``timeout`` seconds. It runs
    beside the library, not in the caller's directory, whose tiarray/ could shadow the package;
    a mismatch with an unusual Python or backend build then fails in that process, not the caller's."""
    try:
        r = subprocess.run(
            [sys.executable, "-c", code, so, *args],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=os.path.dirname(so),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"the check of {so} did not finish in {timeout:.0f} s"
    if r.returncode == 0:
        return "ok"
    out = (r.stdout + r.stderr).strip().splitlines()
    return f"the check of {so} failed (exit status {r.returncode}): " + (
        out[-1][:400] if out else "no output"
    )


def prepared(directory: str, name: str, make) -> tuple:
    """``(library path, verdict)`` of the build in ``directory``: ``make(so)`` builds and checks
    the library ``directory/name`` and returns ``"ok"`` or why it must not be used; it runs
    once per directory (under a file lock), and an exception from it is the verdict too."""
    import fcntl  # POSIX: callers only build on Linux and macOS

    os.makedirs(directory, exist_ok=True)
    so = os.path.join(directory, name)
    path = os.path.join(directory, "verdict")
    with open(os.path.join(directory, "lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if os.path.exists(path):
            with open(path) as f:
                return so, f.read().strip()
        try:
            verdict = make(so)
        except Exception as e:
            verdict = f"the build failed: {type(e).__name__}: {e}"
        fd, tmp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "w") as f:
            f.write(verdict + "\n")
        os.replace(tmp, path)
    return so, verdict
