"""The Zipf law the sysbench wrapper (probe_api/sysbench_lua/zipfian.lua) is checked
against: the law itself, and the exact rank probabilities of the generator it uses."""

from __future__ import annotations

import math


# -- the expected Zipf law (for checking the wrapper's shape) -------------------------------
def zeta(n: int, theta: float) -> float:
    return math.fsum(float(i) ** -theta for i in range(1, n + 1))


def zipf_probabilities(n: int, theta: float, top: int) -> list[float]:
    """P(rank k) = k^-theta / zeta(n, theta) for k = 1..top: the Zipf law itself."""
    z = zeta(n, theta)
    return [k**-theta / z for k in range(1, min(top, n) + 1)]


def gray_probabilities(n: int, theta: float, top: int) -> list[float]:
    """The exact rank probabilities of Gray et al.'s generator (what the wrapper draws):
    ranks 1 and 2 follow the Zipf law exactly, ranks from 3 on come from the closed-form
    inverse, which over-weights ranks 3-5 by up to ~15 % at theta 0.8."""
    zetan = zeta(n, theta)
    eta = (1 - (2 / n) ** (1 - theta)) / (1 - (1 + 2**-theta) / zetan)
    alpha = 1 / (1 - theta)
    low = (1 + 0.5**theta) / zetan

    def u_below(value: int) -> float:  # the u under which the inverse yields < value
        return float(((value / n) ** (1 / alpha) - 1 + eta) / eta)

    probs = [1 / zetan, 0.5**theta / zetan]
    for value in range(2, min(top, n)):
        probs.append(max(0.0, min(1.0, u_below(value + 1)) - max(low, u_below(value))))
    return probs[:top]
