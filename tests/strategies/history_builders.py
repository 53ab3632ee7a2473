"""The strategy tests' builders live in the package (`ctxbench.strategies.testing`), shipped for plugin authors."""

from ctxbench.strategies.testing import *  # noqa: F401,F403
from ctxbench.strategies.testing import __all__  # noqa: F401
