"""Every Promise operation through the client against a real berthd, with the capacity numbers
checked after each step (each test registers its own provider, so its pool starts empty)."""

from __future__ import annotations

import socket
from datetime import datetime, timedelta, timezone

import pytest

from berth_client import BadRequest, CapacityReport, Client, Conflict, Levels, NotFound, Provider

FLAVOR = {"name": "m1.small", "vcpus": 2, "ram": 2048, "disk": 20}


def pool_with_capacity(c: Client) -> Provider:
    p = c.add_provider("openstack", tenant={"name": "py"}, region="r1", flavors=[FLAVOR])
    assert p.pool_id == f"default/{p.provider_id}"
    change = c.increase_capacity({"cores": 20, "ram": "51200", "instances": 10}, source=p.pool_id)
    assert (change.pool_id, change.at_risk) == (p.pool_id, [])
    return p


def levels(c: Client, p: Provider) -> dict[str, Levels]:
    r = c.query_capacity(provider=p.provider_id, show_utilization=False)
    assert r.collections == [f"ResourcePool:{p.pool_id}"]
    assert r.utilization == []
    return r.capacity[p.pool_id]


def later(days: int) -> datetime:
    return datetime.now(timezone.utc) + timedelta(days=days)


def test_reserve_allocate_release_with_capacity_at_each_step(client: Client) -> None:
    c = client
    p = pool_with_capacity(c)
    assert levels(c, p)["cores"] == Levels(total=20, reserved=0, usage=0, available=20)

    rid = c.create_reservation(
        {"cores": 8, "ram": 8192, "instances": 3}, provider=p.provider_id, end=later(2)
    )
    lv = levels(c, p)
    assert lv["cores"] == Levels(20, 8, 0, 12)
    assert lv["ram"] == Levels(51200, 8192, 0, 43008)

    q = c.query_reservation(provider=p.provider_id)
    assert q.reservations == [rid]
    (r,) = q.details
    assert (r.reservation_id, r.pool_id, r.zone, r.provider) == (rid, p.pool_id, "default", p.provider_id)
    assert r.capacity == {"cores": 8, "ram": 8192, "instances": 3}
    assert r.active and r.allocations == []
    # The reserved timeline: 8 cores now, none after the end.
    assert [u.capacity["cores"] for u in q.utilization] == [8, 0]

    c.update_reservation(rid, capacity={"cores": 10, "ram": 8192, "instances": 3})
    assert levels(c, p)["cores"] == Levels(20, 10, 0, 10)

    inside = c.create_instance(reservation_id=rid, flavor="m1.small")
    assert (inside.reservation_id, inside.priority, inside.pool_id) == (rid, "high", p.pool_id)
    assert inside.capacity == {"cores": 2, "ram": 2048, "instances": 1}
    # Drawn from the reservation: available does not move.
    assert levels(c, p)["cores"] == Levels(20, 10, 2, 10)
    assert c.query_reservation(provider=p.provider_id).details[0].allocations == [inside.instance_id]

    outside = c.create_instance(provider_id=p.provider_id, capacity={"cores": 4, "instances": 1})
    assert (outside.reservation_id, outside.priority) == (None, "low")
    assert levels(c, p)["cores"] == Levels(20, 10, 6, 6)

    with pytest.raises(Conflict) as e:
        c.create_reservation({"cores": 7}, provider=p.provider_id, end=later(1))
    assert (e.value.status, e.value.dialect, e.value.body["result"]) == (409, "promise", "conflict")
    assert e.value.offers[0]["max_reservable"] == {"cores": 6}

    c.destroy_instance(outside.instance_id)
    c.destroy_instance(inside.instance_id)
    assert levels(c, p)["cores"] == Levels(20, 10, 0, 10)

    c.cancel_reservation(rid)
    assert c.query_reservation(provider=p.provider_id).reservations == []
    assert levels(c, p)["cores"] == Levels(20, 0, 0, 20)


def test_a_decrease_reports_what_it_puts_at_risk(client: Client) -> None:
    c = client
    p = pool_with_capacity(c)
    rid = c.create_reservation({"cores": 12}, provider=p.provider_id, end=later(2))
    fine = c.decrease_capacity({"cores": 5}, source=p.pool_id)
    assert fine.at_risk == []
    assert levels(c, p)["cores"] == Levels(15, 12, 0, 3)
    short = c.decrease_capacity({"cores": 5}, source=f"ResourcePool:{p.pool_id}")
    assert short.at_risk == [rid]
    assert levels(c, p)["cores"].total == 10


def test_query_capacity_one_metric_and_a_window(client: Client) -> None:
    c = client
    p = pool_with_capacity(c)
    c.create_reservation({"cores": 5}, provider=p.provider_id, start=later(1), end=later(2))
    # The default window (now, open-ended) covers tomorrow's reservation.
    assert levels(c, p)["cores"].reserved == 5
    # The next hour does not.
    before: CapacityReport = c.query_capacity(
        provider=p.provider_id, end=later(0) + timedelta(hours=1), show_utilization=False
    )
    assert before.available(p.pool_id, "cores") == 20
    one = c.query_capacity(provider=p.provider_id, capacity="available", show_utilization=False)
    assert one.raw["capacity"][p.pool_id]["cores"] == 15


def test_subscriptions_come_and_go(client: Client) -> None:
    c = client
    p = pool_with_capacity(c)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        cb = f"http://127.0.0.1:{s.getsockname()[1]}/hook"
        subs = []
        for kind in ("compute", "network", "storage"):
            sid = c.subscribe_capacity(kind, cb, 5, source=p.pool_id)
            assert sid
            subs.append((kind, sid))
        rsid = c.subscribe_reservations(cb, zone="default", events=["reservation-started"])
        assert rsid and rsid not in [s for _, s in subs]
        for kind, sid in subs:
            c.unsubscribe_capacity(kind, sid)
        c.unsubscribe_reservations(rsid)
        with pytest.raises(NotFound):
            c.unsubscribe_reservations(rsid)


def test_an_unknown_event_name_is_refused_with_the_known_ones(client: Client) -> None:
    with pytest.raises(BadRequest) as e:
        client.subscribe_reservations("http://127.0.0.1:9/hook", zone="default", events=["created"])
    assert "`filters.events[0]` is `created`" in e.value.message
    assert "reservation-started" in e.value.message
