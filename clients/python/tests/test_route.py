"""Routing writes in a cluster: a forwarded answer loads the partition map, the next write of
that partition goes straight to its holder, an unreachable holder falls back to the entry
daemon, and a single daemon never costs a map request."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

import pytest

from berth_client import Client, TransportError, partition_of

MAP = {
    "node": "n1",
    "partition_key": "zone",
    "partitions": [
        {"partition": "z2", "holder": "n2", "url": "http://b.test/", "token": 3,
         "expires_at": "2030-01-01T00:00:00.000Z"},
    ],
}


class Cluster:
    """Daemon `a.test` forwards `z2` writes (and says so); `b.test` holds `z2`."""

    def __init__(self, b_down: bool = False, forwards: bool = True) -> None:
        self.calls: list[str] = []
        self.b_down = b_down
        self.forwards = forwards

    def __call__(
        self, method: str, url: str, body: Optional[bytes], headers: dict[str, str]
    ) -> tuple[int, Any, Mapping[str, str]]:
        self.calls.append(f"{method} {url}")
        if url == "http://a.test/v1/cluster":
            return 200, MAP, {}
        if url.startswith("http://b.test") and self.b_down:
            raise TransportError(f"cannot reach {url}: connection refused")
        sent = json.loads(body) if body else {}
        extra = {"x-berth-forwarded-to": "n2"} if url.startswith("http://a.test") and self.forwards else {}
        return 200, {"reservation-id": f"{sent.get('zone')}:r1"}, extra


def test_a_forwarded_write_loads_the_map_and_the_next_goes_to_the_holder() -> None:
    t = Cluster()
    c = Client("http://a.test", transport=t)
    c.create_reservation({"cores": 1}, zone="z2")
    c.create_reservation({"cores": 1}, zone="z2")
    c.create_reservation({"cores": 1}, zone="z9")
    assert t.calls == [
        "POST http://a.test/create-reservation",
        "GET http://a.test/v1/cluster",
        "POST http://b.test/create-reservation",
        # No holder of z9 in the map: the entry daemon forwards it, and the map is re-read.
        "POST http://a.test/create-reservation",
        "GET http://a.test/v1/cluster",
    ]


def test_an_unreachable_holder_falls_back_to_the_entry_daemon() -> None:
    t = Cluster(b_down=True)
    c = Client("http://a.test", transport=t)
    c.create_reservation({"cores": 1}, zone="z2")
    c.create_reservation({"cores": 1}, zone="z2")
    assert t.calls[2:] == [
        "POST http://b.test/create-reservation",
        "POST http://a.test/create-reservation",
        "GET http://a.test/v1/cluster",
    ]


def test_a_single_daemon_never_reads_the_map_and_route_false_never_routes() -> None:
    t = Cluster(forwards=False)
    c = Client("http://a.test", transport=t)
    for _ in range(3):
        c.create_reservation({"cores": 1}, zone="z2")
    assert t.calls == ["POST http://a.test/create-reservation"] * 3
    t = Cluster()
    c = Client("http://a.test", transport=t, route=False)
    c.create_reservation({"cores": 1}, zone="z2")
    c.create_reservation({"cores": 1}, zone="z2")
    assert t.calls == ["POST http://a.test/create-reservation"] * 2


@pytest.mark.parametrize(
    "key, body, want",
    [
        ("zone", {"zone": "z"}, "z"),
        ("zone", {"reservation-id": "z:r4"}, "z"),
        ("zone", {"reservation-id": "r4"}, None),
        ("zone", {"source": "ResourcePool:z/os"}, "z"),
        ("zone", {"name": "plan"}, None),
        ("provider", {"zone": "z", "provider": "os"}, "os"),
        ("provider", {"zone": "z"}, None),
        ("pool", {"source": {"id": "z/os"}}, "z~os"),
        ("pool", {"provider-id": "os"}, "default~os"),
    ],
)
def test_partition_of_reads_bodies_as_the_forwarder_does(
    key: str, body: dict[str, Any], want: Optional[str]
) -> None:
    assert partition_of(key, body) == want
