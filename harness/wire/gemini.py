"""The Gemini API on the wire (`POST /v1beta/models/MODEL:generateContent`, `:streamGenerateContent`):
Gemini CLI's format.

The model is in the path, and so is streaming (`streamGenerateContent?alt=sse`); the API versions
`v1beta` (Gemini CLI's), `v1` (the `google-genai` Python SDK's) and `v1alpha` are served alike. Field
names are read in both spellings Google's servers take: the JSON names (`systemInstruction`,
`maxOutputTokens`) and the proto names (`system_instruction`, `min_items`).

Reading a request onto the chat format:

- `systemInstruction` is the first system message; `contents` of role `user` (or none) are user
  messages, of role `model` assistant messages, their text parts joined (a model's are fragments of one
  reply, joined as they are; `thought` parts are dropped);
- a model content's `functionCall` parts are its `tool_calls`, each with the call's own `id` or, where
  it has none, one derived from its position (`call_C_P`: the content's and the part's index), which is
  the same in every later request of the conversation; a user content's `functionResponse` parts are the
  `tool` messages answering them, paired as Gemini pairs them: by `id` where the response names a call
  of the model content before it, else by name and order. `response.output` (Gemini CLI's) or
  `response.result` is the text, `response.error` an error (`is_error`), another response its JSON;
- `tools[].functionDeclarations` are function tools, their `parametersJsonSchema` as it is or their
  `parameters` (Gemini's OpenAPI schema: `"type": "OBJECT"`, `nullable`, `format`...) as JSON schema;
  other tools (Google Search, code execution) are not offered upstream;
- `toolConfig.functionCallingConfig`: mode `NONE` offers no tools, `allowedFunctionNames` only those;
- `generationConfig.maxOutputTokens` and `seed` are read; the other sampling settings are not forwarded.

A reply is a `GenerateContentResponse`: one candidate whose content holds a text part and a
`functionCall` part per call (with its id), `finishReason` `STOP` (`MAX_TOKENS` where the reply used
all of `maxOutputTokens`), `usageMetadata` as Gemini splits it (`candidatesTokenCount` without the
thoughts, `thoughtsTokenCount`), `modelVersion`, `responseId`. Streamed, it is server-sent events of
partial responses: the text in chunks, the last event with the rest of the text, the function calls,
the finish reason and the usage. An error is Google's `{"error": {code, message, status}}`.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ctxbench.harness.chat import join_texts, read_arguments
from ctxbench.harness.protocols import Completion
from ctxbench.harness.records import Usage
from ctxbench.harness.wire.base import (HttpReply, ModelRequest, Refusal, WireName, json_reply, reply_id, sse_events,
                                        sse_reply)

__all__ = ["GEMINI", "GeminiWire", "GeminiStream", "route_model", "json_schema", "response_body", "stream_events", "google_status",
           "model_entry", "API_VERSIONS", "TEXT_CHUNK_CHARS"]

API_VERSIONS = ("v1beta", "v1", "v1alpha")
"""The Gemini API versions served (one format: they differ in what Google offers, not in its shape)."""
TEXT_CHUNK_CHARS = 256
"""The most characters of text a streamed event carries."""

_ROUTE = re.compile(r"/(?:v1beta|v1|v1alpha)/models/(.+):(generateContent|streamGenerateContent)")
_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             408: "DEADLINE_EXCEEDED", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
             501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
_COUNTS = {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
"""Schema fields that are int64 in Google's API, which proto JSON may write as strings."""


def google_status(status: int) -> str:
    """The canonical `error.status` Google answers an HTTP status with."""
    return _STATUSES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")


def route_model(route: str) -> tuple[str, bool] | None:
    """(the model, whether it streams) of a generation route, or None for any other route."""
    match = _ROUTE.fullmatch(route)
    return (unquote(match.group(1)), match.group(2) == "streamGenerateContent") if match else None


def _camel(name: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def _field(obj: dict[str, Any], name: str) -> Any:
    """A field by its JSON name, else by its proto name (`systemInstruction`, `system_instruction`)."""
    if name in obj:
        return obj[name]
    return obj.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name))


