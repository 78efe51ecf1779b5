"""HAS plans through the client against a real berthd: create, wait, recommendation, list, delete;
and wait_plan's backoff and timeout on a scripted transport."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Optional

import pytest

from berth_client import Client, NotFound, PlanTimeout

from conftest import ROOT

VCPE = ROOT / "examples" / "templates" / "vcpe.yaml"
INVENTORY = ROOT / "examples" / "inventory.yaml"


def cli_solve(template: Path) -> dict[str, Any]:
    """The same template solved by the `berth` CLI in-process: the reference answer."""
    berth = os.environ.get("BERTH_CLI", str(ROOT / "target" / "debug" / "berth"))
    out = subprocess.run(
        [berth, "solve", str(template), "--inventory", str(INVENTORY), "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    )
    v: dict[str, Any] = json.loads(out.stdout)
    return v


def test_create_wait_recommendation_matches_the_cli(client: Client) -> None:
    created = client.create_plan("vcpe-py", VCPE.read_text(), timeout=30)
    assert created.status == "template"
    assert created.link is not None and created.link.endswith("/v1/plans/" + created.id)
    plan = client.wait_plan(created.id, timeout=60)
    assert (plan.status, plan.name, plan.optimal) == ("done", "vcpe-py", True)
    want = cli_solve(VCPE)["solutions"][0]
    rec = plan.recommendations[0]
    assert sorted(rec) == sorted(want["placements"])
    for demand, p in want["placements"].items():
        got = rec[demand].candidate
        assert got.candidate_id == p["candidate_id"]
        assert got.cloud_owner == p["cloud_owner"]
        assert got.vim_id == f"{p['cloud_owner']}_{p['location_id']}"
        assert rec[demand].attributes["physical-location-id"] == p["physical_location_id"]
    assert plan.objectives == [want["objective"]]
    assert (plan.bound, plan.gap) == (want["objective"], 0.0)
    assert created.id in [p.id for p in client.list_plans()]
    assert client.triage(created.id)["plan_id"] == created.id
    client.delete_plan(created.id)
    with pytest.raises(NotFound) as e:
        client.get_plan(created.id)
    assert (e.value.status, e.value.dialect) == (404, "has")


def test_a_plan_given_as_an_object_with_its_own_id(client: Client) -> None:
    template = {
        "homing_template_version": "2017-10-10",
        "locations": {"customer": {"latitude": 45.5, "longitude": -73.6}},
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "optimization": {"minimize": {"sum": [{"distance_between": ["customer", "vG"]}]}},
    }
    created = client.create_plan("obj", template, plan_id="py-own-id", num_solution=2)
    assert created.id == "py-own-id"
    plan = client.wait_plan(created.id)
    assert plan.status == "done"
    assert len(plan.recommendations) == 2
    # Best first: the objective (distance) never decreases.
    assert plan.objectives == sorted(plan.objectives)


class Script:
    """A transport answering a plan's statuses in turn; records the waits between polls."""

    def __init__(self, statuses: list[str]) -> None:
        self.statuses = statuses
        self.now = 0.0
        self.sleeps: list[float] = []
        self.prefer: list[Optional[str]] = []

    def __call__(
        self, method: str, url: str, body: Optional[bytes], headers: dict[str, str]
    ) -> tuple[int, Any]:
        self.prefer.append(headers.get("Prefer"))
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return 200, {"plans": [{"id": "p1", "name": "n", "status": status}]}

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s

    def clock(self) -> float:
        return self.now


def test_wait_plan_backs_off_up_to_the_cap() -> None:
    s = Script(["template", "solving", "solving", "solving", "solving", "done"])
    c = Client("http://berth.test", transport=s)
    plan = c.wait_plan("p1", interval=0.1, backoff=2, max_interval=0.3, sleep=s.sleep, clock=s.clock)
    assert plan.status == "done"
    assert s.sleeps == [0.1, 0.2, 0.3, 0.3, 0.3]


def test_wait_plan_gives_up_at_its_timeout() -> None:
    s = Script(["solving"])
    c = Client("http://berth.test", transport=s)
    with pytest.raises(PlanTimeout) as e:
        c.wait_plan("p1", timeout=1.0, interval=0.4, backoff=1, sleep=s.sleep, clock=s.clock)
    # The last wait is cut to what is left of the timeout.
    assert [round(x, 6) for x in s.sleeps] == [0.4, 0.4, 0.2]
    assert (e.value.plan_id, e.value.status) == ("p1", "solving")
    assert "still `solving` after 1 s" in str(e.value)


def test_wait_plan_asks_the_daemon_to_hold_each_read_within_the_timeout() -> None:
    s = Script(["solving"])
    c = Client("http://berth.test", transport=s)
    with pytest.raises(PlanTimeout):
        c.wait_plan(
            "p1", timeout=30.0, wait=20, interval=5, max_interval=5, backoff=1, sleep=s.sleep, clock=s.clock
        )
    # 20 s asked while more is left, then what is left of the timeout; none once nothing is.
    assert s.prefer == ["wait=20", "wait=20", "wait=20", "wait=15", "wait=10", "wait=5", None]
