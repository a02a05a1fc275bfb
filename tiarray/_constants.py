"""Constants of the array API standard (``e``, ``inf``, ``nan``, ``newaxis``, ``pi``)."""

import math

#: Euler's constant, the base of natural logarithms (a Python float).
e = math.e
#: Positive infinity (a Python float).
inf = math.inf
#: Not a Number (a Python float).
nan = math.nan
#: ``None``: an index that inserts an axis of length one (``x[:, newaxis]``).
newaxis = None
#: The ratio of a circle's circumference to its diameter (a Python float).
pi = math.pi

__all__ = ["e", "inf", "nan", "newaxis", "pi"]
