"""Context strategies. Importing this package registers the built-in ones."""

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
