"""Operators on 4 JAX devices (virtual CPU devices, in child processes).

The tests live in ``tests/multidevice/``: ``jax_sharding.py`` (``shard_map``, ``jit``
with sharded inputs and ``Operator(partition=...)``, gradients, the compiled HLO) and
``split_csr.py`` (``tiarray.operators.distributed``: CSR products with the matrix split by
rows or columns). JAX takes its device count from ``XLA_FLAGS`` when it is first imported,
so each module runs in a child pytest process, started once; each test here reports one
test function of a child.
"""

import pytest
from _subprocess_suite import TESTS, check, child_tests, run

pytestmark = pytest.mark.cpu_only("virtual CPU devices (JAX_PLATFORMS=cpu in the children)")

MODULES = ("jax_sharding", "split_csr")
ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
CASES = [(m, name) for m in MODULES for name in child_tests(TESTS / "multidevice" / f"{m}.py")]


@pytest.fixture(scope="module")
def children(jax, tmp_path_factory):
    results = {}

    def get(module):
        if module not in results:
            path = TESTS / "multidevice" / f"{module}.py"
            results[module] = run(path, tmp_path_factory.mktemp(module), env=ENV, timeout=900)
        return results[module]

    return get


@pytest.mark.parametrize("module, name", CASES, ids=[f"{m}::{n}" for m, n in CASES])
def test_on_four_devices(children, module, name):
    check(*children(module), name)
