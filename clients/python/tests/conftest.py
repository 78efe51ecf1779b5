"""Starts a real berthd (the workspace's debug build) on a free loopback port for the tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from berth_client import Client

ROOT = Path(__file__).resolve().parents[3]
USER, PASSWORD, TOKEN = "ops", "s3cret", "client-test-token"
READ_TOKEN = "client-test-read-token"


@dataclass
class Daemon:
    url: str
    dir: Path

    def client(self) -> Client:
        return Client(self.url, basic_auth=(USER, PASSWORD), timeout=20)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def berthd_binary() -> Path:
    """``BERTH_BIN``, else ``target/debug/berthd`` (built by ``cargo build``)."""
    path = Path(os.environ.get("BERTH_BIN", ROOT / "target" / "debug" / "berthd"))
    if not path.is_file():
        pytest.fail(f"{path} is missing; expected a berthd binary (run `cargo build -p berthd`)")
    return path


@contextlib.contextmanager
def running_berthd(extra_env: Optional[dict[str, str]] = None, scheme: str = "http") -> Iterator[Daemon]:
    """A berthd on a free loopback port with a fresh SQLite file and the example inventory."""
    with tempfile.TemporaryDirectory(prefix="berth-client-") as tmp:
        d = Path(tmp)
        port = _free_port()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "BERTH_LISTEN": f"127.0.0.1:{port}",
            "BERTH_DATABASE_URL": f"sqlite://{d / 'berth.db'}",
            "BERTH_INVENTORY": str(ROOT / "examples" / "inventory.yaml"),
            "BERTH_BASIC_AUTH": f"{USER}:{PASSWORD}",
            "BERTH_TOKENS": TOKEN,
            "BERTH_READ_TOKENS": READ_TOKEN,
            "BERTH_LOG": "warn",
            # The subscription tests name callbacks on loopback.
            "BERTH_NOTIFY_ALLOW_PRIVATE": "true",
            **(extra_env or {}),
        }
        log = open(d / "berthd.log", "wb")
        proc = subprocess.Popen([str(berthd_binary())], env=env, cwd=d, stdout=log, stderr=log)
        daemon = Daemon(f"{scheme}://127.0.0.1:{port}", d)
        # Readiness over plain TCP: the probe must not depend on the client's TLS settings.
        try:
            deadline = time.monotonic() + 30
            while True:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("berthd did not start:\n" + (d / "berthd.log").read_text())
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            yield daemon
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.close()


@pytest.fixture(scope="session")
def berthd() -> Iterator[Daemon]:
    with running_berthd() as d:
        c = d.client()
        deadline = time.monotonic() + 30
        while not c.ready():
            if time.monotonic() > deadline:
                pytest.fail("berthd never answered /readyz")
            time.sleep(0.05)
        yield d


@pytest.fixture()
def client(berthd: Daemon) -> Client:
    return berthd.client()
