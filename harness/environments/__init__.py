"""Where a run's tools act and its tests run: the `Environment` interface, the registry that chooses
one by a taskset's `environment.backend` (`local`, `docker`, or one a package registers), the
workspace each prepares for a run, and evaluation in a fresh copy."""

from __future__ import annotations

from ctxbench.harness.environments.baseline import base_evaluation
from ctxbench.harness.environments.interface import Environment, RunContainer
from ctxbench.harness.environments.preflight import preflight_taskset
from ctxbench.harness.environments.registry import (ENTRY_POINT_GROUP, check_setting, environment_for,
                                                    get_environment, installed_environments)
from ctxbench.harness.environments.workspace import Workspace

__all__ = ["Environment", "RunContainer", "Workspace", "ENTRY_POINT_GROUP", "environment_for", "get_environment",
           "installed_environments", "check_setting", "preflight_taskset", "base_evaluation"]
