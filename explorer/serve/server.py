"""The local web server: the standard library's ThreadingHTTPServer (a handful of routes, no framework needed).
No session: every request names its path in the URL, and the answer is derived from it (walk.py caches states).

Routes: ``GET /?step=RULE(args)&step=...&at=N`` the page of the state after step N (default: the last);
``GET /scenario.json?step=...`` the path as a scenario file (a download); ``POST /open`` (form field ``text``,
``name``) a scenario file or a report, answered with a redirect to its path. A wrong request gets a 4xx and a
page that says what is wrong in one line; an unexpected error a 500 with one line, never a traceback.
"""
from __future__ import annotations

import ipaddress
import json
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from ..errors import one_line
from ..scenario import scenario_dict
from .files import MAX_FILE_BYTES, FileError, steps_of
from .page import CSP, error_page, path_url, state_page
from .walk import MAX_STEPS, PathError, Walker

MAX_FIELDS = MAX_STEPS + 2
# Seconds a connection may stay silent (a request's headers or body not arriving, an idle keep-alive): then it
# is closed (a POST's body: 408). The body is read before the model's lock is taken: a stalled client holds
# nothing but its own connection.
REQUEST_TIMEOUT = 30.0


class BadRequest(ValueError):
    def __init__(self, message: str, status: int = HTTPStatus.BAD_REQUEST, back: str | None = None):
        super().__init__(message)
        self.status, self.back = int(status), back


class App:
    """What a request needs: the walker of the served model, its preset name and the plugins' presets."""

    def __init__(self, walker: Walker, preset: str | None, extra_presets: dict | None = None):
        self.walker, self.preset, self.extra_presets = walker, preset, extra_presets or {}
        # One request at a time works on the model: its memo caches (model/spec/memo.py, effect_memo.py) are
        # written without locks, and a page takes milliseconds. Only the model's work is done under it, never a
        # read from the network.
        self.lock = threading.Lock()

    def path_of(self, query: str) -> tuple[tuple, int]:
        """The steps and the position ``at`` a query names."""
        try:
            fields = parse_qsl(query, keep_blank_values=True, max_num_fields=MAX_FIELDS)
        except ValueError:
            raise BadRequest(f"the URL has more than {MAX_STEPS} steps") from None
        unknown = sorted({k for k, _ in fields} - {"step", "at"})
        if unknown:
            raise BadRequest(f"unknown URL parameter(s): {', '.join(unknown)[:200]} (known: step, at)")
        try:
            steps = self.walker.parse(v for k, v in fields if k == "step")
        except PathError as e:
            raise BadRequest(str(e), back=path_url(_raw(fields)[:e.valid])) from None
        ats = [v for k, v in fields if k == "at"]
        if len(ats) > 1:
            raise BadRequest("the URL gives 'at' twice")
        at = len(steps)
        if ats:
            if not (ats[0].isascii() and ats[0].isdigit() and len(ats[0]) <= 6 and int(ats[0]) <= len(steps)):
                raise BadRequest(f"'at' must be a step number from 0 to {len(steps)}, not {ats[0][:40]!r}",
                                 back=path_url(steps))
            at = int(ats[0])
        return steps, at

    def page(self, query: str) -> str:
        steps, at = self.path_of(query)
        try:
            return state_page(self.walker, self.preset, steps, at)
        except PathError as e:
            raise BadRequest(str(e), HTTPStatus.CONFLICT, back=path_url(steps[:e.valid])) from None

    def scenario(self, query: str) -> dict:
        steps, at = self.path_of(query)
        try:
            nodes = self.walker.nodes(steps[:at])
        except PathError as e:
            raise BadRequest(str(e), HTTPStatus.CONFLICT, back=path_url(steps[:e.valid])) from None
        found = self.walker.broken(nodes)
        what = (f"breaks {', '.join(f.invariant.id for f in found)}" if found else "breaks no invariant")
        description = f"jbodcheck serve: a path walked by hand ({at} step{'' if at == 1 else 's'}; it {what})"
        return scenario_dict(self.walker.model, [n.action for n in nodes[1:]], self.preset, description)

    def open(self, form: bytes) -> str:
        """The URL of the path in a posted file."""
        try:
            fields = dict(parse_qsl(form.decode("utf-8"), keep_blank_values=True, max_num_fields=4,
                                    errors="strict"))
        except (ValueError, UnicodeDecodeError):
            raise BadRequest("the form is not an urlencoded text (fields 'text' and 'name')") from None
        text = fields.get("text", "")
        name = (fields.get("name") or "the file")[:200]
        if not text.strip():
            raise BadRequest("no file to open: choose a file or paste its JSON")
        try:
            steps = self.walker.parse(steps_of(text, name, self.walker.model.cfg, self.extra_presets))
            self.walker.nodes(steps)
        except (FileError, PathError) as e:
            raise BadRequest(f"{name}: {e}" if isinstance(e, PathError) else str(e)) from None
        return path_url(steps)


