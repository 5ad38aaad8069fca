# ruff: noqa: E501, UP031  (the providers' wire shapes, kept one per line as they were captured)
"""A loopback stand-in for the model APIs of the four coding CLIs (tests only).

The real, pinned CLIs talk to it instead of a paid model, so the tests see each program's
own output for a successful turn with usage, a scripted tool call that edits a file or
tries to commit, an authentication failure and a usage limit. It answers in each
provider's wire format (Anthropic Messages SSE, OpenAI Responses SSE and Chat Completions,
Gemini generateContent SSE) for the few calls those CLIs make; what a real provider sends
may carry more, so the CLI side is what these tests prove. Written for issue 24 from the
providers' public docs and the requests the pinned CLIs sent (docs/agents.md).

Base URL per scenario: ``<base>/<scenario>`` with scenario one of
  unauth     401 (gemini: 400 API_KEY_INVALID) in the provider's error shape
  limit      429: a usage limit / quota with a reset two hours ahead
  limitlong  429: a limit resetting in three days (gemini: a long RetryInfo)
  ok         a short text answer with usage numbers (aider: a whole-file edit of hello.txt)
  edit       a shell tool call writing hello.txt, then a text answer
  git        shell tool calls `git commit -am wip`, `git push origin HEAD`, then a text answer
Every request (path, headers without credentials, body) is kept in ``StandIn.requests``.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reset_time(scenario):
    """When the limit resets, counted from this request: two hours ("limit"), or three days
    and an hour ("limitlong": past today, a weekly window)."""
    return int(time.time()) + (2 * 3600 if scenario == "limit" else 3 * 86400 + 3600)


LOCK = threading.Lock()
STATE: dict[str, int] = {}  # per (scenario, api) call counter for the git scenario
USAGE = dict(input=1234, output=56, cached=200)


REQUESTS: list[dict[str, object]] = []


def log(entry):
    with LOCK:
        REQUESTS.append(entry)


def sse(events):
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


GIT_STEPS = ["git commit -am wip", "git push origin HEAD"]
# "probe": an allowed command first, then spellings a prefix rule may miss
STEPS = {"git": GIT_STEPS, "edit": ["printf 'hello\\n' > hello.txt"], "probe": ["echo hi > hello.txt && git add hello.txt", "cd . && git commit -m wip2",
                                     "git -C . commit -m wip3", "bash -c 'git commit -m wip4'"]}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else None
        except Exception:
            return {"_raw": raw[:2000].decode("utf-8", "replace")}

    def send(self, code, body, ctype="application/json", headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def route(self, method):
        path = self.path
        body = self._body() if method == "POST" else None
        parts = path.lstrip("/").split("/", 1)
        scenario, rest = parts[0], "/" + (parts[1] if len(parts) > 1 else "")
        keep = {k: v for k, v in self.headers.items()
                if k.lower() not in ("authorization", "x-api-key", "x-goog-api-key")}
        if path == "/reset":
            with LOCK:
                STATE.clear()
            return self.send(200, {"ok": True})
        log({"t": time.time(), "method": method, "path": path, "headers": keep, "body": body})
        if "upgrade" in self.headers.get("connection", "").lower():
            # No websocket here: the client falls back to HTTP (codex does).
            return self.send(426 if scenario != "unauth" else 401,
                             {"error": {"message": "no websocket here"}})
        if "/messages" in rest:
            return self.anthropic(scenario, body or {})
        if rest.rstrip("/").endswith("/responses"):
            return self.openai_responses(scenario, body or {})
        if "chat/completions" in rest:
            return self.openai_chat(scenario, body or {})
        if ":streamGenerateContent" in rest or ":generateContent" in rest or ":countTokens" in rest:
            return self.gemini(scenario, rest, body or {})
        if rest.rstrip("/").endswith("/models"):
            return self.send(200, {"object": "list", "data": [{"id": "gpt-5.5", "object": "model"}]})
        return self.send(404, {"error": {"message": f"fake api: no route {path}"}})

    def step(self, scenario, api):
        with LOCK:
            k = f"{scenario}:{api}"
            STATE[k] = STATE.get(k, 0) + 1
            return STATE[k] - 1

    # --- Anthropic Messages -------------------------------------------------------------
    def anthropic(self, scenario, body):
        if scenario == "unauth":
            return self.send(401, {"type": "error", "error": {"type": "authentication_error",
                                                               "message": "invalid x-api-key"}})
        if scenario in ("limit", "limitlong"):
            reset = reset_time(scenario)
            claim = "five_hour" if scenario == "limit" else "seven_day"
            short = "5h" if scenario == "limit" else "7d"
            return self.send(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                               "message": "This request would exceed your account's rate limit. Please try again later."}},
                             headers=[("retry-after", str(reset - int(time.time()))),
                                      ("anthropic-ratelimit-unified-status", "rejected"),
                                      ("anthropic-ratelimit-unified-reset", str(reset)),
                                      ("anthropic-ratelimit-unified-representative-claim", claim),
                                      (f"anthropic-ratelimit-unified-{short}-status", "rejected"),
                                      (f"anthropic-ratelimit-unified-{short}-reset", str(reset)),
                                      (f"anthropic-ratelimit-unified-{short}-utilization", "1.0")])
        model = body.get("model", "claude-x")
        stream = body.get("stream", False)
        tool = None
        if scenario in STEPS and any(t.get("name") == "Bash" for t in body.get("tools", [])):
            n = self.step(scenario, "anthropic-main")
            if n < len(STEPS[scenario]):
                tool = STEPS[scenario][n]
        usage_start = {"input_tokens": USAGE["input"], "output_tokens": 1,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": USAGE["cached"]}
        if not stream:
            content = [{"type": "text", "text": "Done."}]
            return self.send(200, {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                                   "content": content, "stop_reason": "end_turn", "stop_sequence": None,
                                   "usage": {**usage_start, "output_tokens": USAGE["output"]}})
        ev = [("message_start", {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage_start}})]
        if tool:
            ev += [("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                       "type": "tool_use", "id": f"toolu_fake{len(tool)}", "name": "Bash", "input": {}}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                       "type": "input_json_delta",
                       "partial_json": json.dumps({"command": tool, "description": "commit"})}}),
                   ("content_block_stop", {"type": "content_block_stop", "index": 0})]
            stop = "tool_use"
        else:
            ev += [("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}}),
                   ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": "Done."}}),
                   ("content_block_stop", {"type": "content_block_stop", "index": 0})]
            stop = "end_turn"
        ev += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": USAGE["output"]}}),
               ("message_stop", {"type": "message_stop"})]
        return self.send(200, sse(ev), "text/event-stream")

    # --- OpenAI Responses (codex) ---------------------------------------------------------
    def openai_responses(self, scenario, body):
        if scenario == "unauth":
            return self.send(401, {"error": {"message": "Incorrect API key provided: dummy.",
                                             "type": "invalid_request_error", "param": None,
                                             "code": "invalid_api_key"}})
        if scenario in ("limit", "limitlong"):
            reset = reset_time(scenario)
            return self.send(429, {"error": {"type": "usage_limit_reached",
                                             "message": "The usage limit has been reached",
                                             "plan_type": "plus" if scenario == "limit" else "pro",
                                             "resets_at": reset,
                                             "resets_in_seconds": reset - int(time.time())}},
                             headers=[("x-codex-primary-used-percent", "100"),
                                      ("x-codex-primary-window-minutes", "300"),
                                      ("x-codex-primary-reset-at", str(reset_time("limit"))),
                                      ("x-codex-secondary-used-percent", "40"),
                                      ("x-codex-secondary-window-minutes", "10080")])
        tools = [t.get("name") or t.get("type") for t in body.get("tools", [])]
        item = None
        if scenario in STEPS:
            n = self.step(scenario, "responses")
            if n < len(STEPS[scenario]):
                cmd = STEPS[scenario][n]
                code_mode = any(t.get("type") == "custom" and t.get("name") == "exec"
                                for it in body.get("input", []) if isinstance(it, dict) and it.get("type") == "additional_tools"
                                for ns in it.get("tools", []) for t in (ns.get("tools") or [ns]))
                if code_mode:
                    js = ("const r = await tools.exec_command({cmd: %s}); text(JSON.stringify(r));" % json.dumps(cmd))
                    item = {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}",
                            "name": "exec", "input": js}
                elif "exec_command" in tools:
                    item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                            "name": "exec_command", "arguments": json.dumps({"cmd": cmd})}
                else:
                    item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "shell",
                            "arguments": json.dumps({"command": ["bash", "-lc", cmd]})}
        if item is None:
            item = {"type": "message", "role": "assistant", "id": "msg_1",
                    "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
        usage = {"input_tokens": USAGE["input"], "input_tokens_details": {"cached_tokens": USAGE["cached"]},
                 "output_tokens": USAGE["output"], "output_tokens_details": {"reasoning_tokens": 7},
                 "total_tokens": USAGE["input"] + USAGE["output"]}
        ev = [("response.created", {"type": "response.created", "response": {"id": "resp_fake"}}),
              ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
              ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
              ("response.completed", {"type": "response.completed", "response": {
                  "id": "resp_fake", "status": "completed", "usage": usage, "output": [item]}})]
        return self.send(200, sse(ev), "text/event-stream")

    # --- OpenAI Chat Completions (aider through litellm) -----------------------------------
    def openai_chat(self, scenario, body):
        if scenario == "unauth":
            return self.send(401, {"error": {"message": "Incorrect API key provided: dummy.",
                                             "type": "invalid_request_error", "param": None,
                                             "code": "invalid_api_key"}})
        if scenario == "limit":
            return self.send(429, {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                                             "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}})
        model = body.get("model", "gpt")
        text = "hello.txt\n```\nhello\n```\n"
        usage = {"prompt_tokens": USAGE["input"], "completion_tokens": USAGE["output"],
                 "total_tokens": USAGE["input"] + USAGE["output"],
                 "prompt_tokens_details": {"cached_tokens": 0}}
        if not body.get("stream"):
            return self.send(200, {"id": "c1", "object": "chat.completion", "created": int(time.time()),
                                   "model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                                "finish_reason": "stop"}], "usage": usage})
        base = {"id": "c1", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        ev = [(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                           "finish_reason": None}]}),
              (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
              (None, {**base, "choices": [], "usage": usage})]
        data = sse(ev) + b"data: [DONE]\n\n"
        return self.send(200, data, "text/event-stream")

    # --- Gemini -----------------------------------------------------------------------------
    def gemini(self, scenario, rest, body):
        if scenario == "limitlong":  # no per-day quota id, a long RetryInfo: terminal with a retry hint
            return self.send(429, {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                                             "status": "RESOURCE_EXHAUSTED", "details": [
                                                 {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                                  "retryDelay": f"{reset_time('limitlong') - int(time.time())}s"}]}})
        if scenario == "unauth":
            return self.send(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                             "status": "INVALID_ARGUMENT", "details": [
                                                 {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                                  "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}})
        if scenario == "limit":
            return self.send(429, {"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.",
                                             "status": "RESOURCE_EXHAUSTED", "details": [
                                                 {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                                                     {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                                                      "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                                                      "quotaDimensions": {"location": "global", "model": "gemini-2.5-pro"},
                                                      "quotaValue": "100"}]},
                                                 {"@type": "type.googleapis.com/google.rpc.Help", "links": [
                                                     {"description": "Learn more", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
                                                 {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7200s"}]}})
        if ":countTokens" in rest:
            return self.send(200, {"totalTokens": 100})
        usage = {"promptTokenCount": USAGE["input"], "candidatesTokenCount": USAGE["output"],
                 "totalTokenCount": USAGE["input"] + USAGE["output"] + 9, "cachedContentTokenCount": USAGE["cached"],
                 "thoughtsTokenCount": 9}
        tools = [d.get("name") for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
        parts = [{"text": "Done."}]
        if ":generateContent" in rest and not tools:
            # side calls (routing, next-speaker check, ...) ask for JSON
            cfg = body.get("generationConfig", {})
            if cfg.get("responseMimeType") == "application/json" or cfg.get("responseJsonSchema") or cfg.get("responseSchema"):
                parts = [{"text": json.dumps({"next_speaker": "user", "reasoning": "done",
                                              "model_choice": "flash", "complexity_reasoning": "simple",
                                              "complexity_score": 1})}]
        if scenario in STEPS and "run_shell_command" in tools:
            n = self.step(scenario, "gemini-main")
            if n < len(STEPS[scenario]):
                parts = [{"functionCall": {"name": "run_shell_command", "args": {"command": STEPS[scenario][n]}}}]
        chunk = {"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": usage, "modelVersion": "gemini-2.5-pro", "responseId": "r1"}
        if ":streamGenerateContent" in rest:
            return self.send(200, sse([(None, chunk)]), "text/event-stream")
        return self.send(200, chunk)




class StandIn:
    """The stand-in serving on a free loopback port in a daemon thread."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.requests = REQUESTS
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, scenario: str) -> str:
        return f"{self.base}/{scenario}"

    def reset(self) -> None:
        """Start every scripted scenario from its first step again; forget the requests."""
        with LOCK:
            STATE.clear()
            REQUESTS.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
