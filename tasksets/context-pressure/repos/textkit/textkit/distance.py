"""String distances and similarities.

Edit distances (:func:`levenshtein`, :func:`damerau_levenshtein`,
:func:`hamming`) return integers: the number of edits.  Similarities
(:func:`jaro`, :func:`jaro_winkler`, :func:`similarity`) return floats in
``[0, 1]`` where 1 means identical.
"""

from __future__ import annotations

from typing import Callable, Iterable

__all__ = [
    "closest",
    "damerau_levenshtein",
    "hamming",
    "jaro",
    "jaro_winkler",
    "levenshtein",
    "similarity",
]


def levenshtein(a: str, b: str, *, substitution_cost: int = 1) -> int:
    """Minimum number of insertions, deletions and substitutions from *a* to *b*.

    >>> levenshtein("kitten", "sitting")
    3
    """
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else substitution_cost
            current.append(min(
                previous[j] + 1,         # deletion
                current[j - 1] + 1,      # insertion
                previous[j - 1] + cost,  # substitution
            ))
        previous = current
    return previous[-1]


def damerau_levenshtein(a: str, b: str) -> int:
    """Levenshtein distance that also counts adjacent transpositions as one edit.

    This is the *optimal string alignment* variant: no substring is edited
    more than once, so ``damerau_levenshtein("CA", "ABC") == 3``.
    """
    rows, cols = len(a) + 1, len(b) + 1
    d = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        d[i][0] = i
    for j in range(cols):
        d[0][j] = j
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def hamming(a: str, b: str) -> int:
    """Number of positions at which equal-length *a* and *b* differ."""
    if len(a) != len(b):
        raise ValueError(f"hamming distance needs equal lengths, got {len(a)} and {len(b)}")
    return sum(ca != cb for ca, cb in zip(a, b))


def jaro(a: str, b: str) -> float:
    """Jaro similarity of *a* and *b*.

    Two characters match when they are equal and no further apart than
    ``max(len(a), len(b)) // 2 - 1`` positions; *t* is half the number of
    matched characters that appear in a different order.

    >>> round(jaro("MARTHA", "MARHTA"), 4)
    0.9444
    """
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    window = max(0, max(len(a), len(b)) // 2 - 1)
    a_matched = [False] * len(a)
    b_matched = [False] * len(b)
    matches = 0
    for i, ca in enumerate(a):
        lo, hi = max(0, i - window), min(len(b), i + window + 1)
        for j in range(lo, hi):
            if not b_matched[j] and b[j] == ca:
                a_matched[i] = b_matched[j] = True
                matches += 1
                break
    if not matches:
        return 0.0
    a_seq = [ca for ca, m in zip(a, a_matched) if m]
    b_seq = [cb for cb, m in zip(b, b_matched) if m]
    transpositions = sum(x != y for x, y in zip(a_seq, b_seq)) / 2
    return (
        matches / len(a)
        + matches / len(b)
        + (matches - transpositions) / matches
    ) / 3


def jaro_winkler(
    a: str, b: str, *, prefix_scale: float = 0.1, max_prefix: int = 4
) -> float:
    """Jaro-Winkler similarity: Jaro boosted for a common prefix.

    The boost is ``l * prefix_scale * (1 - jaro)`` where *l* is the length
    of the common prefix, counted up to *max_prefix* characters (4 in
    Winkler's definition).  *prefix_scale* must not exceed
    ``1 / max_prefix`` or scores could go above 1.

    >>> round(jaro_winkler("MARTHA", "MARHTA"), 4)
    0.9611
    """
    if prefix_scale * max_prefix > 1:
        raise ValueError("prefix_scale * max_prefix must not exceed 1")
    sim = jaro(a, b)
    prefix = 0
    for ca, cb in zip(a, b):
        if ca != cb or prefix > max_prefix:
            break
        prefix += 1
    return sim + prefix * prefix_scale * (1 - sim)


def similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity: ``1 - distance / max(len)``."""
    if not a and not b:
        return 1.0
    return 1 - levenshtein(a, b) / max(len(a), len(b))


def closest(
    word: str,
    candidates: Iterable[str],
    *,
    scorer: Callable[[str, str], float] = jaro_winkler,
    cutoff: float = 0.0,
) -> str | None:
    """Return the candidate most similar to *word*, or None below *cutoff*.

    Ties go to the candidate that comes first.
    """
    best, best_score = None, cutoff
    for candidate in candidates:
        score = scorer(word, candidate)
        if best is None and score >= cutoff or score > best_score:
            best, best_score = candidate, score
    return best
