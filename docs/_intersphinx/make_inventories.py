"""Write small Sphinx inventories for the projects the docs link to.

The docs build offline (CI has no network), so intersphinx cannot download
``objects.inv`` files. This script writes, for each project, an inventory of the names
tiarray's docs reference, pointing at the projects' real documentation URLs. Run it
after adding a cross-reference to a new external name:

    python docs/_intersphinx/make_inventories.py
"""

import pathlib
import zlib

HERE = pathlib.Path(__file__).parent

# project -> (version, {name: (domain:role, relative uri)})
INVENTORIES = {
    "python": (
        "3",
        {
            "int": ("py:class", "library/functions.html#int"),
            "float": ("py:class", "library/functions.html#float"),
            "bool": ("py:class", "library/functions.html#bool"),
            "complex": ("py:class", "library/functions.html#complex"),
            "str": ("py:class", "library/stdtypes.html#str"),
            "tuple": ("py:class", "library/stdtypes.html#tuple"),
            "list": ("py:class", "library/stdtypes.html#list"),
            "dict": ("py:class", "library/stdtypes.html#dict"),
            "object": ("py:class", "library/functions.html#object"),
            "callable": ("py:function", "library/functions.html#callable"),
            "TypeError": ("py:exception", "library/exceptions.html#TypeError"),
            "ValueError": ("py:exception", "library/exceptions.html#ValueError"),
            "IndexError": ("py:exception", "library/exceptions.html#IndexError"),
            "BufferError": ("py:exception", "library/exceptions.html#BufferError"),
            "RuntimeError": ("py:exception", "library/exceptions.html#RuntimeError"),
            "NotImplementedError": ("py:exception", "library/exceptions.html#NotImplementedError"),
            "None": ("py:data", "library/constants.html#None"),
            "typing.NamedTuple": ("py:class", "library/typing.html#typing.NamedTuple"),
        },
    ),
    "numpy": (
        "2",
        {
            "numpy.ndarray": ("py:class", "reference/generated/numpy.ndarray.html"),
            "numpy.dtype": ("py:class", "reference/generated/numpy.dtype.html"),
            "numpy.asarray": ("py:function", "reference/generated/numpy.asarray.html"),
            "numpy.from_dlpack": ("py:function", "reference/generated/numpy.from_dlpack.html"),
            "numpy.linalg": ("py:module", "reference/routines.linalg.html"),
            "numpy.fft": ("py:module", "reference/routines.fft.html"),
        },
    ),
    "torch": (
        "2",
        {
            "torch.Tensor": ("py:class", "tensors.html#torch.Tensor"),
            "torch.from_dlpack": ("py:function", "generated/torch.from_dlpack.html"),
            "torch.compile": ("py:function", "generated/torch.compile.html"),
            "torch.library.custom_op": ("py:function", "library.html#torch.library.custom_op"),
            "torch.autograd.gradcheck": ("py:function", "generated/torch.autograd.gradcheck.gradcheck.html"),
            "torch.nn.Module": ("py:class", "generated/torch.nn.Module.html"),
        },
    ),
    "jax": (
        "0",
        {
            "jax.Array": ("py:class", "_autosummary/jax.Array.html"),
            "jax.jit": ("py:function", "_autosummary/jax.jit.html"),
            "jax.vmap": ("py:function", "_autosummary/jax.vmap.html"),
            "jax.grad": ("py:function", "_autosummary/jax.grad.html"),
            "jax.dlpack.from_dlpack": ("py:function", "_autosummary/jax.dlpack.from_dlpack.html"),
            "jax.lax.scan": ("py:function", "_autosummary/jax.lax.scan.html"),
            "jax.shard_map": ("py:function", "_autosummary/jax.shard_map.html"),
        },
    ),
    "taichi": (
        "1.7",
        {
            "taichi.kernel": ("py:function", "api/taichi.html#taichi.kernel"),
            "taichi.init": ("py:function", "api/taichi.html#taichi.init"),
            "taichi.ndarray": ("py:function", "api/taichi.html#taichi.ndarray"),
            "taichi.types.ndarray": ("py:function", "api/taichi.types.html#taichi.types.ndarray"),
            "taichi.template": ("py:class", "api/taichi.html#taichi.template"),
        },
    ),
}


def write(project: str, version: str, entries: dict) -> None:
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, (role, uri) in sorted(entries.items()))
    (HERE / f"{project}.inv").write_bytes(header + zlib.compress(body.encode()))


if __name__ == "__main__":
    for project, (version, entries) in INVENTORIES.items():
        write(project, version, entries)
        print(f"wrote {project}.inv ({len(entries)} names)")
