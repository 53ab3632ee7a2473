"""One run, turn by turn, from its transcript: what the strategy changed, what the model saw and did.

`ctxbench show RUN_DIR RUN_ID` prints it; the HTML report links every run to a self-contained page of
the same (`runs/<strategy>/<task>.<repeat>.html`). A gateway's transcripts folder (`ctxbench gateway
--transcripts DIR`) is read the same way, a conversation (`<strategy>/<file name>`) for a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.harness.chat import message_text
from ctxbench.harness.errors import InputError, did_you_mean
from ctxbench.harness.records import (RunResult, TranscriptEnd, TranscriptHeader, TranscriptMessage,
                                      TranscriptObservation, TranscriptTurn)
from ctxbench.harness.records.results import read_results
from ctxbench.harness.records.results_folder import transcript_path
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.reports.document import Block, Bullets, Code, Heading, Notice, Paragraph, to_markdown
from ctxbench.reports.readable import JSON_NOTE, readable

__all__ = ["RunView", "load_run", "read_view", "header_blocks", "turn_blocks", "run_blocks", "run_page_path",
           "run_text", "gateway_conversations", "PREVIEW_CHARS"]

PREVIEW_CHARS = 600
"""Characters of a message or tool output shown before the rest is elided (unless `full`)."""


@dataclass
class RunView:
    """A run's transcript read into memory, messages resolved by hash."""

    result: RunResult | None
    header: TranscriptHeader
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    turns: list[TranscriptTurn] = field(default_factory=list)
    end: TranscriptEnd | None = None
    gateway: bool = False
    """A gateway's conversation (it has no end record: the gateway never knows its last request)."""


def gateway_conversations(path: str | Path) -> dict[str, Path] | None:
    """The conversations of a gateway's transcripts folder by `<strategy>/<file name>`; None for a
    folder that is not one (a results folder has runs.jsonl)."""
    path = Path(path)
    if (path / "runs.jsonl").exists():
        return None
    found = {f"{p.parent.name}/{p.name.removesuffix('.jsonl')}": p for p in sorted(path.glob("*/*.jsonl"))}
    return found or None


def load_run(path: str | Path, run_id: str) -> RunView:
    """Read run `run_id` (`strategy/task/repeat`) of a results folder.

    Raises:
        InputError: no such run, or it has no transcript.
    """
    path = Path(path)
    conversations = gateway_conversations(path)
    if conversations is not None:
        file = conversations.get(run_id)
        if file is None:
            raise InputError(f"{path}: no gateway conversation {run_id!r}{did_you_mean(run_id, sorted(conversations))}")
        view = read_view(file, None)
        view.gateway = True
        return view
    results = {r.run_id: r for r in read_results(path / "runs.jsonl")}
    strategy, _, rest = run_id.partition("/")
    task_id, _, repeat = rest.rpartition("/")
    file = transcript_path(path, strategy, task_id, int(repeat)) if repeat.isdigit() else None
    if file is None or not file.is_file():
        known = sorted(results)
        hint = did_you_mean(run_id, known)
        raise InputError(f"{path}: no transcript for run {run_id!r}{hint}"
                         + ("" if known else " (the folder records no runs)"))
    return read_view(file, results.get(run_id))


def read_view(file: Path, result: RunResult | None) -> RunView:
    """A transcript file read into a `RunView` beside its `runs.jsonl` record (None: not recorded).

    Raises:
        InputError: not a transcript this version reads, or it has no header.
    """
    view: RunView | None = None
    try:
        for record in read_transcript(file):
            if isinstance(record, TranscriptHeader):
                view = RunView(result, record)
            elif view is None:
                continue
            elif isinstance(record, TranscriptMessage):
                view.messages[record.hash] = record.message
            elif isinstance(record, TranscriptTurn):
                view.turns.append(record)
            elif isinstance(record, TranscriptEnd):
                view.end = record
    except ValueError as exc:
        raise InputError(f"{file}: not a transcript this version of ctxbench reads ({str(exc)[:300]})") from None
    if view is None:
        raise InputError(f"{file}: the transcript has no header")
    return view


