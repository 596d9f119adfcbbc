"""A mock Anthropic Messages API on 127.0.0.1 for tests/it/mcp/tools.rs's Claude Code runs.

Usage: python3 tests/mock_anthropic.py SCRIPT.json LOG.jsonl PORT_FILE

It listens on an ephemeral port of 127.0.0.1 (written to PORT_FILE), and answers:
- POST /v1/messages whose tools include the first tool of SCRIPT's "turns" with the next turn:
  each turn is {"tool": NAME, "input": {...}} (a tool_use) or {"text": "..."} (end of turn).
  The turn taken is the number of tool results already in the conversation, so Claude Code's
  retries and side requests do not move the script on.
  Where Claude Code defers MCP tools behind its ToolSearch tool (2.1.3xx: the tool is absent
  from `tools`, or marked `defer_loading`), the mock does what a model does: it first calls
  ToolSearch with `select:NAME` to load the tool, then calls it. ToolSearch's own results do
  not count as turns.
- any other POST /v1/messages (titles, summaries, quota checks) with a short text;
- everything else, including proxy requests (CONNECT or absolute URLs) that would leave the
  machine, with 403 Forbidden.
Every request is appended to LOG as one JSON line: method, path, headers' host, and body.
It stops by itself after 120 seconds.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1], encoding="utf-8"))
LOG = sys.argv[2]
LOCK = threading.Lock()


def log(entry):
    with LOCK, open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def tool_use_names(messages):
    names = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_use":
                    names[block.get("id")] = block.get("name")
    return names


def tool_results(messages):
    names = tool_use_names(messages)
    count = 0
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            count += sum(1 for block in content if block.get("type") == "tool_result"
                         and names.get(block.get("tool_use_id")) != "ToolSearch")
    return count


def searched(messages, name):
    """Whether ToolSearch was already asked to load `name` in this conversation."""
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_use" and block.get("name") == "ToolSearch" \
                        and name in json.dumps(block.get("input")):
                    return True
    return False


def reply_blocks(body):
    tools = {t.get("name"): t for t in body.get("tools") or []}
    messages = body.get("messages") or []
    turns = SCRIPT["turns"]
    first_tool = next((t["tool"] for t in turns if "tool" in t), None)
    if first_tool is None or (first_tool not in tools and "ToolSearch" not in tools):
        return [{"type": "text", "text": "ok"}], "end_turn"
    n = tool_results(messages)
    turn = turns[min(n, len(turns) - 1)]
    if "tool" in turn:
        name = turn["tool"]
        deferred = name not in tools or tools[name].get("defer_loading")
        if deferred and "ToolSearch" in tools and not searched(messages, name):
            block = {"type": "tool_use", "id": f"toolu_mock_search_{n}", "name": "ToolSearch",
                     "input": {"query": f"select:{name}", "max_results": 1}}
            return [block], "tool_use"
        block = {"type": "tool_use", "id": f"toolu_mock_{n}", "name": name, "input": turn["input"]}
        return [block], "tool_use"
    return [{"type": "text", "text": turn["text"]}], "end_turn"


def message(blocks, stop):
    return {
        "id": "msg_mock",
        "type": "message",
        "role": "assistant",
        "model": "claude-mock",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def sse(blocks, stop):
    events = []
    start = message([], None)
    start["usage"] = {"input_tokens": 10, "output_tokens": 1}
    events.append(("message_start", {"type": "message_start", "message": start}))
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "tool_use", "id": block["id"],
                                                                     "name": block["name"], "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 10}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def refuse(self):
        log({"method": self.command, "path": self.path, "host": self.headers.get("Host"), "refused": True})
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    def do_CONNECT(self):
        self.refuse()

    def do_GET(self):
        self.refuse()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
            if self.path.startswith("/v1/messages/count_tokens"):
                log({"method": "POST", "path": self.path, "host": self.headers.get("Host")})
                data = json.dumps({"input_tokens": 10}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.refuse()
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        log({"method": "POST", "path": self.path, "host": self.headers.get("Host"), "body": body})
        blocks, stop = reply_blocks(body)
        if body.get("stream"):
            data = sse(blocks, stop).encode()
            content_type = "text/event-stream"
        else:
            data = json.dumps(message(blocks, stop)).encode()
            content_type = "application/json"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = refuse


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[3] + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(sys.argv[3] + ".tmp", sys.argv[3])
    threading.Timer(120, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
