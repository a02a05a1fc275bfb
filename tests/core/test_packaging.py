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
