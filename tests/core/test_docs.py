"""The documentation's code runs, and every public name has an API page.

Each Markdown page's ```python blocks are executed in order in one namespace (a page is
a tutorial). Pages whose code imports torch, jax, cupy or quadrants carry those markers, so each nox
session runs the pages it can. The markers come from the code's import statements, not
from words: a framework named in a comment or a string must not move a page out of the
sessions that can run it.
"""

import ast
import pathlib
import re
import runpy

import pytest

import tiarray
from tiarray._runtime import _save_fp_env

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def imported_frameworks(code: str) -> set:
    """The frameworks (torch, jax, cupy, quadrants) that ``code`` imports, at any depth of the code."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(n.split(".")[0] for n in names)
    return found & FRAMEWORKS


FRAMEWORKS = {"torch", "jax", "cupy", "quadrants"}


def _pages():
    for page in sorted(DOCS.glob("*.md")):
        code = BLOCK.findall(page.read_text())
        if not code:
            continue
        fws = imported_frameworks("\n".join(code))
        marks = [getattr(pytest.mark, fw) for fw in sorted(fws)]
        yield pytest.param(page.name, code, marks=marks, id=page.stem)


def test_framework_markers_follow_imports_not_words():
    assert imported_frameworks("import numpy as np  # torch | jax | cupy work too\nx = 'cupy'") == set()
    assert imported_frameworks("import jax.numpy as jnp\nfrom torch.utils import dlpack") == {"jax", "torch"}
    assert imported_frameworks("def f():\n    import cupy\n") == {"cupy"}


@pytest.mark.parametrize("name, blocks", list(_pages()))
def test_markdown_code_blocks_run(name, blocks, tmp_path, monkeypatch):
    # The page becomes one script file: Taichi reads kernel source from files.
    monkeypatch.chdir(tmp_path)
    script = tmp_path / f"docs_{pathlib.Path(name).stem}.py"
    code = "\n\n".join(f"# ---- code block {i}\n{src}" for i, src in enumerate(blocks))
    if tiarray.backend() == "quadrants":
        # the pages are written for taichi; quadrants keeps its names, so they run on it too
        code = code.replace("import taichi as ti", "import quadrants as ti")
    script.write_text(code)
    # a page is a user's program: its qd.init/ti.init turns on flush-to-zero in this thread
    # (Taichi's and quadrants' doing, NumPy flushes too), which must not reach the tests
    # that run after it in this process (test_span_kernels' ulp arithmetic gave NaN)
    restore_fp = _save_fp_env()
    try:
        runpy.run_path(str(script), run_name="__docs__")
    except Exception as e:  # pragma: no cover - the message is the point
        raise AssertionError(f"{name}: a code block failed: {type(e).__name__}: {e}\n(see {script})") from e
    finally:
        restore_fp()


def test_every_public_name_has_an_api_page():
    # docs/_make_api.py builds api.rst from __all__ and refuses names it cannot place
    import sys

    sys.path.insert(0, str(DOCS))
    try:
        import _make_api

        text = _make_api.render()
    finally:
        sys.path.remove(str(DOCS))
    for n in tiarray.__all__:
        obj = getattr(tiarray, n)
        if isinstance(obj, tiarray.DType) or type(obj).__name__ == "module":
            continue
        assert f"   {n}\n" in text or f"tiarray.{n}" in text, n
    for sub in (tiarray.linalg, tiarray.fft):
        for n in sub.__all__:
            assert f"   {n}\n" in text, f"{sub.__name__}.{n}"
