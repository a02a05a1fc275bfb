"""Operators on 4 JAX devices (virtual CPU devices, in a child process).

The tests live in ``tests/multidevice/jax_sharding.py``: ``shard_map``, ``jit`` with
sharded inputs and ``Operator(partition=...)``, gradients, the compiled HLO. JAX takes
its device count from ``XLA_FLAGS`` when it is first imported, so they run in a child
pytest process started once; each test here reports one test function of the child.
"""

import pytest
from _subprocess_suite import TESTS, check, child_tests, run

MODULE = TESTS / "multidevice" / "jax_sharding.py"
ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}


@pytest.fixture(scope="module")
def child(jax, tmp_path_factory):
    return run(MODULE, tmp_path_factory.mktemp("multidevice"), env=ENV, timeout=900)


@pytest.mark.parametrize("name", child_tests(MODULE))
def test_on_four_devices(child, name):
    check(*child, name)
