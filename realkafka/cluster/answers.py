"""A loopback TCP proxy between the brokers and the controller that can hold the controller's answers to one API
(docs/conform.md, "The window between the acceptance and the swap"): the gate (Gate.java) acts before the controller
handles a request; this holds what comes after, the answer, so that the controller has handled an
AssignReplicasToDirs (its record written) while the broker has not heard of it yet.

Kafka's framing: every request and response is a 4-byte big-endian size and that many bytes. A request's header
starts with its API key (int16), version (int16), correlation id (int32) and client id (int16 length, then UTF-8;
-1 for null); a response's with the correlation id. Answers on a connection come back in the order of its requests,
so holding one holds the later ones of that connection: a broker's AssignReplicasToDirs go out on a channel of
their own (``directory-assignments``, BrokerServer), whose requests are all of that API.
"""
from __future__ import annotations

import socket
import struct
import threading

ASSIGN_REPLICAS_TO_DIRS = 73   # ApiKeys.ASSIGN_REPLICAS_TO_DIRS


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data.extend(chunk)
    return bytes(data)


def read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed frame (the size included), or None at the end of the stream."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    body = _read_exactly(sock, struct.unpack(">i", head)[0])
    return None if body is None else head + body


def request_header(frame: bytes) -> tuple[int, int, str | None]:
    """(API key, correlation id, client id) of a request frame."""
    key, _version, correlation = struct.unpack(">hhi", frame[4:12])
    length = struct.unpack(">h", frame[12:14])[0] if len(frame) >= 14 else -1
    client = frame[14:14 + length].decode("utf-8", "replace") if length >= 0 else None
    return key, correlation, client


def response_correlation(frame: bytes) -> int:
    return struct.unpack(">i", frame[4:8])[0]


class AnswerProxy:
    """Listens on 127.0.0.1 (``port``) and forwards every connection to the controller's ``target`` port; the answers
    to ``api`` of the clients ``hold(client)`` names wait until ``release(client)`` (or ``close``)."""

    def __init__(self, target: int, api: int = ASSIGN_REPLICAS_TO_DIRS):
        self.target, self.api = target, api
        self._held: set[str] = set()
        self._waiting = 0
        self._cond = threading.Condition()
        self._closed = False
        self._sockets: list[socket.socket] = []
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._accept, name="answer-proxy", daemon=True).start()

    # ---- what the harness asks -----------------------------------------------------------------------------------
    def hold(self, client: str) -> None:
        with self._cond:
            self._held.add(client)

    def release(self, client: str | None = None) -> None:
        with self._cond:
            self._held = set() if client is None else self._held - {client}
            self._cond.notify_all()

    def waiting(self) -> int:
        """How many answers are held now."""
        with self._cond:
            return self._waiting

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._held = set()
            self._cond.notify_all()
        for s in [self._server, *self._sockets]:
            try:
                s.close()
            except OSError:
                pass

    # ---- the pumps -----------------------------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                if self._closed:
                    return
                continue
            self._sockets += [client, upstream]
            asked: dict[int, tuple[int, str | None]] = {}
            lock = threading.Lock()
            threading.Thread(target=self._requests, args=(client, upstream, asked, lock), daemon=True).start()
            threading.Thread(target=self._answers, args=(upstream, client, asked, lock), daemon=True).start()

    def _requests(self, client, upstream, asked, lock) -> None:
        try:
            while (frame := read_frame(client)) is not None:
                key, correlation, client_id = request_header(frame)
                with lock:
                    asked[correlation] = (key, client_id)
                upstream.sendall(frame)
        except OSError:
            pass
        self._shut(client, upstream)

    def _answers(self, upstream, client, asked, lock) -> None:
        try:
            while (frame := read_frame(upstream)) is not None:
                with lock:
                    key, client_id = asked.pop(response_correlation(frame), (None, None))
                if key == self.api:
                    with self._cond:
                        self._waiting += 1
                        self._cond.wait_for(lambda: self._closed or client_id not in self._held)
                        self._waiting -= 1
                client.sendall(frame)
        except OSError:
            pass
        self._shut(client, upstream)

    @staticmethod
    def _shut(*sockets) -> None:
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
