"""Typed views of berthd's answers. Each keeps the whole JSON object in ``raw``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

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


def _opt_int(v: Any) -> Optional[int]:
    return None if v is None else _int(v)


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

    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset({"provider-id", "pool-id"})
    # Promise's status words of every answer.
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset({"result", "message"})

    @staticmethod
    def from_json(v: Any) -> "Provider":
        d = _obj(v)
        return Provider(str(d.get("provider-id", "")), str(d.get("pool-id", "")), d)


@dataclass(frozen=True)
class CapacityChange:
    """``increase-capacity`` / ``decrease-capacity``'s answer."""

    pool_id: str
    # Reservations (`r4`) and instances (`a2`) a decrease leaves without enough capacity.
    at_risk: list[str]
    raw: JSON

    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset({"pool-id", "at-risk"})
    # Promise's status words of every answer.
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset({"result", "message"})

    @staticmethod
    def from_json(v: Any) -> "CapacityChange":
        d = _obj(v)
        risk = d.get("at-risk")
        return CapacityChange(
            str(d.get("pool-id", "")), [str(r) for r in risk] if isinstance(risk, list) else [], d
        )


@dataclass(frozen=True)
class Reservation:
    """One entry of ``query-reservation``'s ``details``."""

    reservation_id: str
    pool_id: str
    zone: str
    provider: str
    # What it reserves, what its instances hold, what is left to them, what they gave back.
    capacity: dict[str, int]
    allocated: dict[str, int]
    remaining: dict[str, int]
    released: dict[str, int]
    allocations: list[str]
    active: bool
    # `active`, `ended`, `cancelled`, `preempted`, … as the calendar names it.
    state: str
    priority: str
    tenant: Optional[str]
    # A capacity decrease left it short.
    at_risk: bool
    start: Optional[str]
    end: Optional[str]
    expiry: Optional[str]
    cancel_reason: Optional[str]
    attributes: dict[str, str]
    elements: list[str]
    raw: JSON

    # The wire keys the fields read; `test_wire.py` checks them against a live berthd.
    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset(
        {
            "reservation-id", "pool-id", "zone", "provider", "capacity", "allocated",
            "remaining", "released", "allocations", "active", "state", "priority", "tenant",
            "at_risk", "start", "end", "expiry", "cancel_reason", "attributes", "elements",
        }
    )
    # In `raw` only: the calendar's numeric id and pool key (`reservation-id`, `pool-id` say
    # the same), `amounts` (what `capacity` holds) and the record's timestamps.
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset(
        {"id", "pool", "amounts", "created_on", "modified_on"}
    )

    @staticmethod
    def from_json(v: Any) -> "Reservation":
        d = _obj(v)
        allocs = d.get("allocations")
        elements = d.get("elements")
        return Reservation(
            reservation_id=str(d.get("reservation-id", "")),
            pool_id=str(d.get("pool-id", "")),
            zone=str(d.get("zone", "")),
            provider=str(d.get("provider", "")),
            capacity=_amounts(d.get("capacity")),
            allocated=_amounts(d.get("allocated")),
            remaining=_amounts(d.get("remaining")),
            released=_amounts(d.get("released")),
            allocations=[str(a) for a in allocs] if isinstance(allocs, list) else [],
            active=d.get("active") is True,
            state=str(d.get("state", "")),
            priority=str(d.get("priority", "")),
            tenant=_str(d.get("tenant")),
            at_risk=d.get("at_risk") is True,
            start=_str(d.get("start")),
            end=_str(d.get("end")),
            expiry=_str(d.get("expiry")),
            cancel_reason=_str(d.get("cancel_reason")),
            attributes={str(k): str(x) for k, x in _obj(d.get("attributes")).items()},
            elements=[str(e) for e in elements] if isinstance(elements, list) else [],
            raw=d,
        )