def _preview(text: str, full: bool) -> str:
    if full or len(text) <= PREVIEW_CHARS:
        return text
    return f"{text[:PREVIEW_CHARS]}\n[… {len(text) - PREVIEW_CHARS:,} more characters; --full shows them]"


def _call(name: str, arguments: str) -> str:
    return f"{name}({arguments})"


def _describe(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    if role == "tool":
        return f"tool {message.get('tool_call_id')}"
    if role == "assistant" and message.get("tool_calls"):
        return "assistant → " + ", ".join(c["function"]["name"] for c in message["tool_calls"])
    return role


def _unmatched(previous: list[str], now: list[str]) -> tuple[list[int], list[int]]:
    """Positions of `now` not matched, in order, to an occurrence of the same message in `previous` (a
    message sent twice in `now` and once before is new once), and positions of `previous` left unmatched."""
    left: dict[str, list[int]] = {}
    for i, h in enumerate(previous):
        left.setdefault(h, []).append(i)
    new = []
    for i, h in enumerate(now):
        if left.get(h):
            left[h].pop(0)
        else:
            new.append(i)
    return new, sorted(i for positions in left.values() for i in positions)


def _sent_lines(view: RunView, turn: TranscriptTurn, previous: list[str], earlier: set[str]) -> list[str]:
    """What the request held compared with the previous one: kept, new, changed and no longer sent.

    A message is "changed" when one that answered the same tool call (or had the same role and
    position among the first two) was sent before with other content; a new message that is word for
    word one sent before (`earlier`: every message of the run's earlier requests) says so."""
    def key(h: str, i: int) -> str:
        m = view.messages.get(h, {})
        return f"tool:{m['tool_call_id']}" if m.get("role") == "tool" else f"head:{i}" if i < 2 else h

    new_at, gone_at = _unmatched(previous, turn.messages)
    gone = [(key(previous[i], i), previous[i]) for i in gone_at]
    new = [(i, turn.messages[i]) for i in new_at]
    changed = [(i, h) for i, h in new if key(h, i) in {k for k, _ in gone}]
    added = [(i, h) for i, h in new if (i, h) not in changed]
    repeats = {i for i, h in added if h in earlier or h in turn.messages[:i]}
    still_gone = [h for k, h in gone if k not in {key(h, i) for i, h in changed}]
    lines = [f"{len(turn.messages)} messages: {len(turn.messages) - len(new)} as in the previous request, "
             f"{len(added)} new" + (f" ({len(repeats)} of them word for word a message sent before)" if repeats else "")
             + (f", {len(changed)} changed" if changed else "")
             + (f", {len(still_gone)} no longer sent" if still_gone else "")]
    lines += [f"changed: {_describe(view.messages.get(h, {}))}" for _, h in changed]
    lines += [f"new{', as sent before' if i in repeats else ''}: {_describe(view.messages.get(h, {}))}"
              for i, h in added]
    lines += [f"no longer sent: {_describe(view.messages.get(h, {}))}" for h in still_gone]
    return lines


def _observations(view: RunView) -> dict[str, tuple[int, TranscriptObservation, str]]:
    """call id -> (turn, observation, call arguments)."""
    out = {}
    for turn in view.turns:
        args = {c.id: c.arguments for c in turn.tool_calls}
        for obs in turn.observations:
            out[obs.call_id] = (turn.turn, obs, args.get(obs.call_id, ""))
    return out


def _action_key(action: Any) -> tuple:
    return action.kind, action.target, action.reason, action.tokens_before, action.tokens_after


_OWN_CONTEXT = {
    "summary_request": "asked the model to summarize the conversation (its own compaction)",
    "rewritten": "replaced the history it sends (its own compaction): this request does not extend the previous one",
}


def _own_context(turn: TranscriptTurn) -> list[Block]:
    """What the agent itself did to its context at this call, where it did something."""
    if turn.own_context is None:
        return []
    sent = f" ({turn.request_messages} messages)" if turn.request_messages is not None else ""
    return [Paragraph(f"**Agent**: {_OWN_CONTEXT[turn.own_context]}{sent}.")]


def _action_blocks(view: RunView, turn: TranscriptTurn, originals: dict, full: bool, previous: set) -> list[Block]:
    """The strategy's actions this turn: new ones in detail, those repeated from the previous turn in one line."""
    ledger = turn.ledger
    if not ledger.actions:
        return [Paragraph("**Strategy**: sent the history as it is (no action).")]
    sent = {m.get("tool_call_id"): m for m in (view.messages.get(h, {}) for h in turn.messages)
            if m.get("role") == "tool"}
    fresh = [a for a in ledger.actions if _action_key(a) not in previous]
    repeated = [a for a in ledger.actions if _action_key(a) in previous]
    blocks: list[Block] = [Paragraph(f"**Strategy**: {len(ledger.actions)} action(s), {len(fresh)} new this turn.")]
    if repeated:
        names = ", ".join(f"{a.kind} `{a.target}`" for a in repeated[:8]) + (" …" if len(repeated) > 8 else "")
        blocks.append(Bullets((f"as in the previous turn: {names}",)))
    for action in fresh:
        line = (f"`{action.kind}` `{action.target}`: {action.tokens_before:,} → {action.tokens_after:,} tokens"
                f" — {action.reason}")
        blocks.append(Bullets((line,)))
        if action.target not in originals:
            continue
        at, obs, arguments = originals[action.target]
        blocks.append(Paragraph(f"Original: `{_call(obs.tool, arguments)}` at turn {at}, {obs.size:,} characters, "
                                f"{obs.tokens:,} tokens ({obs.kind}{', error' if obs.is_error else ''})."))
        received = sent.get(action.target)
        if received is None:
            blocks.append(Paragraph("The model received: nothing (the call and its result were not sent)."))
        else:
            content = message_text(received)
            text, fields = readable(content)
            blocks.append(Paragraph(f"The model received ({len(content):,} characters"
                                    + (f"; {JSON_NOTE}" if fields else "") + "):"))
            blocks.append(Code(_preview(text, full)))
    return blocks


def header_blocks(view: RunView) -> list[Block]:
    """The run's title, outcome and tokens, and why the loop stopped."""
    h, r = view.header, view.result
    blocks: list[Block] = [Heading(f"Run {h.run_id}", 1)]
    if r is not None:
        outcome = "resolved" if r.resolved else f"unresolved: `{r.failure_reason}`"
        cost = f", ${r.cost_usd:,.4f}" if getattr(r, "cost_usd", None) is not None else ""
        blocks.append(Paragraph(f"{outcome}; {r.turns} turns; {r.total_tokens:,} tokens (prompt {r.prompt_tokens:,}, "
                                f"cached {r.cached_tokens:,}, completion {r.completion_tokens:,}, strategy "
                                f"{r.strategy_tokens:,}){cost}; seed {r.seed}."))
    if view.gateway:
        blocks.append(Paragraph(f"A gateway conversation: task `{h.task_id or '?'}`, {len(view.turns)} turns, "
                                f"seed {h.seed}; {sum(t.usage.prompt_tokens for t in view.turns):,} prompt tokens."))
    elif view.end is not None:
        blocks.append(Paragraph(f"The loop stopped: `{view.end.stop}`" + (f" — {view.end.detail}" if view.end.detail else "")))
    else:
        blocks.append(Notice("The transcript has no end record: the run was killed or is still going."))
    return blocks


def _context_parts(turn: TranscriptTurn) -> str:
    """The recorded prompt's tokens by part: the ledger's components, and what they leave out of the count
    recorded when the request was sent (its tool schemas and the request's overhead)."""
    parts = {k: v for k, v in turn.ledger.components.items() if v}
    rest = turn.context_tokens - sum(parts.values())
    text = ", ".join(f"{k} {v:,}" for k, v in parts.items())
    return text + (f"{'; ' if text else ''}tool schemas and request overhead {rest:,}" if rest > 0 else "")


def _usage_line(turn: TranscriptTurn) -> str:
    u = turn.usage
    own = turn.ledger.strategy_prompt_tokens + turn.ledger.strategy_completion_tokens
    return (f"Context {turn.context_tokens:,} tokens, the whole prompt as counted ({turn.fill:.1%} of the window): "
            f"{_context_parts(turn)}. "
            f"Usage: prompt {u.prompt_tokens:,} (cached {u.cached_tokens:,}), completion {u.completion_tokens:,}"
            + (f"; the strategy's own calls {own:,}" if own else "") + ".")


def _reply_blocks(turn: TranscriptTurn, full: bool) -> list[Block]:
    """The model's reply as the text it wrote (a text on several lines below, verbatim), and its calls."""
    calls = "; ".join(f"`{_call(c.name, c.arguments)}`" for c in turn.tool_calls) or "no tool call"
    notes = ((f" (malformed: {turn.malformed})" if turn.malformed else "")
             + ("" if turn.delivered else " (not delivered: the client went away first)"))
    reply = turn.reply
    if "\n" not in reply and "`" not in reply and len(reply) <= 300:
        return [Paragraph(f"**Model**: " + (f'"{reply}"' if reply else "no text") + f" → {calls}{notes}")]
    return [Paragraph(f"**Model** → {calls}{notes}; its text ({len(reply):,} characters):"),
            Code(_preview(reply, full))]


def _tool_blocks(obs: TranscriptObservation, full: bool) -> list[Block]:
    """A tool result: its size as sent, and its text as the model read it."""
    text, fields = readable(obs.content)
    return [Paragraph(f"**Tool** `{obs.call_id}` {obs.tool} [{obs.kind}{', error' if obs.is_error else ''}]: "
                      f"{obs.size:,} characters, {obs.tokens:,} tokens" + (f" ({JSON_NOTE})" if fields else "")),
            Code(_preview(text, full))]


def turn_blocks(view: RunView, full: bool = False) -> list[tuple[TranscriptTurn, list[Block]]]:
    """Each turn with its blocks: the context and usage, the strategy's actions, what was sent, the
    model's reply and calls, and each tool result."""
    originals = _observations(view)
    previous: list[str] = []
    earlier: set[str] = set()
    previous_actions: set = set()
    out = []
    for turn in view.turns:
        blocks: list[Block] = [
            Paragraph(_usage_line(turn)),
            *_own_context(turn),
            *_action_blocks(view, turn, originals, full, previous_actions),
            Paragraph("**Sent**:"), Bullets(tuple(_sent_lines(view, turn, previous, earlier))),
        ]
        previous, previous_actions = turn.messages, {_action_key(a) for a in turn.ledger.actions}
        earlier.update(turn.messages)
        blocks += _reply_blocks(turn, full)
        for obs in turn.observations:
            blocks += _tool_blocks(obs, full)
        out.append((turn, blocks))
    return out


def run_blocks(view: RunView, full: bool = False) -> list[Block]:
    """The run as report blocks: a header, then each turn."""
    blocks = header_blocks(view)
    for turn, inner in turn_blocks(view, full):
        blocks += [Heading(f"Turn {turn.turn}"), *inner]
    return blocks


def run_page_path(path: str | Path, result: RunResult) -> Path:
    """Where the report writes the HTML page of a run."""
    return Path(path) / "runs" / result.strategy / f"{result.task_id}.{result.repeat}.html"


def run_text(path: str | Path, run_id: str, full: bool = False) -> str:
    """The run as Markdown text (what `ctxbench show` prints)."""
    return to_markdown(run_blocks(load_run(path, run_id), full), Path(path))
