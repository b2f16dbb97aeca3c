"""realkafka/cluster/answers.py without a JVM: a fake controller answers every request frame with its correlation id;
the proxy holds the answers to AssignReplicasToDirs of the client it is told to, passes everything else, and lets
the held answer through at the release."""
from __future__ import annotations

import socket
import struct
import threading

from realkafka.cluster.answers import ASSIGN_REPLICAS_TO_DIRS, AnswerProxy, read_frame, request_header


def _request(key: int, correlation: int, client: str) -> bytes:
    name = client.encode()
    body = struct.pack(">hhih", key, 0, correlation, len(name)) + name + b"payload"
    return struct.pack(">i", len(body)) + body


def _controller() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def serve():
        conn, _ = server.accept()
        while (frame := read_frame(conn)) is not None:
            _, correlation, _ = request_header(frame)
            body = struct.pack(">i", correlation) + b"answer"
            conn.sendall(struct.pack(">i", len(body)) + body)
    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def _answer(sock) -> int:
    frame = read_frame(sock)
    return struct.unpack(">i", frame[4:8])[0]


def test_the_answer_to_a_held_clients_assignment_waits_for_the_release():
    server, port = _controller()
    proxy = AnswerProxy(port)
    try:
        broker = socket.create_connection(("127.0.0.1", proxy.port))
        broker.settimeout(5)
        assert request_header(_request(ASSIGN_REPLICAS_TO_DIRS, 7, "0"))[1:] == (7, "0")
        broker.sendall(_request(18, 1, "0"))                       # ApiVersions: never held
        assert _answer(broker) == 1
        proxy.hold("0")
        broker.sendall(_request(ASSIGN_REPLICAS_TO_DIRS, 2, "0"))
        broker.settimeout(0.5)
        try:
            broker.recv(1)
            raise AssertionError("the held answer came through")
        except socket.timeout:
            pass
        assert proxy.waiting() == 1
        proxy.release("0")
        broker.settimeout(5)
        assert _answer(broker) == 2 and proxy.waiting() == 0
        broker.close()
    finally:
        proxy.close()
        server.close()