def json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A Gemini schema (OpenAPI 3.0's subset: upper-case `type`, `nullable`, `example`, `defs`/`ref`,
    counts that may be strings) as JSON schema."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        name = _camel(key)
        if name == "type":
            if isinstance(value, str) and value.upper() != "TYPE_UNSPECIFIED":
                out["type"] = value.lower()
        elif name in ("properties", "defs") and isinstance(value, dict):
            out["$defs" if name == "defs" else name] = {k: json_schema(v) if isinstance(v, dict) else v
                                                        for k, v in value.items()}
        elif name in ("items", "additionalProperties") and isinstance(value, dict):
            out[name] = json_schema(value)
        elif name == "anyOf" and isinstance(value, list):
            out[name] = [json_schema(v) if isinstance(v, dict) else v for v in value]
        elif name == "ref" and isinstance(value, str):
            out["$ref"] = value.replace("#/defs/", "#/$defs/", 1)
        elif name in _COUNTS and isinstance(value, str) and value.isdigit():
            out[name] = int(value)
        elif name == "example":
            out["examples"] = [value]
        elif name not in ("nullable", "propertyOrdering"):
            out[name] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _function_tools(tools: list[dict[str, Any]], tool_config: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools:
        for declaration in _field(tool, "functionDeclarations") or []:
            parameters = _field(declaration, "parametersJsonSchema")
            if not isinstance(parameters, dict):
                schema = _field(declaration, "parameters")
                parameters = json_schema(schema) if isinstance(schema, dict) else {"type": "object", "properties": {}}
            out.append({"type": "function", "function": {"name": declaration["name"],
                                                         "description": declaration.get("description") or "",
                                                         "parameters": parameters}})
    calling = _field(tool_config, "functionCallingConfig") if isinstance(tool_config, dict) else None
    if not isinstance(calling, dict):
        return out
    if str(calling.get("mode") or "").upper() == "NONE":
        return []
    allowed = _field(calling, "allowedFunctionNames")
    return [t for t in out if t["function"]["name"] in allowed] if isinstance(allowed, list) else out


def _texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]


def _result(response: dict[str, Any]) -> dict[str, Any]:
    """A function response's text (and whether it reports an error) as a chat tool message holds it."""
    value = response.get("output", response.get("result"))
    failed = value is None and "error" in response
    if failed:
        value = response["error"]
    if value is None:
        value = response
    text = value if isinstance(value, str) else json.dumps(value)
    return {"content": text, "is_error": True} if failed else {"content": text}


