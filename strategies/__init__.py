"""Context strategies. Importing this package registers the built-in ones."""

if __name__ == "strategies":  # imported by its folder name, which would make a second copy of every class
    raise SystemExit("error: import ctxbench.strategies, not strategies: the folder strategies/ is the package ctxbench.strategies")

from ctxbench.strategies.registry import (
    ENTRY_POINT_GROUP,
    StrategyError,
    StrategyServices,
    arm_problems,
    available_strategies,
    create_strategy,
    get_strategy_class,
    param_problems,
    register_strategy,
    validate_params,
)
from ctxbench.strategies import (baseline, budget_planner, file_selector, observation_masking,  # noqa: F401,E402
                                 summarizer, trimmer)  # (registers)

__all__ = [
    "ENTRY_POINT_GROUP",
    "StrategyError",
    "StrategyServices",
    "arm_problems",
    "available_strategies",
    "create_strategy",
    "get_strategy_class",
    "param_problems",
    "register_strategy",
    "validate_params",
]
