"""A tiny web app with a form, the sample `[found]` criteria are checked on.

    python -m axpipe.samples.webform --port 8000

``/`` is a form asking for a name; submitting it shows ``Hello, <name>!`` on ``/greet``.
``/broken`` is a page whose script throws (for `expect_no_console_errors`). It listens on
127.0.0.1 only and writes nothing.
"""

import argparse
import html
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HEAD = '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>{}</title></head>'
FORM = HEAD.format("Greeter") + """<body><h1>Greeter</h1>
<form action="/greet" method="get"><label for="name">Name</label> <input id="name" name="name">
<button type="submit">Greet</button></form></body></html>"""
GREETING = HEAD.format("Greeting") + '<body><p id="greeting">Hello, {}!</p><a href="/">again</a></body></html>'
BROKEN = HEAD.format("Broken") + "<body><p>This page's script fails.</p><script>missingFunction();</script></body></html>"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/":
            self._send(200, FORM)
        elif url.path == "/greet":
            name = parse_qs(url.query).get("name", [""])[0].strip() or "nobody"
            self._send(200, GREETING.format(html.escape(name)))
        elif url.path == "/broken":
            self._send(200, BROKEN)
        else:
            self._send(404, HEAD.format("Not found") + "<body><p>Not found</p></body></html>")

    def _send(self, status, body):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        print(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}", flush=True)


def main():
    parser = argparse.ArgumentParser(prog="python -m axpipe.samples.webform")
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