def _chat_messages(system: Any, contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    elif isinstance(system, dict) and _texts(_parts(system)):
        out.append({"role": "system", "content": join_texts(_texts(_parts(system)))})
    unanswered: list[tuple[str, str | None, str]] = []  # (id, own id, name) of the last model content's calls
    for c, content in enumerate(contents):
        parts = _parts(content)
        if content.get("role") == "model":
            calls = []
            unanswered = []
            for p, part in enumerate(parts):
                call = _field(part, "functionCall")
                if isinstance(call, dict):
                    own = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
                    name = str(call.get("name") or "")
                    unanswered.append((own or f"call_{c}_{p}", own, name))
                    calls.append({"id": unanswered[-1][0], "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(read_arguments(call.get("args")))}})
            reply: dict[str, Any] = {"role": "assistant", "content": "".join(_texts(parts))}
            if calls:
                reply["tool_calls"] = calls
            out.append(reply)
            continue
        for p, part in enumerate(parts):
            response = _field(part, "functionResponse")
            if isinstance(response, dict):
                call_id = _answered(unanswered, response) or response.get("id") or f"call_{c}_{p}"
                body = response.get("response")
                out.append({"role": "tool", "tool_call_id": str(call_id),
                            **_result(body if isinstance(body, dict) else {})})
        if _texts(parts):
            out.append({"role": "user", "content": join_texts(_texts(parts))})
    return out


def _answered(unanswered: list[tuple[str, str | None, str]], response: dict[str, Any]) -> str | None:
    """The id of the call `response` answers, taken off `unanswered`: the one it names by id, else the
    first of its name."""
    own = response.get("id")
    match = next((i for i, call in enumerate(unanswered) if own and call[1] == own), None)
    if match is None:
        match = next((i for i, call in enumerate(unanswered) if call[2] == response.get("name")), None)
    return None if match is None else unanswered.pop(match)[0]


def _parts(content: dict[str, Any]) -> list[dict[str, Any]]:
    parts = content.get("parts")
    return [parts] if isinstance(parts, dict) else [p for p in parts or () if isinstance(p, dict)]


def _part_problem(part: Any) -> str | None:
    """Why a content part cannot be read, or None."""
    if not isinstance(part, dict):
        return "expected a part object"
    if not isinstance(part.get("text", ""), str):
        return "text: expected a string"
    call, response = _field(part, "functionCall"), _field(part, "functionResponse")
    if call is not None and not (isinstance(call, dict) and isinstance(call.get("name"), str)
                                 and isinstance(call.get("args") or {}, dict)):
        return "functionCall: expected {name, args}"
    if response is not None and not (isinstance(response, dict) and isinstance(response.get("name"), str)
                                     and isinstance(response.get("response") or {}, dict)):
        return "functionResponse: expected {name, response}"
    return None


def _check(body: Any) -> Refusal | None:
    if not isinstance(body, dict):
        return Refusal(400, "Invalid JSON payload received: the request body must be a JSON object")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return Refusal(400, "* GenerateContentRequest.contents: contents is not specified", param="contents")
    for n, content in enumerate(contents):
        if not isinstance(content, dict):
            return Refusal(400, f"contents[{n}]: expected a content object {{role, parts}}", param="contents")
        if content.get("role") not in (None, "", "user", "model", "function"):
            return Refusal(400, f"contents[{n}].role: expected \"user\" or \"model\", not {content['role']!r}",
                           param="contents")
        parts = content.get("parts")
        if not parts or not isinstance(parts, (list, dict)):
            return Refusal(400, f"contents[{n}].parts: contents.parts must not be empty", param="contents")
        for p, part in enumerate(parts if isinstance(parts, list) else [parts]):
            problem = _part_problem(part)
            if problem is not None:
                return Refusal(400, f"contents[{n}].parts[{p}]: {problem}", param="contents")
    system = _field(body, "systemInstruction")
    if system is not None and not isinstance(system, (str, dict)):
        return Refusal(400, "systemInstruction: expected a content object {parts: [{text}]}", param="systemInstruction")
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools) or not all(
            isinstance(d, dict) and isinstance(d.get("name"), str)
            for t in tools for d in _declarations(t)):
        return Refusal(400, "tools: expected a list of tools, their functionDeclarations each with a name",
                       param="tools")
    config = _field(body, "generationConfig")
    if config is not None and not isinstance(config, dict):
        return Refusal(400, "generationConfig: expected an object", param="generationConfig")
    for name in ("maxOutputTokens", "seed"):
        value = _field(config or {}, name)
        if value is not None and _integer(value) is None:
            return Refusal(400, f"generationConfig.{name}: expected an integer, not {value!r}", param="generationConfig")
    temperature = _field(config or {}, "temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))):
        return Refusal(400, f"generationConfig.temperature: expected a number, not {temperature!r}",
                       param="generationConfig")
    if _field(body, "cachedContent"):
        return Refusal(400, "cachedContent is not served here: send the whole conversation in contents",
                       param="cachedContent")
    return None


def _declarations(tool: dict[str, Any]) -> list[Any]:
    declarations = _field(tool, "functionDeclarations")
    return declarations if isinstance(declarations, list) else [None] if declarations is not None else []


def _integer(value: Any) -> int | None:
    """An integer as proto JSON writes one: a number, or a string of digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    return None


def _usage(u: Usage) -> dict[str, Any]:
    usage = {"promptTokenCount": u.prompt_tokens, "candidatesTokenCount": u.completion_tokens - u.reasoning_tokens,
             "totalTokenCount": u.prompt_tokens + u.completion_tokens, "cachedContentTokenCount": u.cached_tokens}
    return {**usage, "thoughtsTokenCount": u.reasoning_tokens} if u.reasoning_tokens else usage


def _finish(completion: Completion, request: ModelRequest) -> str:
    limit = request.max_output_tokens
    full = limit is not None and not completion.tool_calls and completion.usage.completion_tokens >= limit
    return "MAX_TOKENS" if full else "STOP"


def _call_parts(completion: Completion) -> list[dict[str, Any]]:
    return [{"functionCall": {"id": c.id, "name": c.name, "args": read_arguments(c.arguments)}}
            for c in completion.tool_calls]


def _head(request: ModelRequest, reply: str | None = None) -> dict[str, Any]:
    return {"modelVersion": request.model, "responseId": reply or reply_id("")}


def response_body(completion: Completion, request: ModelRequest) -> dict[str, Any]:
    """A `GenerateContentResponse` for `completion`."""
    return _last(completion, request, _head(request), [{"text": completion.text}] if completion.text else [])


def _partial(text: str, head: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}], **head}


def _last(completion: Completion, request: ModelRequest, head: dict[str, Any],
          texts: list[dict[str, Any]]) -> dict[str, Any]:
    """The response that ends a reply: `texts`, the function calls, the finish reason and the usage."""
    parts = texts + _call_parts(completion)
    return {"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]},
                            "finishReason": _finish(completion, request), "index": 0}],
            "usageMetadata": _usage(completion.usage), **head}


def stream_events(completion: Completion, request: ModelRequest) -> list[dict[str, Any]]:
    """A completion as the partial responses a streamed reply sends: its text in chunks of at most
    TEXT_CHUNK_CHARS, the last chunk with the function calls, the finish reason and the usage."""
    text = completion.text
    chunks = [text[i:i + TEXT_CHUNK_CHARS] for i in range(0, len(text), TEXT_CHUNK_CHARS)]
    head = _head(request)
    return [_partial(chunk, head) for chunk in chunks[:-1]] + \
        [_last(completion, request, head, [{"text": chunk} for chunk in chunks[-1:]])]


class GeminiStream:
    """Partial responses written as the model writes it: one per piece of text, then one with the
    function calls, the finish reason and the usage; an error as Google's, in the stream."""

    def __init__(self, request: ModelRequest) -> None:
        self.request, self.head = request, _head(request)

    def opening(self) -> bytes:
        return b""

    def text(self, piece: str) -> bytes:
        return sse_events([(None, _partial(piece, self.head))])

    def closing(self, completion: Completion) -> bytes:
        return sse_events([(None, _last(completion, self.request, self.head, []))])

    def failure(self, refusal: Refusal) -> bytes:
        return sse_events([(None, _error(refusal))])


def _error(refusal: Refusal) -> dict[str, Any]:
    return {"error": {"code": refusal.status, "message": refusal.message, "status": google_status(refusal.status)}}


def model_entry(model_name: str, owner: str) -> dict[str, Any]:
    """The one model served, as Gemini's `models.get` describes a model."""
    return {"name": f"models/{model_name}", "baseModelId": model_name, "version": "served",
            "displayName": model_name, "description": f"{model_name}, served by {owner}",
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]}


class GeminiWire:
    """The Gemini API (`generateContent`, `streamGenerateContent`)."""

    name: WireName = "gemini"

    def serves(self, route: str) -> bool:
        return route_model(route) is not None

    def read(self, body: Any, path: str) -> ModelRequest | Refusal:
        target = urlsplit(path)
        routed = route_model(target.path.rstrip("/"))
        if routed is None:
            return Refusal(404, f"no Gemini model route {target.path}: expected /v1beta/models/MODEL:generateContent")
        model, stream = routed
        if stream and parse_qs(target.query).get("alt") != ["sse"]:
            return Refusal(400, "streamGenerateContent is served as server-sent events only: add ?alt=sse")
        refused = _check(body)
        if refused is not None:
            return refused
        config = _field(body, "generationConfig") or {}
        limit, seed = _integer(_field(config, "maxOutputTokens")), _integer(_field(config, "seed"))
        return ModelRequest("gemini", model,
                            _chat_messages(_field(body, "systemInstruction"), body["contents"]),
                            _function_tools(body.get("tools") or [], _field(body, "toolConfig")), stream=stream,
                            seed=seed, max_output_tokens=limit)

    def reply(self, request: ModelRequest, completion: Completion) -> HttpReply:
        if request.stream:
            return sse_reply([(None, event) for event in stream_events(completion, request)])
        return json_reply(200, response_body(completion, request))

    def refuse(self, refusal: Refusal) -> HttpReply:
        return json_reply(refusal.status, _error(refusal))

    def streamer(self, request: ModelRequest) -> GeminiStream:
        return GeminiStream(request)


GEMINI = GeminiWire()
