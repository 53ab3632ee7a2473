"""Deprecated APIs kept for backwards compatibility.

Everything in this package emits :class:`DeprecationWarning` and will be
removed in textkit 3.0.  New code should use :mod:`textkit.tokenize`.
"""
