"""An external agent that attacks its host instead of fixing the bug: `hostile_agent.py MODE [ARG]`.

network PORT   connect to 127.0.0.1:PORT (a listener outside the agent's sandbox)
write PATH     write a file outside the workspace
fork N         fork N processes that sleep
sleep          sleep forever
crash          raise an exception
"""

import os
import socket
import sys
import time


def main(mode: str, arg: str = "") -> int:
    if mode == "network":
        with socket.create_connection(("127.0.0.1", int(arg)), timeout=5) as conn:
            conn.sendall(b"ctxbench-hostile-agent")
    elif mode == "write":
        with open(arg, "w") as out:
            out.write("ctxbench-hostile-agent")
    elif mode == "fork":
        for _ in range(int(arg)):
            if os.fork() == 0:
                time.sleep(300)
                os._exit(0)
    elif mode == "sleep":
        while True:
            time.sleep(60)
    elif mode == "crash":
        raise RuntimeError("the hostile agent crashed on purpose")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
