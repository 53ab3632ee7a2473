"""The `docker` an external agent gets in a docker-backed run: a stand-in that reaches only the run's
own container, through a Unix socket that ctxbench serves (ctxbench.harness.environments.docker_environment.serve_exec),
never the docker daemon.

Written into the agent's folder as `bin/docker` (first on its PATH, and the `{docker}` placeholder)
from its own source text, with the socket's path and the container's name filled in, so that it
needs nothing but the standard library. It takes the part of the docker CLI that an agent with a
docker environment of its own uses (mini-swe-agent's, for one):

- `docker run -d ... IMAGE ...` starts nothing: it prints the run's container's name, the container
  the agent's commands then run in;
- `docker exec [-i] [-t] [-w DIR] [-e KEY=VALUE] CONTAINER COMMAND...` runs COMMAND in the run's
  container (whatever CONTAINER it names), in DIR, with no standard input; its output and exit code
  are the command's;
- `docker stop`, `docker rm`, `docker kill` succeed and do nothing (ctxbench removes the container
  when the run ends);
- anything else is refused (exit 125).

Protocol on the socket: one JSON line `{"argv": [...], "workdir": DIR, "env": {...}}`, answered by
frames `o`/`e` + 4-byte length + bytes (standard output, standard error), then `x` + 4-byte signed
exit code.
"""

import json
import os
import socket
import struct
import sys

SOCKET = "@SOCKET@"
CONTAINER = "@CONTAINER@"
_VALUED = {"-w": "workdir", "--workdir": "workdir", "-e": "env", "--env": "env", "-u": "user", "--user": "user"}


def _refuse(message: str) -> int:
    print(f"docker (ctxbench's stand-in for the run's container): {message}", file=sys.stderr)
    return 125


def _exec(args: list[str]) -> int:
    workdir, env = "", {}
    while args and args[0].startswith("-") and args[0] != "--":
        flag = args.pop(0)
        name, _, inline = flag.partition("=")
        if name in ("-i", "-t", "-it", "-ti", "--interactive", "--tty", "-d", "--detach"):
            continue
        if name not in _VALUED:
            return _refuse(f"exec option {flag} is not supported")
        if not inline:
            if not args:
                return _refuse(f"exec option {flag} needs a value")
            inline = args.pop(0)
        if _VALUED[name] == "workdir":
            workdir = inline
        elif _VALUED[name] == "env":
            key, eq, value = inline.partition("=")
            if eq:
                env[key] = value
            elif key in os.environ:
                env[key] = os.environ[key]
    if args and args[0] == "--":
        args.pop(0)
    if len(args) < 2:
        return _refuse("usage: docker exec [-w DIR] [-e KEY=VALUE] CONTAINER COMMAND...")
    command = args[1:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(SOCKET)
        conn.sendall(json.dumps({"argv": command, "workdir": workdir, "env": env}).encode() + b"\n")
        reader = conn.makefile("rb")
        while True:
            head = reader.read(5)
            if len(head) < 5:
                return _refuse("the run's container went away")
            kind, size = head[:1], struct.unpack("!i", head[1:])[0]
            if kind == b"x":
                return size
            data = reader.read(size)
            stream = sys.stdout.buffer if kind == b"o" else sys.stderr.buffer
            stream.write(data)
            stream.flush()
    except OSError as exc:
        return _refuse(f"cannot reach the run's container: {exc}")
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    if not argv:
        return _refuse("usage: docker run -d ... | exec ... | stop | rm | kill")
    command, rest = argv[0], argv[1:]
    if command == "run":
        if not any(a in ("-d", "--detach") or (a.startswith("-") and not a.startswith("--") and "d" in a[1:])
                   for a in rest):
            return _refuse("only `docker run -d` (the run's container, already running) is supported")
        print(CONTAINER)
        return 0
    if command == "exec":
        return _exec(rest)
    if command in ("stop", "rm", "kill"):
        for name in rest:
            if not name.startswith("-"):
                print(name)
        return 0
    return _refuse(f"`docker {command}` is not supported: only run -d, exec, stop, rm and kill are")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
