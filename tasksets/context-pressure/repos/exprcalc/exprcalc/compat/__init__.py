"""Compatibility layers for formulas saved by older exprcalc versions."""

from .v1_functions import V1_FUNCTIONS, registry_for

__all__ = ["V1_FUNCTIONS", "registry_for"]
