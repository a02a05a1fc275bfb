"""Constants of the array API standard (``e``, ``inf``, ``nan``, ``newaxis``, ``pi``)."""

import math

e = math.e
inf = math.inf
nan = math.nan
newaxis = None
pi = math.pi

__all__ = ["e", "inf", "nan", "newaxis", "pi"]
