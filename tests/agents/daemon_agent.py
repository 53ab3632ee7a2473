"""A small external agent that leaves a daemon behind, as Cline leaves its hub: a stand-in for tests.

    python daemon_agent.py MARKER

It starts a daemon (double fork, a session of its own, standard streams on /dev/null) that sleeps
with MARKER in its command line, waits until /proc shows it, and exits 1 saying so (so that the run
keeps the line), leaving the daemon running.
"""

from __future__ import annotations

import os
import sys
import time


def start_daemon(marker: str) -> None:
    """Fork a process that leaves this one's session and group and outlives it."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
        os._exit(0)
    os.wait()


def running(marker: str) -> list[int]:
    """The pids whose command line holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if marker.encode() in fh.read().split(b"\0"):
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def main() -> int:
    marker = sys.argv[1]
    start_daemon(marker)
    for _ in range(200):
        if running(marker):
            print(f"daemon running: {marker}", flush=True)
            return 1
        time.sleep(0.01)
    print("the daemon did not start", flush=True)
    return 2


if __name__ == "__main__":
    sys.exit(main())
