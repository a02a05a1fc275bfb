"""The distribution ships every package of the tree, with operators/ as tiarray.operators."""

import pathlib

import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _package_dirs():
    for top, prefix in (("tiarray", "tiarray"), ("operators", "tiarray.operators")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            yield prefix if str(rel) == "." else prefix + "." + ".".join(rel.parts)


def test_every_package_is_listed_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(cfg["tool"]["setuptools"]["packages"])
    assert set(_package_dirs()) == listed


def test_operators_import_as_a_subpackage():
    import tiarray.operators

    assert tiarray.operators.__name__ == "tiarray.operators"


def test_the_native_handlers_source_is_installed():
    # compiled at first use beside the module that builds it (operators/_adapters/_native.py):
    # the distribution must carry it as package data
    import os

    from tiarray.operators._adapters import _native

    assert os.path.isfile(_native.SOURCE), _native.SOURCE
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert cfg["tool"]["setuptools"]["package-data"]["tiarray.operators._adapters"] == ["_ffi_cpu.cpp"]


def test_the_dlpack_callbacks_source_is_installed():
    # compiled at the first export (tiarray/_dlpack.py): package data of tiarray
    import os

    from tiarray import _dlpack

    assert os.path.isfile(_dlpack.RELEASE_SOURCE), _dlpack.RELEASE_SOURCE
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert cfg["tool"]["setuptools"]["package-data"]["tiarray"] == ["_dlpack_release.cpp"]


def test_sparse_operators_load_on_first_use_and_stay_bound(tmp_path):
    # tiarray.operators imports its sparse kernels on the first access to one of their
    # names, then binds every name it handed out (no module __getattr__ on later calls)
    import subprocess
    import sys

    code = (
        "import sys, tiarray.operators as o\n"
        "assert 'tiarray.operators.sparse' not in sys.modules\n"
        "f = o.event_csrmv\n"
        "import tiarray.operators.sparse as s\n"
        "assert f is s.event_csrmv and vars(o)['event_csrmv'] is f and o.event_csrmv is f\n"
        "assert o.CSRBlocks is __import__('tiarray.operators.distributed', fromlist=['x']).CSRBlocks\n"
        "assert 'event_fcnmv' in dir(o) and 'event_fcnmv' not in vars(o)\n"
        "try:\n    o.no_such_operator\nexcept AttributeError as e:\n    assert 'no_such_operator' in str(e)\n"
        "else:\n    raise SystemExit('no AttributeError')\n"
        "print('ok')\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
