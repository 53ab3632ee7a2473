"""Safe arithmetic helpers.

These functions wrap the plain operators with the checks a caller usually
wants: a clear error instead of ``ZeroDivisionError``, rounding that matches
what people learn at school, and percentages that handle a zero baseline.
"""

from decimal import ROUND_HALF_UP, Decimal

from calc.errors import CalcError


def divide(numerator, denominator, default=None):
    """Return ``numerator / denominator``.

    If ``denominator`` is zero, return ``default`` when one was given,
    otherwise raise :class:`CalcError`.
    """
    if denominator == 0:
        if default is not None:
            return default
        raise CalcError(f"cannot divide {numerator!r} by zero")
    return numerator / denominator


def clamp(value, low, high):
    """Limit ``value`` to the closed interval ``[low, high]``."""
    if low > high:
        raise CalcError(f"empty interval: low={low!r} is greater than high={high!r}")
    return max(low, min(value, high))


def round_half_up(value, digits=0):
    """Round ``value`` to ``digits`` decimals, with halves rounded away from zero.

    Python's built-in :func:`round` uses banker's rounding and operates on the
    binary float, so ``round(2.675, 2)`` gives ``2.67``.  This helper goes
    through :class:`~decimal.Decimal` using the value's shortest repr, so
    ``round_half_up(2.675, 2)`` gives ``2.68``.
    """
    if digits < 0:
        raise CalcError("digits must be zero or positive")
    quantum = Decimal(1).scaleb(-digits)
    rounded = Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP)
    return float(rounded) if digits else int(rounded)


def percent_change(old, new):
    """Return the change from ``old`` to ``new`` as a percentage of ``old``.

    A negative baseline is measured by its magnitude, so going from -50 to -25
    is a +50% change.  A zero baseline raises :class:`CalcError`.
    """
    if old == 0:
        raise CalcError("percent change from a zero baseline is undefined")
    return (new - old) / abs(old) * 100
