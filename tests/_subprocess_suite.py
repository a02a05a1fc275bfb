"""Run a test module in a child pytest process and report its tests one by one.

Some tests need a process of their own: JAX reads ``XLA_FLAGS`` (virtual CPU devices)
once, when it is first imported, and the test session has imported JAX long before.
The parent module parametrises one test per test function of the child module (read
from its source), runs the child once per session (bounded by a timeout), and each
parent test passes only if every case of its child function ran and passed; a failure
shows the child's report for that function.
"""

import ast
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Children run outside the checkout: ``python -m`` puts the working directory first on
# sys.path, where ./tiarray (without its operators/) would shadow the installed package.
_CWD = tempfile.gettempdir()


def child_tests(module: Path) -> list:
    """The ``test_*`` functions defined at the top of ``module``."""
    tree = ast.parse(module.read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def run(module: Path, tmp_dir: Path, *, env=None, timeout=900) -> tuple:
    """Run ``module`` with pytest in a child process; returns ``({function: [(case, outcome,
    text)]}, log)``."""
    xml = tmp_dir / f"{module.stem}.xml"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(module),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={xml}",
        f"--rootdir={TESTS.parent}",
    ]
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout, cwd=_CWD)
        log = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return {}, f"child pytest timed out after {timeout} s\n{out[-5000:]}"
    results: dict = {}
    if xml.exists():
        for case in ET.parse(xml).getroot().iter("testcase"):
            name = case.get("name", "")
            func = name.split("[", 1)[0]
            outcome, text = "passed", ""
            for tag in ("failure", "error", "skipped"):
                el = case.find(tag)
                if el is not None:
                    outcome = tag
                    text = (el.get("message") or "") + "\n" + (el.text or "")
                    break
            results.setdefault(func, []).append((name, outcome, text))
    return results, log


def run_isolated(module: Path, tmp_dir: Path, *, env=None, timeout=900, max_crashes=50) -> tuple:
    """Run ``module``'s tests in child pytest processes so that a crash is one failed test.

    A child that dies (a segmentation fault, an abort) takes only the test it was running
    with it: that test is reported as ``crashed`` with the child's output, and a new child
    runs the tests not run yet (the ``_crash_log`` plugin records each test's start and
    end, and deselects what already ran). Returns ``({function: [(case, outcome, text)]},
    log)`` as :func:`run`.
    """
    import time

    log_path, skip_path = tmp_dir / "crash.log", tmp_dir / "crash.skip"
    results: dict = {}
    done: list = []
    logs = []
    deadline = time.monotonic() + timeout
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = os.pathsep.join([str(TESTS), full_env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    full_env.update(TIARRAY_CRASH_LOG=str(log_path), TIARRAY_CRASH_SKIP=str(skip_path))
    for _child in range(max_crashes + 1):
        skip_path.write_text("\n".join(done))
        log_path.write_text("")
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            str(module),
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "_crash_log",
        ]
        cmd += [f"--rootdir={TESTS.parent}"]
        left = deadline - time.monotonic()
        if left <= 0:
            logs.append(f"timed out after {timeout} s")
            break
        try:
            proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=left, cwd=_CWD)
            out, code = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            out, code = out + f"\nchild pytest timed out after {timeout} s", "timeout"
        logs.append(out[-6000:])
        started = None
        for line in log_path.read_text().splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "START":
                started = rest
            elif kind == "END":
                nodeid, outcome, text = (rest.split(" ", 2) + ["", ""])[:3]
                name = nodeid.rsplit("::", 1)[-1]
                results.setdefault(name.split("[", 1)[0], []).append(
                    (name, outcome, text.replace("\\n", "\n"))
                )
                done.append(nodeid)
                started = None
        if started is None:  # the child finished (passed or failed) every test it ran
            break
        name = started.rsplit("::", 1)[-1]
        why = f"the child process died in this test (exit {code}); its output:\n{out[-4000:]}"
        results.setdefault(name.split("[", 1)[0], []).append((name, "crashed", why))
        done.append(started)
        if code == "timeout":
            break
    return results, "\n--- next child ---\n".join(logs)


def check(results, log, name) -> None:
    """Assert that every case of the child's test function ``name`` ran and passed."""
    cases = results.get(name)
    assert cases, f"{name} did not run in the child process; its output:\n{log[-6000:]}"
    bad = [(c, o, t) for c, o, t in cases if o != "passed"]
    assert not bad, "\n\n".join(f"{c}: {o}\n{t[-4000:]}" for c, o, t in bad)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_processes(argvs, *, env=None, timeout=300) -> list:
    """Start one process per argv list, all at once, and wait for all of them.

    Every process is killed when the whole group exceeds ``timeout`` seconds (then this
    raises ``AssertionError`` with their output) or when one of them fails (the others
    would wait for it forever in a collective). Returns the output of each process.
    """
    import time

    full_env = dict(os.environ)
    full_env.update(env or {})
    logs = [tempfile.TemporaryFile(mode="w+") for _ in argvs]
    procs = [
        subprocess.Popen([sys.executable, *a], env=full_env, stdout=f, stderr=subprocess.STDOUT, cwd=_CWD)
        for a, f in zip(argvs, logs)
    ]
    deadline = time.monotonic() + timeout
    failed = timed_out = False
    try:
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                timed_out = True
                break
            if any(p.poll() not in (None, 0) for p in procs):
                failed = True
                break
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    outs = []
    for f in logs:
        f.seek(0)
        outs.append(f.read())
        f.close()
    report = "\n".join(
        f"--- process {i} (exit {p.returncode}):\n{o[-4000:]}" for i, (p, o) in enumerate(zip(procs, outs))
    )
    assert not timed_out, f"the processes did not finish within {timeout} s\n{report}"
    assert not failed and all(p.returncode == 0 for p in procs), f"a process failed\n{report}"
    return outs