@dataclass(frozen=True)
class UtilizationStep:
    """One breakpoint of a pool's capacity timeline."""

    timestamp: str
    pool_id: str
    # Per dimension: the levels (`total`, `reserved`, `usage`, `available`) or one number.
    capacity: JSON
    raw: JSON = field(repr=False)

    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset({"timestamp", "pool-id", "capacity"})
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset()

    @staticmethod
    def from_json(v: Any) -> "UtilizationStep":
        d = _obj(v)
        return UtilizationStep(
            str(d.get("timestamp", "")), str(d.get("pool-id", "")), _obj(d.get("capacity")), d
        )


@dataclass(frozen=True)
class ReservationQuery:
    """``query-reservation``'s answer."""

    reservations: list[str]
    details: list[Reservation]
    utilization: list[UtilizationStep]
    raw: JSON

    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset({"reservations", "details", "utilization"})
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset()

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
    """A dimension's capacity over a window: the worst (lowest available) instant.

    An answer to ``query_capacity(capacity=METRIC)`` holds that one metric; the others are
    ``None``.
    """

    total: Optional[int]
    reserved: Optional[int]
    usage: Optional[int]
    available: Optional[int]

    METRICS: ClassVar[tuple[str, ...]] = ("total", "reserved", "usage", "available")

    @staticmethod
    def from_json(v: Any, metric: Optional[str] = None) -> "Levels":
        if metric in Levels.METRICS and not isinstance(v, dict):
            n = _int(v)
            return Levels(*(n if m == metric else None for m in Levels.METRICS))
        d = _obj(v)
        return Levels(*(_opt_int(d.get(m)) for m in Levels.METRICS))


@dataclass(frozen=True)
class CapacityReport:
    """``query-capacity``'s answer.

    ``capacity`` maps pool id -> dimension -> value: ``Levels`` when no single ``capacity``
    metric was asked for, else the number of that metric (kept in ``raw`` as sent).
    """

    collections: list[str]
    capacity: dict[str, dict[str, Levels]]
    utilization: list[UtilizationStep]
    # The one metric asked for (`capacity=`), or None for every level.
    metric: Optional[str]
    raw: JSON

    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset({"collections", "capacity", "utilization"})
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset()

    def available(self, pool_id: str, dimension: str) -> int:
        """Available amount of ``dimension`` in ``pool_id`` (0 when the pool lacks it)."""
        lv = self.capacity.get(pool_id, {}).get(dimension)
        if lv is None:
            return 0
        if lv.available is None:
            raise ValueError(
                f"this answer holds only `{self.metric}`; query without `capacity=` or with "
                "capacity=\"available\""
            )
        return lv.available

    @staticmethod
    def from_json(v: Any, metric: Optional[str] = None) -> "CapacityReport":
        d = _obj(v)
        cap: dict[str, dict[str, Levels]] = {}
        for pool, dims in _obj(d.get("capacity")).items():
            cap[str(pool)] = {str(k): Levels.from_json(x, metric) for k, x in _obj(dims).items()}
        return CapacityReport(
            collections=[str(c) for c in d.get("collections") or []],
            capacity=cap,
            utilization=[UtilizationStep.from_json(u) for u in d.get("utilization") or []],
            metric=metric,
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
    # The end of its lifetime (its reservation's end when drawn from one).
    end: Optional[str]
    raw: JSON = field(repr=False)

    WIRE_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"instance-id", "pool-id", "reservation-id", "priority", "capacity", "end"}
    )
    # Promise's status words of every answer.
    RAW_ONLY: ClassVar[frozenset[str]] = frozenset({"result", "message"})

    @staticmethod
    def from_json(v: Any) -> "Instance":
        d = _obj(v)
        return Instance(
            instance_id=str(d.get("instance-id", "")),
            pool_id=_str(d.get("pool-id")),
            reservation_id=_str(d.get("reservation-id")),
            priority=_str(d.get("priority")),
            capacity=_amounts(d.get("capacity")),
            end=_str(d.get("end")),
            raw=d,
        )
