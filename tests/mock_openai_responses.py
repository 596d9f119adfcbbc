"""A mock OpenAI Responses API on 127.0.0.1 for tests/it/clients/codex.rs's Codex runs.

Usage: python3 tests/mock_openai_responses.py LOG.jsonl PORT_FILE

It listens on an ephemeral port of 127.0.0.1 (written to PORT_FILE) and answers:
- POST .../responses with a streamed (SSE) response holding one assistant message, "OK.";
- GET .../models with an empty model list;
- everything else with 404.
Every request is appended to LOG as one JSON line: method, path, and the parsed body.
It stops by itself after 300 seconds.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]
LOCK = threading.Lock()
COUNTER = [0]


def log(entry):
    with LOCK, open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def next_id():
    with LOCK:
        COUNTER[0] += 1
        return COUNTER[0]


def sse(n):
    response_id = f"resp_mock_{n}"
    item = {
        "type": "message",
        "id": f"msg_mock_{n}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "OK.", "annotations": []}],
    }
    base = {"id": response_id, "object": "response", "model": "mock-model", "output": []}
    events = [
        ("response.created", {"type": "response.created", "response": dict(base, status="in_progress")}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": dict(item, status="in_progress", content=[])}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                        "output_index": 0, "content_index": 0, "delta": "OK."}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": dict(
            base, status="completed", output=[item],
            usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                   "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": 12})}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, content_type, data):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        if self.path.split("?")[0].endswith("/models"):
            self.send(200, "application/json", json.dumps({"object": "list", "data": [], "models": []}).encode())
        else:
            self.send(404, "application/json", b"{}")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.headers.get("Content-Encoding", "") == "zstd":
            body = {"unparsed": "zstd"}
        else:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
        log({"method": "POST", "path": self.path, "body": body})
        if self.path.split("?")[0].endswith("/responses"):
            self.send(200, "text/event-stream", sse(next_id()).encode())
        else:
            self.send(404, "application/json", b"{}")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[2] + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    threading.Timer(300, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
