"""A real redis-server for the fleet store's tests: started on a free port in a temporary directory, killed and
restarted at will; the tests that need it skip with a message where it is not installed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

MISSING = "redis-server is not installed (`make debian-deps` installs it through scripts/debian-deps.sh)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    def __init__(self, directory: Path, password: str | None = None) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.skip(MISSING)
        self.directory = directory
        self.password = password  # required of clients (`requirepass`) when set
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start it (empty: no snapshot, no append-only file) and return once it answers."""
        assert self.binary is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(self.directory),
                                      *(["--requirepass", self.password] if self.password else [])],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1, password=self.password)
        deadline = time.monotonic() + 20
        while True:  # polling for the server to answer, not ordering processes
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.02)
        client.close()
        return self

    def kill(self) -> None:
        """SIGKILL: what it held is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def flush(self) -> None:
        import redis

        with redis.Redis(port=self.port, password=self.password) as client:
            client.flushall()
