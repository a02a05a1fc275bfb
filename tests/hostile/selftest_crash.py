"""A child module for tests/core/test_hostile_input.py's check of the crash-isolating runner:
one test crashes the interpreter, one fails, the others pass."""

import ctypes

import pytest


def test_before():
    assert True


@pytest.mark.parametrize("k", [0, 1, 2])
def test_cases(k):
    if k == 1:
        ctypes.string_at(0)  # reads address 0: a segmentation fault
    assert k != 2, "k is two"


def test_after():
    assert True