def _raw(fields) -> list[str]:
    return [v for k, v in fields if k == "step"]


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def loopback_refusal(host: str) -> str | None:
    """Why ``--host`` cannot be listened on (one line), or None: the page has no authentication, so it is served
    on a loopback address only (127.0.0.0/8, ::1, localhost); "" or 0.0.0.0 would be every interface."""
    if host.strip().lower() == "localhost":
        return None
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return None
    except ValueError:
        pass
    shown = repr(host) if not host.strip() else host
    return (f"--host {shown} is not a loopback address: `jbodcheck serve` answers this machine only (the page has "
            f"no authentication); use 127.0.0.1 (the default), another 127.x.y.z, ::1 or localhost")


def host_refused(bound_host: str, host_header: str) -> bool:
    """The server answers only requests addressed to a loopback name or to the address it is bound to: a page of
    another site that resolves its own name to 127.0.0.1 (DNS rebinding) gets nothing."""
    name = host_header.strip().lower()
    name = name[1:name.index("]")] if name.startswith("[") and "]" in name else name.rsplit(":", 1)[0]
    return name not in (*LOOPBACK_NAMES, bound_host.lower())


def handler_for(app: App, request_timeout: float = REQUEST_TIMEOUT):
    class Handler(BaseHTTPRequestHandler):
        server_version = "jbodcheck-serve"
        protocol_version = "HTTP/1.1"
        # socketserver.StreamRequestHandler sets it on the connection: every read from it times out
        timeout = request_timeout

        def log_message(self, format, *args):      # noqa: A002 - http.server's name; no access log
            pass

        def do_GET(self):
            self._answer(self._get)

        def do_HEAD(self):
            self._answer(self._get, head=True)

        def do_POST(self):
            self._answer(self._post)

        def _get(self):
            url = urlsplit(self.path)
            if url.path == "/":
                with app.lock:
                    page = app.page(url.query)
                return 200, "text/html; charset=utf-8", page.encode("utf-8"), {}
            if url.path == "/scenario.json":
                with app.lock:
                    scenario = app.scenario(url.query)
                body = json.dumps(scenario, indent=2).encode("utf-8") + b"\n"
                return 200, "application/json", body, {
                    "Content-Disposition": 'attachment; filename="jbodcheck-path.json"'}
            raise BadRequest(f"no page at {url.path[:200]} (the page is /)", HTTPStatus.NOT_FOUND, back="/")

        def _post(self):
            if urlsplit(self.path).path != "/open":
                raise BadRequest("only /open takes a POST", HTTPStatus.METHOD_NOT_ALLOWED, back="/")
            length = self.headers.get("Content-Length", "")
            if not length.isdigit():
                raise BadRequest("a POST needs a Content-Length", HTTPStatus.LENGTH_REQUIRED, back="/")
            if int(length) > 3 * MAX_FILE_BYTES:      # urlencoding triples a byte at most
                raise BadRequest("the posted file is too large", HTTPStatus.REQUEST_ENTITY_TOO_LARGE, back="/")
            try:
                form = self.rfile.read(int(length))
            except TimeoutError:
                raise BadRequest(f"the posted file did not arrive within {request_timeout:g} s",
                                 HTTPStatus.REQUEST_TIMEOUT, back="/") from None
            if len(form) < int(length):
                raise BadRequest("the posted file ended early (the connection closed)", back="/")
            with app.lock:
                location = app.open(form)
            return 303, "text/plain; charset=utf-8", b"", {"Location": location}

        def _answer(self, route, head: bool = False):
            try:
                if host_refused(self.server.server_address[0], self.headers.get("Host", "")):
                    raise BadRequest(f"this server answers requests for {self.server.server_address[0]}, "
                                     f"127.0.0.1 or localhost only", HTTPStatus.MISDIRECTED_REQUEST, back="/")
                status, kind, body, headers = route()
            except BadRequest as e:
                status, kind, headers = e.status, "text/html; charset=utf-8", {}
                body = error_page(app.walker, app.preset, e.status, str(e), e.back).encode("utf-8")
            except Exception as e:  # noqa: BLE001 - a bug in jbodcheck: one line, never a traceback
                status, kind, headers = 500, "text/html; charset=utf-8", {}
                body = error_page(app.walker, app.preset, 500, f"internal error: {one_line(e)}", "/").encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Content-Security-Policy", CSP)
                for k, v in headers.items():
                    self.send_header(k, v)
                if status >= 400:                   # a refused POST's body is left unread: end the connection
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if not head:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                pass                                # the browser went away (or stopped reading): nothing to answer

    return Handler


class Server(ThreadingHTTPServer):
    daemon_threads = True                           # a request in progress does not keep the process on exit

    def __init__(self, host: str, port: int, app: App, request_timeout: float = REQUEST_TIMEOUT):
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), handler_for(app, request_timeout))

    def handle_error(self, request, client_address):
        pass                                        # a broken connection: the handler already answered or cannot

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"
