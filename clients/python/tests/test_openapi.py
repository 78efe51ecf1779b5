"""The client against docs/openapi.json: every call it makes is an operation there with the same
method and path, its request fields are the schema's, and it covers every operation there (but
the ones a client has no use for)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any, Optional

from berth_client import Client

from conftest import ROOT

SPEC: dict[str, Any] = json.loads((ROOT / "docs" / "openapi.json").read_text())

# Operations left to other tools: version discovery, HAS's open probe, OPTIONS, metrics, the spec.
NOT_CLIENT_OPS = {
    ("get", "/"),
    ("get", "/v1"),
    ("get", "/v1/plans/healthcheck"),
    ("get", "/metrics"),
    ("get", "/openapi.json"),
    # The web console's own read views (/ui/api/*) serve its pages; they are not a client API.
    ("get", "/ui/api/calendar"),
    ("get", "/ui/api/events"),
    ("get", "/ui/api/place"),
    ("post", "/ui/api/place"),
    ("get", "/ui/api/plans"),
    ("get", "/ui/api/session"),
    # Operator calls with admin credentials: `berth doctor --url` reads the inventory status.
    ("get", "/admin/inventory"),
    ("post", "/admin/inventory/reload"),
}


class Recorder:
    """A transport that answers every request with an empty 200 and remembers it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Optional[dict[str, Any]]]] = []

    def __call__(
        self, method: str, url: str, body: Optional[bytes], headers: dict[str, str]
    ) -> tuple[int, Any]:
        path = url.removeprefix("http://berth.test")
        self.calls.append((method.lower(), path, json.loads(body) if body else None))
        if path.startswith("/v1/plans/"):
            return 200, {"plans": [{"id": "p", "name": "n", "status": "done"}]}
        return 200, {}


def every_call() -> list[tuple[str, str, Optional[dict[str, Any]]]]:
    """Every client method, with every optional field set."""
    rec = Recorder()
    c = Client("http://berth.test", token="t", transport=rec)
    t0 = datetime(2030, 1, 1, tzinfo=timezone.utc)
    t1 = datetime(2030, 1, 2, tzinfo=timezone.utc)
    c.healthy()
    c.ready()
    c.cluster()
    c.create_plan("n", "demands: {}", timeout=5, num_solution=2, limit=3, files={"f": "x"}, plan_id="p")
    c.get_plan("p")
    c.list_plans()
    c.delete_plan("p")
    c.triage("p")
    c.wait_plan("p")
    c.add_provider(
        "openstack",
        name="edge",
        tenant={"name": "t"},
        endpoint="http://10.0.0.1:5000",
        username="u",
        password="pw",
        region="r",
        flavors=[{"name": "m1", "vcpus": 1, "ram": 512}],
    )
    for change in (c.increase_capacity, c.decrease_capacity):
        change({"cores": 1}, source="z/p", zone="z", provider="p", start=t0, end=t1)
    c.query_capacity(zone="z", provider="p", capacity="available", start=t0, end=t1, show_utilization=False)
    c.create_reservation(
        {"cores": 1},
        zone="z",
        provider="p",
        start=t0,
        end=t1,
        expiry=t1,
        priority="high",
        tenant="t",
        elements=["e"],
        idempotency_key="k",
    )
    c.update_reservation(
        "r1",
        capacity={"cores": 2},
        zone="z",
        provider="p",
        start=t0,
        end=t1,
        expiry=t1,
        priority="low",
        tenant="t",
        elements=["e"],
    )
    c.cancel_reservation("r1")
    c.query_reservation(
        zone="z",
        provider="p",
        start=t0,
        end=t1,
        scope="exclusive",
        without=["r2"],
        elements_some=["e"],
        elements_every=["e"],
        show_utilization=True,
    )
    c.create_instance(
        reservation_id="r1",
        provider_id="p",
        zone="z",
        flavor="m1",
        capacity={"cores": 1},
        name="vm",
        image="img",
        end=t1,
    )
    c.destroy_instance("a1")
    for kind in ("compute", "network", "storage"):
        c.subscribe_capacity(kind, "https://cb.test/x", 5, source="z/p", zone="z", provider="p", dimension="cores")
        c.unsubscribe_capacity(kind, "s1")
    c.subscribe_reservations("https://cb.test/x", reservation_id="r1", zone="z", events=["ended"])
    c.unsubscribe_reservations("s2")
    return rec.calls


def template_of(path: str) -> Optional[str]:
    """The OpenAPI path `path` is: itself when literal, else the template it matches."""
    if path in SPEC["paths"]:
        return path
    for tmpl in SPEC["paths"]:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(tmpl)) + "$"
        if "{" in tmpl and re.match(pattern, path):
            return str(tmpl)
    return None


def schema(ref_or_schema: dict[str, Any]) -> Optional[dict[str, Any]]:
    ref = ref_or_schema.get("$ref")
    if ref is None:
        return ref_or_schema
    found: Optional[dict[str, Any]] = SPEC["components"]["schemas"].get(ref.rsplit("/", 1)[-1])
    return found


def check_fields(body: dict[str, Any], sch: dict[str, Any], where: str) -> list[str]:
    """Field names of `body` not in `sch`, and required ones missing, recursively."""
    problems = []
    props: dict[str, Any] = sch.get("properties", {})
    for k, v in body.items():
        if k not in props:
            problems.append(f"{where}.{k} is not in the schema (expected one of {sorted(props)})")
            continue
        sub = props[k]
        nested = [s for s in [sub, *sub.get("oneOf", [])] if "$ref" in s]
        if isinstance(v, dict) and nested:
            inner = schema(nested[0])
            if inner is not None and inner.get("properties"):
                problems += check_fields(v, inner, f"{where}.{k}")
    for r in sch.get("required", []):
        if r not in body:
            problems.append(f"{where}: required `{r}` is missing")
    return problems


def test_every_call_is_an_operation_with_the_schemas_fields() -> None:
    calls = every_call()
    problems = []
    for method, path, body in calls:
        tmpl = template_of(path)
        if tmpl is None:
            problems.append(f"{method} {path}: no such path in docs/openapi.json")
            continue
        op = SPEC["paths"][tmpl].get(method)
        if op is None:
            problems.append(f"{method} {path}: {tmpl} has no `{method}`")
            continue
        if body is None:
            continue
        content = op.get("requestBody", {}).get("content", {}).get("application/json")
        if content is None:
            # The spec leaves these bodies out: the fields are checked against the daemon.
            assert tmpl in ("/cancel-reservation", "/destroy-instance"), tmpl
            continue
        sch = schema(content["schema"])
        assert sch is not None, f"{tmpl}: dangling schema"
        problems += check_fields(body, sch, f"{method} {tmpl}")
    assert problems == []


def test_the_client_covers_every_operation() -> None:
    called = {(m, template_of(p)) for m, p, _ in every_call()}
    spec = {
        (m, p)
        for p, ops in SPEC["paths"].items()
        for m in ops
        if m in ("get", "post", "put", "delete", "patch")
    }
    assert spec - NOT_CLIENT_OPS - called == set()
    assert called - spec == set()


def test_a_dropped_field_would_be_seen() -> None:
    sch = schema({"$ref": "#/components/schemas/ReservationBody"})
    assert sch is not None
    assert check_fields({"capacity": {}, "zones": "z"}, sch, "b") == [
        "b.zones is not in the schema (expected one of "
        + str(sorted(sch["properties"]))
        + ")"
    ]
    assert check_fields({"zone": "z"}, sch, "b") == ["b: required `capacity` is missing"]
