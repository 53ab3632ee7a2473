"""The external agent's way out of its jail: a loopback port relayed to its run's gateway, and the agent itself.

Runs inside the sandbox as the agent's parent, from its own source text (`python -I -c`), so it
needs nothing but the standard library and no ctxbench installation the jail might hide. It listens
on a free loopback port of the jail's network namespace (the only network the agent has), relays
every connection byte for byte to the gateway's Unix socket (bound into the jail with the run's
folder), sets `OPENAI_BASE_URL` (and `OPENAI_API_BASE`) to that port's `/v1`, `ANTHROPIC_BASE_URL` and
`GOOGLE_GEMINI_BASE_URL` to its root (Anthropic's and Gemini's clients add the `/v1` or `/v1beta`),
`GEMINI_API_KEY` to the run's token (`OPENAI_API_KEY`), fills the placeholders of the agent's command
and of the environment variables PLACEHOLDERS_FILE names, in one pass over each word (the values from that file,
`{base_url}` added: a value is never read again, so a statement holding `{model}` reaches the agent as
written), feeds the agent the task statement on its standard input, and exits as the agent does
(128 + N when killed by signal N).
Once the gateway has ended the run (a limit was reached) it writes the stop file: the agent then has
`GRACE_S` seconds to exit on its own before it is killed.

    python -I -c SOURCE SOCKET STATEMENT_FILE STOP_FILE PLACEHOLDERS_FILE -- COMMAND...

PLACEHOLDERS_FILE is JSON: {"values": {NAME: VALUE}, "env": [VARIABLE, ...], "home_files": {PATH: TEXT}};
each home file is written, its placeholders filled, under `$HOME` before the agent starts.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

GRACE_S = 5.0
POLL_S = 0.25
PLACEHOLDER = re.compile(r"(?<!\$)\{([a-z_][a-z0-9_]*)\}")
"""`{name}`, not shell's `${name}` (ctxbench.harness.config.agent reads them alike)."""


def fill(template: str, values: dict) -> str:
    """`template` with each placeholder of `values` replaced, in one pass (others are left as they are)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                end.shutdown(how)
            except OSError:
                pass


def _relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    socket_path, statement_file, stop_file, placeholders_file, separator, *command = argv
    if separator != "--" or not command:
        print("relay: usage: SOCKET STATEMENT_FILE STOP_FILE PLACEHOLDERS_FILE -- COMMAND...", file=sys.stderr)
        return 2
    with open(placeholders_file, encoding="utf-8") as fh:
        placeholders = json.load(fh)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    threading.Thread(target=_serve, args=(listener, socket_path), daemon=True).start()
    values = {**placeholders["values"], "base_url": base_url}
    env = dict(os.environ)
    env.update({key: fill(env[key], values) for key in placeholders["env"] if key in env})
    root = base_url.removesuffix("/v1")
    env.update({"OPENAI_BASE_URL": base_url, "OPENAI_API_BASE": base_url,
                "ANTHROPIC_BASE_URL": root, "GOOGLE_GEMINI_BASE_URL": root})
    if "OPENAI_API_KEY" in env:  # the run's token, under the name Gemini's clients read
        env["GEMINI_API_KEY"] = env["OPENAI_API_KEY"]
    command = [fill(word, values) for word in command]
    for name, text in placeholders.get("home_files", {}).items():
        path = os.path.join(env["HOME"], name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(fill(text, values))
    with open(statement_file, "rb") as statement:
        try:
            agent = subprocess.Popen(command, stdin=statement, env=env)
        except OSError as exc:
            print(f"relay: cannot start the agent {command[0]!r}: {exc}", file=sys.stderr)
            return 127
    signal.signal(signal.SIGTERM, lambda *_: agent.kill())
    code = _wait(agent, stop_file)
    return 128 - code if code < 0 else code


def _wait(agent: subprocess.Popen, stop_file: str) -> int:
    """The agent's exit code; it is killed `GRACE_S` after the stop file appears."""
    stop_at = None
    while True:
        try:
            return agent.wait(POLL_S)
        except subprocess.TimeoutExpired:
            pass
        if stop_at is None and os.path.exists(stop_file):
            stop_at = time.monotonic() + GRACE_S
        if stop_at is not None and time.monotonic() >= stop_at:
            agent.kill()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
