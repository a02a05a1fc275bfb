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
import xml.etree.ElementTree as ET
from pathlib import Path

TESTS = Path(__file__).resolve().parent


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
        proc = subprocess.run(
            cmd, env=full_env, capture_output=True, text=True, timeout=timeout, cwd=str(TESTS.parent)
        )
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


def check(results, log, name) -> None:
    """Assert that every case of the child's test function ``name`` ran and passed."""
    cases = results.get(name)
    assert cases, f"{name} did not run in the child process; its output:\n{log[-6000:]}"
    bad = [(c, o, t) for c, o, t in cases if o != "passed"]
    assert not bad, "\n\n".join(f"{c}: {o}\n{t[-4000:]}" for c, o, t in bad)
