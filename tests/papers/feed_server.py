"""A local HTTP server on 127.0.0.1 (a free port, started by the tests) serving recorded feeds, and failing ones,
to the paper watch."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HUGE = 3 * 1024 * 1024


class FeedServer:
    def __init__(self) -> None:
        self.release = threading.Event()  # the slow feed answers only once the test is over
        self.requests: list[tuple[str, float]] = []  # path, when it arrived (time.monotonic)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, time.monotonic()))
                route = ROUTES.get(self.path.split("?")[0])
                if route is None:
                    self.send_error(404)
                    return
                route(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _file(name: str, ctype: str):  # type: ignore[no-untyped-def]
    def serve(h: BaseHTTPRequestHandler) -> None:
        body = (FIXTURES / name).read_bytes()
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
    return serve


def _body(body: bytes, status: int = 200, length: bool = True, ctype: str = "application/xml"):  # type: ignore[no-untyped-def]
    def serve(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        if length:
            h.send_header("Content-Length", str(len(body)))
        else:
            h.send_header("Connection", "close")
        h.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client stopped at its cap
            h.wfile.write(body)
        h.close_connection = True
    return serve


def _slow(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/rss+xml")
    h.end_headers()
    h.wfile.write(b"<?xml version='1.0'?><rss version='2.0'><channel>")
    h.wfile.flush()
    SERVER.release.wait(30)  # holds the answer open until the test has seen the client give up


def _redirect_to_file(h: BaseHTTPRequestHandler) -> None:
    h.send_response(302)
    h.send_header("Location", "file:///etc/passwd")
    h.send_header("Content-Length", "0")
    h.end_headers()


ITEM = (b"<item><title>Filler %d</title><link>https://example.org/filler/%d</link>"
        b"<description>%s</description></item>")
ROUTES = {
    "/arxiv-cs-se.rss": _file("arxiv-cs-se.rss", "application/rss+xml; charset=utf-8"),
    "/arxiv-query.atom": _file("arxiv-query.atom", "application/atom+xml; charset=utf-8"),
    "/search.json": _file("search-api.json", "application/json"),
    "/malformed.rss": _file("malformed.rss", "application/rss+xml"),
    "/external-entity.rss": _file("external-entity.rss", "application/rss+xml"),
    "/netscape-0.91.rss": _file("netscape-0.91.rss", "application/rss+xml; charset=iso-8859-1"),
    "/page.html": _body(b"<!doctype html><html><head><title>Sign in</title></head><body>Sign in</body></html>",
                        ctype="text/html"),
    "/bad.json": _body(b'{"data": [ {"title": "cut off', ctype="application/json"),
    "/object.json": _body(b'{"message": "rate limited", "code": 429}', ctype="application/json"),
    "/huge.rss": _body(b"<rss version='2.0'><channel>" + b"".join(ITEM % (i, i, b"x" * 200) for i in range(12000))
                       + b"</channel></rss>"),
    "/huge-unannounced.rss": _body(b"<rss version='2.0'><channel>" + b"x" * HUGE, length=False),
    "/many.rss": _body(b"<rss version='2.0'><channel>" + b"".join(ITEM % (i, i, b"filler") for i in range(300))
                       + b"</channel></rss>"),
    "/error.rss": _body(b"Internal Server Error", status=500, ctype="text/plain"),
    "/slow.rss": _slow,
    "/redirect.rss": _redirect_to_file,
}
SERVER: FeedServer


def start() -> FeedServer:
    global SERVER
    SERVER = FeedServer()
    SERVER.thread.start()
    return SERVER


def stop(server: FeedServer) -> None:
    server.release.set()
    server.httpd.shutdown()
    server.httpd.server_close()


def refused() -> str:
    """A URL on 127.0.0.1 where nothing listens: a port taken from the system, then let go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/feed.rss"
