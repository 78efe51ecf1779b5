"""Typed views of berthd's answers. Each keeps the whole JSON object in ``raw``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

# A plan in one of these has finished: HAS's final statuses.
FINAL_STATUSES = frozenset({"done", "not found", "error"})

JSON = dict[str, Any]


def _obj(v: Any) -> JSON:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: Any) -> int:
    """A Promise quantity: a number or a numeric string."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return 0


def _amounts(v: Any) -> dict[str, int]:
    return {str(k): _int(x) for k, x in _obj(v).items()}


def _self_link(v: Any) -> Optional[str]:
    # HAS: `links: [[{"href": …, "rel": "self"}]]`.
    if isinstance(v, list) and v and isinstance(v[0], list) and v[0]:
        return _str(_obj(v[0][0]).get("href"))
    return None


@dataclass(frozen=True)
class Candidate:
    """Where a demand is homed (HAS ``candidate``)."""

    candidate_id: Optional[str]
    inventory_type: Optional[str]
    cloud_owner: Optional[str]
    location_id: Optional[str]
    vim_id: Optional[str]
    raw: JSON

    @staticmethod
    def from_json(v: Any) -> "Candidate":
        d = _obj(v)
        return Candidate(
            candidate_id=_str(d.get("candidate_id")),
            inventory_type=_str(d.get("inventory_type")),
            cloud_owner=_str(d.get("cloud_owner")),
            location_id=_str(d.get("location_id")),
            vim_id=_str(d.get("vim-id")),
            raw=d,
        )


@dataclass(frozen=True)
class Placement:
    """One demand's placement in a recommendation."""

    inventory_provider: Optional[str]
    service_resource_id: Optional[str]
    candidate: Candidate
    attributes: JSON

    @staticmethod
    def from_json(v: Any) -> "Placement":
        d = _obj(v)
        return Placement(
            inventory_provider=_str(d.get("inventory_provider")),
            service_resource_id=_str(d.get("service_resource_id")),
            candidate=Candidate.from_json(d.get("candidate")),
            attributes=_obj(d.get("attributes")),
        )


@dataclass(frozen=True)
class Plan:
    """A HAS plan as ``GET /v1/plans/{id}`` shows it."""

    id: str
    name: str
    status: str
    message: Optional[str]
    # One mapping demand -> placement per solution, best first.
    recommendations: list[dict[str, Placement]]
    objectives: list[Any]
    optimal: bool
    # The objective the search proved no plan beats, and the best plan's relative gap to it
    # (0 when optimal); None without a plan.
    bound: Optional[float]
    gap: Optional[float]
    link: Optional[str]
    raw: JSON

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    @staticmethod
    def from_json(v: Any) -> "Plan":
        d = _obj(v)
        recs = d.get("recommendations")
        return Plan(
            id=str(d.get("id", "")),
            name=str(d.get("name", "")),
            status=str(d.get("status", "")),
            message=_str(d.get("message")),
            recommendations=[
                {str(k): Placement.from_json(p) for k, p in _obj(r).items()}
                for r in (recs if isinstance(recs, list) else [])
            ],
            objectives=list(d.get("objectives") or []),
            optimal=d.get("optimal") is True,
            bound=_num(d.get("bound")),
            gap=_num(d.get("gap")),
            link=_self_link(d.get("links")),
            raw=d,
        )


@dataclass(frozen=True)
class Provider:
    """``add-provider``'s answer."""

    provider_id: str
    pool_id: str
    raw: JSON

    @staticmethod
    def from_json(v: Any) -> "Provider":
        d = _obj(v)
        return Provider(str(d.get("provider-id", "")), str(d.get("pool-id", "")), d)


@dataclass(frozen=True)
class CapacityChange:
    """``increase-capacity`` / ``decrease-capacity``'s answer."""

    pool_id: str
    # Reservations a decrease leaves without enough capacity.
    at_risk: list[Any]
    raw: JSON

    @staticmethod
    def from_json(v: Any) -> "CapacityChange":
        d = _obj(v)
        risk = d.get("at-risk")
        return CapacityChange(
            str(d.get("pool-id", "")), list(risk) if isinstance(risk, list) else [], d
        )


