"""One buffer, four frameworks, no copies.

A NumPy array is viewed by tiarray, handed to PyTorch, then to JAX, and back to NumPy.
At each step the script prints the data address to show that all of them share the
same memory, then writes through one framework and reads the change in the others.

    python examples/interop_tour.py
"""

import argparse
import sys

import numpy as np

import tiarray as ta


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="accepted for CI symmetry; the tour is quick")
    parser.parse_args(argv)
    import jax
    import torch

    # One buffer owned by tiarray: 64-byte aligned, so JAX can share it too.
    t = ta.zeros((4, 3), dtype=ta.float32)
    a = np.asarray(t)  # NumPy view
    x = torch.from_dlpack(t)  # torch view (DLPack)
    j = jax.dlpack.from_dlpack(x)  # JAX view of the torch tensor (DLPack)
    back = ta.asarray(j)  # tiarray again (read-only: JAX arrays are immutable)

    rows = [
        ("tiarray (owner)", t.ptr),
        ("numpy  np.asarray(t)", a.__array_interface__["data"][0]),
        ("torch  torch.from_dlpack(t)", x.data_ptr()),
        ("jax    jax.dlpack.from_dlpack(x)", j.unsafe_buffer_pointer()),
        ("tiarray ta.asarray(j)", back.ptr),
    ]
    print(f"{'who sees the buffer':36s} address")
    for name, ptr in rows:
        print(f"{name:36s} {ptr:#x}")
    same = len({p for _, p in rows}) == 1
    print(f"one buffer, no copy: {same}")

    # Write through torch, read through NumPy and tiarray.
    x[1, :] = torch.tensor([1.0, 2.0, 3.0])
    print("after torch writes row 1, numpy sees:", a[1].tolist(), " tiarray sees:", back[1].tolist())
    print("the JAX view is read-only for tiarray:", back.readonly)

    # And the other way: NumPy memory to torch and JAX without a copy.
    n = np.arange(6, dtype=np.float32)
    tn = ta.asarray(n)
    print("numpy -> tiarray -> torch shares memory:", torch.from_dlpack(tn).data_ptr() == n.ctypes.data)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
