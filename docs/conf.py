"""Sphinx configuration for tiarray's documentation (builds offline)."""

import os
import sys

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")
sys.path.insert(0, os.path.abspath("."))

import _make_api  # noqa: E402

import tiarray  # noqa: E402

_make_api.main()  # docs/api.rst: one page per public name, regenerated at every build

project = "tiarray"
author = "the tiarray developers"
copyright = "2026, the tiarray developers"
release = tiarray.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_parser",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "_intersphinx"]
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True
napoleon_preprocess_types = True
napoleon_type_aliases = {
    "array": "tiarray.TiArray",
    "TiArray": "tiarray.TiArray",
    "DType": "tiarray.DType",
    "Device": "tiarray.Device",
}
nitpicky = False

# Offline intersphinx: small inventories of the names we link, with the real URLs
# (see _intersphinx/make_inventories.py).
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", "_intersphinx/python.inv"),
    "numpy": ("https://numpy.org/doc/stable/", "_intersphinx/numpy.inv"),
    "torch": ("https://pytorch.org/docs/stable/", "_intersphinx/torch.inv"),
    "jax": ("https://docs.jax.dev/en/latest/", "_intersphinx/jax.inv"),
    "taichi": ("https://docs.taichi-lang.org/", "_intersphinx/taichi.inv"),
}
intersphinx_timeout = 1

doctest_global_setup = """
import numpy as np
import tiarray as ta
"""

html_theme = "pydata_sphinx_theme"
html_title = "tiarray"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "github_url": "https://github.com/tiarray/tiarray",
}
