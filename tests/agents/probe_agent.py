"""An external agent that only talks to its gateway, to test what the gateway does: `probe_agent.py CALLS`.

Sends up to CALLS chat requests (each a tool reply to the last), printing each reply's status; stops at
the first error reply and exits 0 (the gateway ending the run is not the agent's error). Also checks
that a request without the run's token is refused.
"""

import json
import os
import sys
import urllib.error
import urllib.request


def post(body: dict, key: str) -> tuple[int, dict]:
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json.dumps(body).encode(),
                                     {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def main(calls: int) -> int:
    model, key = os.environ["CTXBENCH_MODEL"], os.environ["OPENAI_API_KEY"]
    messages = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": sys.stdin.read()}]
    status, _ = post({"model": model, "messages": messages}, "not-the-token")
    if status != 401:
        print(f"a request without the run's token got {status}, not 401")
        return 5
    for _ in range(calls):
        status, body = post({"model": model, "messages": messages}, key)
        print(f"reply: {status} {body.get('error', {}).get('code', '')}")
        if status != 200:
            return 0
        message = body["choices"][0]["message"]
        messages.append({k: v for k, v in message.items() if v is not None})
        for call in message.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "line 1\nline 2\n" * 40})
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
