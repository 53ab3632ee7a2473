"""Running test commands contained: an optional bubblewrap jail, limits set before they start, and
supervision that kills everything they started.

What each layer does (measured; see docs/security.md), and where it lives:

- `jail`: the `bwrap` jail. New user, network, pid, ipc and uts namespaces, every capability dropped,
  the host file system read-only, a private size-capped /tmp and /dev/shm, only the run's scratch
  folder writable; the harness user's home and the folders in `Sandbox.hide` (taskset, results)
  replaced by empty ones. The jail's processes die with it. `choose_sandbox` falls back to `none`
  where bubblewrap cannot run.
- `limits`: rlimits on every process (CPU seconds, address space, file size, no core dumps), and the
  process count held by one of three mechanisms: a `pids` cgroup where the harness may create one (a
  hard limit: fork fails); else RLIMIT_NPROC for a user other than root; else (root) a watchdog that
  kills the whole sandbox once it holds more processes than allowed.
- `launch`: the limits, the cgroup, the parent-death signal and address-space randomisation off (so
  object addresses printed in test output are the same run to run) put in place before the command
  runs: by util-linux execs in front of it where they work, else in a fork of the harness.
- `supervision`: `run_contained` waits for exit, timeout or limit, then kills the process group,
  every descendant and the cgroup.
- `procs`: the /proc scans and signals the others share.
"""

from __future__ import annotations

from ctxbench.harness.sandbox.jail import SANDBOX_UID, Sandbox, bwrap_available, choose_sandbox, fallback_warning
from ctxbench.harness.sandbox.launch import die_with_parent
from ctxbench.harness.sandbox.limits import ResourceLimits, process_limit_mechanism, sweep_cgroups
from ctxbench.harness.sandbox.procs import owner_tag, proc_stat, process_start
from ctxbench.harness.sandbox.supervision import ProcessResult, run_contained

__all__ = ["ProcessResult", "ResourceLimits", "Sandbox", "run_contained", "bwrap_available", "choose_sandbox",
           "fallback_warning", "process_limit_mechanism", "sweep_cgroups", "owner_tag", "process_start",
           "proc_stat", "die_with_parent", "SANDBOX_UID"]
