"""A small external agent that acts through one shell, as mini-swe-agent does: a stand-in for tests.

    python bash_agent.py --model NAME [--text] [--max-steps N] < statement.txt

The OpenAI SDK reads the endpoint and key from OPENAI_BASE_URL and OPENAI_API_KEY. Each step sends
the conversation (a system prompt, the statement in an instance template, then the steps so far)
and runs the reply's one command with the shell in the current folder (printed to stdout, one JSON
string a line): a call of the `bash` tool,
or with --text a fenced block in the reply's text (answered in a user message). The output goes
back as `<returncode>N</returncode>` and `<output>...</output>`. It stops when a command's output
starts with the submit marker (exit 0), at --max-steps (exit 1), or on an HTTP error from the
endpoint (stderr, exit 3).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import openai

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
SYSTEM = "You are a helpful assistant that can interact with a computer."
TEXT_RULES = ("\n\nYour response must contain exactly ONE bash code block with ONE command, fenced as\n"
              "```mswea_bash_command\nyour_command_here\n```")
INSTANCE = ("<pr_description>\n{task}\n</pr_description>\n\nFix the issue in the repository (the current folder). "
            f"When you are done, run `echo {SUBMIT_MARKER}` on its own.")
BASH_TOOL = {"type": "function", "function": {
    "name": "bash", "description": "Execute a bash command",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}
FENCE = re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.S)
TIMEOUT_S = 60
OUTPUT_CAP = 10_000


def run(command: str) -> tuple[str, bool]:
    """The command's observation and whether it submitted."""
    try:
        done = subprocess.run(command, shell=True, capture_output=True, text=True, errors="replace",
                              timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = f"{exc.stdout or ''}\n[timed out after {TIMEOUT_S}s]", -1
    submitted = code == 0 and output.lstrip().splitlines()[:1] == [SUBMIT_MARKER]
    if len(output) > OUTPUT_CAP:
        output = output[:OUTPUT_CAP // 2] + f"\n[… {len(output) - OUTPUT_CAP} characters omitted …]\n" \
            + output[-OUTPUT_CAP // 2:]
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>", submitted


def step(client: openai.OpenAI, model: str, messages: list[dict], text: bool) -> tuple[str | None, dict]:
    """One model call: the command it asks for (None when it asks for none) and the assistant message."""
    extra = {} if text else {"tools": [BASH_TOOL]}
    reply = client.chat.completions.create(model=model, messages=messages, seed=0, **extra)  # type: ignore[call-overload]
    message = reply.choices[0].message
    if text:
        blocks = FENCE.findall(message.content or "")
        return (blocks[0].strip() if len(blocks) == 1 else None), {"role": "assistant", "content": message.content}
    calls = message.tool_calls or []
    assistant = {"role": "assistant", "content": message.content,
                 "tool_calls": [{"id": c.id, "type": "function",
                                 "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                for c in calls]}
    if not calls:
        return None, assistant
    try:
        command = json.loads(calls[0].function.arguments).get("command")
    except ValueError:
        command = None
    return (command if isinstance(command, str) else None), assistant


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--text", action="store_true", help="commands in fenced blocks, no tool")
    parser.add_argument("--max-steps", type=int, default=40)
    args = parser.parse_args()
    task = sys.stdin.read().strip()
    messages: list[dict] = [{"role": "system", "content": SYSTEM + (TEXT_RULES if args.text else "")},
                            {"role": "user", "content": INSTANCE.format(task=task)}]
    client = openai.OpenAI(max_retries=0)
    for _ in range(args.max_steps):
        try:
            command, assistant = step(client, args.model, messages, args.text)
        except openai.APIStatusError as exc:
            print(f"bash_agent: the endpoint answered {exc.status_code}: {exc.message}", file=sys.stderr)
            return 3
        except openai.APIConnectionError as exc:
            print(f"bash_agent: no answer from the endpoint: {exc}", file=sys.stderr)
            return 3
        messages.append(assistant)
        print(json.dumps(command), flush=True)
        if command is None:
            observation, submitted = "Reply with exactly one bash command.", False
        else:
            observation, submitted = run(command)
        if args.text or not assistant.get("tool_calls"):
            messages.append({"role": "user", "content": observation})
        else:
            messages += [{"role": "tool", "tool_call_id": c["id"], "content": observation if n == 0 else
                          "<returncode>-1</returncode>\n<output>\nonly the first command runs\n</output>"}
                         for n, c in enumerate(assistant["tool_calls"])]
        if submitted:
            return 0
    print(f"bash_agent: no submission in {args.max_steps} steps", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
