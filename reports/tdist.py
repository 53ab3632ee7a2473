"""Student's t distribution without scipy: its CDF from the regularized incomplete beta and its quantile."""

from __future__ import annotations

import math

__all__ = ["t_cdf", "t_ppf"]


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (continued fraction, modified Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * f / a


def t_cdf(x: float, df: float) -> float:
    """Cumulative distribution function of Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"t_cdf: df must be > 0, got {df}")
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    if x * x < df:
        half = 0.5 * _betainc(0.5, df / 2, x * x / (df + x * x))
        return 0.5 + half if x > 0 else 0.5 - half
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + x * x))
    return 1.0 - tail if x > 0 else tail


def t_ppf(q: float, df: float) -> float:
    """Quantile function of Student's t (bisection on t_cdf)."""
    if not 0 < q < 1:
        raise ValueError(f"t_ppf: q must be in (0, 1), got {q}")
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > q:
        lo *= 2
    while t_cdf(hi, df) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < q else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return (lo + hi) / 2
