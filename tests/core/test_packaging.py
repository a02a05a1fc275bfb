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
