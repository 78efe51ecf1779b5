"""The models against the wire of a live berthd: every key an answer carries is read by a field
or named as kept in ``raw`` only, and every key a model says it reads changes the model when it
changes, so a field added, renamed or dropped on either side fails here."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from berth_client import CapacityReport, Client, Conflict, Levels
from berth_client.models import (
    CapacityChange,
    Instance,
    Provider,
    Reservation,
    ReservationQuery,
    UtilizationStep,
)

FLAVOR = {"name": "m1.small", "vcpus": 2, "ram": 2048, "disk": 20}


def later(days: int) -> datetime:
    return datetime.now(timezone.utc) + timedelta(days=days)


def changed(v: Any) -> Any:
    """A value unlike ``v`` of a shape a model reads."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "-changed"
    if isinstance(v, list):
        return [*v, "changed"] if not v or not isinstance(v[0], dict) else v[1:]
    if isinstance(v, dict):
        return {**v, "changed": 1}
    return "changed"


def typed(obj: Any) -> dict[str, Any]:
    d = dataclasses.asdict(obj)
    d.pop("raw")
    return d


def check(model: Any, raw: dict[str, Any]) -> None:
    name = model.__name__
    unmodelled = set(raw) - model.WIRE_KEYS - model.RAW_ONLY
    assert not unmodelled, f"{name}: the wire carries {sorted(unmodelled)}, which no field reads"
    missing = model.WIRE_KEYS - set(raw)
    assert not missing, f"{name}: reads {sorted(missing)}, which the wire does not carry"
    base = typed(model.from_json(raw))
    for key in sorted(model.WIRE_KEYS):
        other = typed(model.from_json({**raw, key: changed(raw[key])}))
        assert other != base, f"{name}: `{key}` changed and the model did not"


def test_every_answer_key_is_read_or_named_raw_only(client: Client) -> None:
    c = client
    p = c.add_provider("openstack", tenant={"name": "wire"}, region="r1", flavors=[FLAVOR])
    check(Provider, p.raw)
    grow = c.increase_capacity({"cores": 20, "ram": 51200, "instances": 10}, source=p.pool_id)
    check(CapacityChange, grow.raw)
    rid = c.create_reservation(
        {"cores": 4, "ram": 4096, "instances": 2},
        provider=p.provider_id,
        end=later(2),
        tenant="t1",
        priority="high",
    )
    inst = c.create_instance(reservation_id=rid, flavor="m1.small")
    check(Instance, inst.raw)
    q = c.query_reservation(provider=p.provider_id)
    check(ReservationQuery, q.raw)
    check(Reservation, q.details[0].raw)
    check(UtilizationStep, q.utilization[0].raw)
    check(CapacityReport, c.query_capacity(provider=p.provider_id).raw)


def test_reservations_carry_state_priority_tenant_remaining_and_risk(client: Client) -> None:
    c = client
    p = c.add_provider("openstack", tenant={"name": "wire"}, region="r1", flavors=[FLAVOR])
    c.increase_capacity({"cores": 8, "ram": 16384, "instances": 4}, source=p.pool_id)
    rid = c.create_reservation(
        {"cores": 6, "ram": 6144, "instances": 3}, provider=p.provider_id, end=later(1), tenant="t1"
    )
    c.create_instance(reservation_id=rid, flavor="m1.small")
    (r,) = c.query_reservation(provider=p.provider_id).details
    assert (r.state, r.priority, r.tenant, r.at_risk) == ("active", "normal", "t1", False)
    assert r.allocated == {"cores": 2, "ram": 2048, "instances": 1}
    assert r.remaining == {"cores": 4, "ram": 4096, "instances": 2}
    assert r.end is not None and len(r.allocations) == 1
    # A decrease below what is reserved puts it at risk, and says so in the model.
    change = c.decrease_capacity({"cores": 4}, source=p.pool_id)
    assert change.at_risk != []
    (r,) = c.query_reservation(provider=p.provider_id).details
    assert r.at_risk is True


def test_one_metric_is_typed_and_the_others_are_none(client: Client) -> None:
    c = client
    p = c.add_provider("openstack", tenant={"name": "wire"}, region="r1", flavors=[FLAVOR])
    c.increase_capacity({"cores": 20, "ram": 51200, "instances": 10}, source=p.pool_id)
    c.create_reservation({"cores": 5}, provider=p.provider_id, end=later(1))
    r = c.query_capacity(provider=p.provider_id, capacity="available", show_utilization=False)
    assert r.metric == "available"
    assert r.capacity[p.pool_id]["cores"] == Levels(None, None, None, 15)
    assert r.available(p.pool_id, "cores") == 15
    t = c.query_capacity(provider=p.provider_id, capacity="total", show_utilization=False)
    assert t.capacity[p.pool_id]["ram"] == Levels(51200, None, None, None)
    with pytest.raises(ValueError, match="holds only `total`"):
        t.available(p.pool_id, "ram")


def test_a_naive_datetime_is_refused_before_anything_is_sent(client: Client) -> None:
    with pytest.raises(ValueError, match=r"`end` is the naive datetime 2030-01-01T00:00:00; expected a timezone-aware"):
        client.create_reservation({"cores": 1}, zone="default", end=datetime(2030, 1, 1))
    with pytest.raises(ValueError, match="`start` is the naive datetime"):
        client.query_capacity(start=datetime(2030, 1, 1))
    # An aware one in any zone goes as UTC.
    p = client.add_provider("openstack", tenant={"name": "wire"}, region="r1", flavors=[FLAVOR])
    client.increase_capacity({"cores": 2}, source=p.pool_id)
    end = later(30).replace(microsecond=0).astimezone(timezone(timedelta(hours=2)))
    rid = client.create_reservation({"cores": 1}, provider=p.provider_id, end=end)
    (r,) = [d for d in client.query_reservation(provider=p.provider_id).details if d.reservation_id == rid]
    utc = end.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    assert r.end is not None and r.end.startswith(utc), (r.end, utc)


def test_an_instance_beyond_its_reservation_is_a_conflict(client: Client) -> None:
    c = client
    p = c.add_provider("openstack", tenant={"name": "wire"}, region="r1", flavors=[FLAVOR])
    c.increase_capacity({"cores": 20, "ram": 51200, "instances": 10}, source=p.pool_id)
    rid = c.create_reservation({"cores": 2, "ram": 2048, "instances": 1}, provider=p.provider_id, end=later(1))
    c.create_instance(reservation_id=rid, flavor="m1.small")
    with pytest.raises(Conflict) as e:
        c.create_instance(reservation_id=rid, flavor="m1.small")
    assert e.value.status == 409
    assert f"reservation `{rid}` has 0 left" in str(e.value)