@dataclass(frozen=True)
class Reservation:
    """One entry of ``query-reservation``'s ``details``."""

    reservation_id: str
    pool_id: str
    zone: str
    provider: str
    capacity: dict[str, int]
    allocations: list[str]
    active: bool
    start: Optional[str]
    end: Optional[str]
    raw: JSON

    @staticmethod
    def from_json(v: Any) -> "Reservation":
        d = _obj(v)
        allocs = d.get("allocations")
        return Reservation(
            reservation_id=str(d.get("reservation-id", "")),
            pool_id=str(d.get("pool-id", "")),
            zone=str(d.get("zone", "")),
            provider=str(d.get("provider", "")),
            capacity=_amounts(d.get("capacity")),
            allocations=[str(a) for a in allocs] if isinstance(allocs, list) else [],
            active=d.get("active") is True,
            start=_str(d.get("start")),
            end=_str(d.get("end")),
            raw=d,
        )


@dataclass(frozen=True)
class UtilizationStep:
    """One breakpoint of a pool's capacity timeline."""

    timestamp: str
    pool_id: str
    # Per dimension: the levels (`total`, `reserved`, `usage`, `available`) or one number.
    capacity: JSON

    @staticmethod
    def from_json(v: Any) -> "UtilizationStep":
        d = _obj(v)
        return UtilizationStep(
            str(d.get("timestamp", "")), str(d.get("pool-id", "")), _obj(d.get("capacity"))
        )


@dataclass(frozen=True)
class ReservationQuery:
    """``query-reservation``'s answer."""

    reservations: list[str]
    details: list[Reservation]
    utilization: list[UtilizationStep]
    raw: JSON

    @staticmethod
    def from_json(v: Any) -> "ReservationQuery":
        d = _obj(v)
        return ReservationQuery(
            reservations=[str(r) for r in d.get("reservations") or []],
            details=[Reservation.from_json(r) for r in d.get("details") or []],
            utilization=[UtilizationStep.from_json(u) for u in d.get("utilization") or []],
            raw=d,
        )


@dataclass(frozen=True)
class Levels:
    """A dimension's capacity over a window: the worst (lowest available) instant."""

    total: int
    reserved: int
    usage: int
    available: int

    @staticmethod
    def from_json(v: Any) -> "Levels":
        d = _obj(v)
        return Levels(
            _int(d.get("total")),
            _int(d.get("reserved")),
            _int(d.get("usage")),
            _int(d.get("available")),
        )


@dataclass(frozen=True)
class CapacityReport:
    """``query-capacity``'s answer.

    ``capacity`` maps pool id -> dimension -> value: ``Levels`` when no single ``capacity``
    metric was asked for, else the number of that metric (kept in ``raw`` as sent).
    """

    collections: list[str]
    capacity: dict[str, dict[str, Levels]]
    utilization: list[UtilizationStep]
    raw: JSON

    def available(self, pool_id: str, dimension: str) -> int:
        """Available amount of ``dimension`` in ``pool_id`` (0 when absent)."""
        lv = self.capacity.get(pool_id, {}).get(dimension)
        return lv.available if lv else 0

    @staticmethod
    def from_json(v: Any) -> "CapacityReport":
        d = _obj(v)
        cap: dict[str, dict[str, Levels]] = {}
        for pool, dims in _obj(d.get("capacity")).items():
            cap[str(pool)] = {
                str(k): Levels.from_json(x) for k, x in _obj(dims).items() if isinstance(x, dict)
            }
        return CapacityReport(
            collections=[str(c) for c in d.get("collections") or []],
            capacity=cap,
            utilization=[UtilizationStep.from_json(u) for u in d.get("utilization") or []],
            raw=d,
        )


@dataclass(frozen=True)
class Instance:
    """``create-instance``'s answer."""

    instance_id: str
    pool_id: Optional[str]
    reservation_id: Optional[str]
    priority: Optional[str]
    capacity: dict[str, int]
    raw: JSON = field(repr=False)

    @staticmethod
    def from_json(v: Any) -> "Instance":
        d = _obj(v)
        return Instance(
            instance_id=str(d.get("instance-id", "")),
            pool_id=_str(d.get("pool-id")),
            reservation_id=_str(d.get("reservation-id")),
            priority=_str(d.get("priority")),
            capacity=_amounts(d.get("capacity")),
            raw=d,
        )
