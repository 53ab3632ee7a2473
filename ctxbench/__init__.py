"""ctxbench: controlled experiments on the context strategies of coding agents.

The top-level folders of the checkout (`harness/`, `strategies/`, `reports/`, `tasksets/`,
`experiments/`) are this package's subpackages; `ctxbench/` holds relative links to them so that
type checkers and IDEs resolve `ctxbench.*` from a checkout as they do from the installed wheel.
"""

from ctxbench.harness.version import __version__

__all__ = ["__version__"]
