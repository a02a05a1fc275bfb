"""The layering of the package (docs/internals.md), checked on the installed modules' source:
no import cycle even counting imports inside functions, Taichi imported by the boundary
only, ``tiarray.operators`` using the core through ``tiarray._internal`` only, and the
heavy optional imports kept out of ``import tiarray``. (``nox -s lint`` checks the layer
order itself with import-linter.)"""

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest
import tiarray.operators
import tomllib

import tiarray

ROOTS = {
    "tiarray": pathlib.Path(tiarray.__file__).parent,
    "tiarray.operators": pathlib.Path(tiarray.operators.__file__).parent,
}


def _modules() -> dict:
    """``{module name: path}`` of every module of tiarray and tiarray.operators."""
    out = {}
    for pkg, root in ROOTS.items():
        for path in root.rglob("*.py"):
            rel = path.relative_to(root).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            if pkg == "tiarray" and parts[:1] == ["operators"]:
                continue  # an editable checkout may link operators/ under tiarray/
            out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: pathlib.Path):
    """``(imported module, line)`` of every import statement of a module, wherever it is
    (top level, functions, branches), relative imports resolved."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES]
            if len(subs) < len(node.names):  # names of the module itself
                yield mod, node.lineno
            for sub in subs:  # `from . import _x` imports the module _x
                yield sub, node.lineno


def _internal_edges() -> dict:
    edges = {m: set() for m in MODULES}
    for m, path in MODULES.items():
        for imp, _ in _imports(m, path):
            target = imp
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != m:
                edges[m].add(target)
    return edges


def _cycles(edges: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_module_list_is_complete():
    assert "tiarray._backend._taichi" in MODULES and "tiarray.operators.sparse._csr" in MODULES
    assert len(MODULES) > 60


def test_no_import_cycle_counting_function_local_imports():
    # the package root re-exports every layer and imports nothing back: leave it out, as
    # a cycle through it would be an import of the root by a module, which the next test forbids
    edges = _internal_edges()
    assert _cycles(edges) == []


def test_nothing_imports_the_package_root_or_goes_around_the_internal_api():
    bad = []
    core = [m for m in MODULES if not m.startswith("tiarray.operators")]
    for m, path in MODULES.items():
        for imp, line in _imports(m, path):
            if imp == "tiarray" and m != "tiarray":
                bad.append(f"{m}:{line} imports the package root")
            if (
                m.startswith("tiarray.operators")
                and imp in core
                and imp not in ("tiarray", "tiarray._internal")
            ):
                bad.append(f"{m}:{line} imports {imp} (operators use tiarray._internal)")
    assert bad == []


def test_only_the_backend_imports_taichi():
    bad = [
        f"{m}:{line} imports {imp}"
        for m, path in MODULES.items()
        if not m.startswith("tiarray._backend")
        for imp, line in _imports(m, path)
        if imp == "taichi" or imp.startswith("taichi.")
    ]
    assert bad == []


def _fresh(code: str, tmp_path) -> str:
    """Run ``code`` in a fresh interpreter (from a file: Taichi reads kernels' source)."""
    script = tmp_path / "script.py"
    script.write_text(code)
    env = {**os.environ, "ENABLE_TAICHI_HEADER_PRINT": "0", "TI_SKIP_VERSION_CHECK": "ON"}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_import_tiarray_stays_light(tmp_path):
    # ml_dtypes (bfloat16's NumPy dtype) is imported when bfloat16 is first used; where it
    # is not installed (the numpy-only session) the first use says what to install
    # (quadrants imports torch itself when torch is installed: what counts is what tiarray adds)
    out = _fresh(
        f"import sys, {tiarray.backend()}\n"
        "before = set(sys.modules)\n"
        "import tiarray as ta\n"
        "print(*(m in sys.modules and m not in before for m in ('ml_dtypes', 'torch', 'jax')))\n"
        "try:\n"
        "    print(ta.bfloat16.numpy.name, 'ml_dtypes' in sys.modules)\n"
        "except TypeError as e:\n"
        "    print('TypeError', e)\n",
        tmp_path,
    )
    first, second = out.splitlines()
    assert first == "False False False"
    if importlib.util.find_spec("ml_dtypes") is not None:
        assert second == "bfloat16 True"
    else:
        assert second.startswith("TypeError bfloat16 has no NumPy dtype: install ml_dtypes")


def test_an_eager_torch_operator_does_not_load_dynamo(torch, tmp_path):
    out = _fresh(
        "import sys, numpy as np, torch, tiarray as ta\n"
        "from tiarray._internal import ti\n"
        "@ti.kernel\n"
        "def k(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = x[i] + 1\n"
        "op = ta.Operator('t_nodynamo', kernel=k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))\n"
        "r = op(torch.zeros(3))\n"
        "print(r.tolist(), 'torch._dynamo' in sys.modules)\n",
        tmp_path,
    )
    assert out == "[1.0, 1.0, 1.0] False"


def test_an_operator_made_before_torch_is_compiled_on_its_first_call(torch, tmp_path):
    # the torch adapter was loaded on the first eager call only: a first call under
    # torch.compile(fullgraph=True) failed (dynamo does not trace the import)
    out = _fresh(
        "import sys, numpy as np, tiarray as ta\n"
        "from tiarray._internal import ti\n"
        "@ti.kernel\n"
        "def k(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = x[i] * 2\n"
        "op = ta.Operator('t_late_torch', kernel=k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))\n"
        "import torch\n"
        "print('torch._dynamo' in sys.modules)\n"
        "f = torch.compile(lambda x: op(x) + 1, fullgraph=True, backend='aot_eager')\n"
        "print(f(torch.arange(4.0)).tolist())\n",
        tmp_path,
    )
    assert out.splitlines() == ["False", "[1.0, 3.0, 5.0, 7.0]"]


def test_an_unknown_backend_is_a_clear_error():
    env = {**os.environ, "TIARRAY_BACKEND": "nope"}
    r = subprocess.run(
        [sys.executable, "-c", "import tiarray"], capture_output=True, text=True, env=env, timeout=600
    )
    assert r.returncode != 0
    assert (
        "TIARRAY_BACKEND is 'nope', which names no tiarray backend; available: quadrants, taichi" in r.stderr
    )


_QD_SMOKE = """
import sys

import pytest
import numpy as np
import tiarray as ta, tiarray.operators as top
from tiarray._internal import ti

@ti.kernel
def k(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
    for i in x:
        out[i] = x[i] * 2

op = ta.Operator("t_qd_backend", kernel=k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))
x = np.arange(6.0, dtype=np.float32)
assert np.array_equal(op(x), 2 * x)
assert float(ta.sum(ta.asarray(x) * 2)) == 30.0
m, n = 50, 40
ind, ptr = top.fixed_prob_csr(m, n, 0.1, 1)
dense = np.zeros((m, n), np.float32)
for i in range(m):
    dense[i, ind[ptr[i]:ptr[i + 1]]] += 1
s = np.arange(m) % 3 == 0
assert np.array_equal(top.event_csrmv(np.float32(1.0), ind, ptr, s, shape=(m, n), transpose=True), s @ dense)
w = np.ones(ind.shape[0], np.float32)
new = top.csr_update_on_pre(w, ind, ptr, s, np.full(n, 0.5, np.float32), shape=(m, n))
rows = np.repeat(np.arange(m), np.diff(ptr))
assert np.array_equal(new, np.where(s[rows], 1.5, 1.0).astype(np.float32))
print(ti.__name__, "taichi" in sys.modules)
"""


@pytest.mark.quadrants
def test_the_quadrants_backend_runs_without_taichi(tmp_path, monkeypatch):
    monkeypatch.setenv("TIARRAY_BACKEND", "quadrants")
    monkeypatch.setenv("ENABLE_QUADRANTS_HEADER_PRINT", "0")
    assert _fresh(_QD_SMOKE, tmp_path).split() == ["quadrants", "False"]


_HIDE_TAICHI = """
import importlib.abc, sys

class _NoTaichi(importlib.abc.MetaPathFinder):  # as if taichi were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "taichi":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoTaichi())
"""


@pytest.mark.quadrants
def test_without_taichi_the_default_backend_is_quadrants(tmp_path, monkeypatch):
    # Python 3.14 (no taichi wheel): pip installs quadrants alone and `import tiarray` works
    monkeypatch.delenv("TIARRAY_BACKEND", raising=False)
    monkeypatch.setenv("ENABLE_QUADRANTS_HEADER_PRINT", "0")
    out = _fresh(
        _HIDE_TAICHI + "import numpy as np, tiarray as ta\n"
        "print(ta.backend(), float(ta.sum(ta.asarray(np.arange(4.0)))), 'taichi' in sys.modules)\n",
        tmp_path,
    )
    assert out.split() == ["quadrants", "6.0", "False"]


def test_the_default_backend_is_taichi_where_it_is_installed(tmp_path, monkeypatch):
    # the quadrants sessions of nox uninstall taichi: there the default is quadrants
    monkeypatch.delenv("TIARRAY_BACKEND", raising=False)
    out = _fresh("import sys, tiarray as ta\nprint(ta.backend(), 'quadrants' in sys.modules)\n", tmp_path)
    if importlib.util.find_spec("taichi") is not None:
        assert out.split() == ["taichi", "False"]
    else:
        assert out.split() == ["quadrants", "True"]


def test_neither_backend_installed_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.delenv("TIARRAY_BACKEND", raising=False)
    script = tmp_path / "script.py"
    script.write_text(_HIDE_TAICHI.replace('== "taichi"', 'in ("taichi", "quadrants")') + "import tiarray\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode != 0
    assert "the taichi backend needs the package 'taichi'" in r.stderr
    assert "pip install taichi==1.7.4" in r.stderr


@pytest.mark.parametrize(
    "python, backend", [("3.10", "taichi"), ("3.11", "taichi"), ("3.13", "taichi"), ("3.14", "quadrants")]
)
def test_pip_installs_exactly_one_backend_on_every_python(python, backend):
    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    cfg = tomllib.loads((pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    env = {**default_environment(), "python_version": python, "python_full_version": python + ".0"}
    picked = [
        r.name
        for r in map(Requirement, cfg["project"]["dependencies"])
        if r.name in ("taichi", "quadrants") and (r.marker is None or r.marker.evaluate(env))
    ]
    assert picked == [backend]
