"""The client: one method per berthd operation (HAS plans, Promise reservations, probes)."""

from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Union

from .errors import BerthError, PlanTimeout, TransportError, from_response
from .models import (
    CapacityChange,
    CapacityReport,
    Instance,
    Plan,
    Provider,
    ReservationQuery,
)

Quantity = Union[int, str]
Time = Union[datetime, str]
# What a transport returns: status and decoded JSON body (None when empty), optionally with the
# response headers (lower-case names): the client reads `x-berth-forwarded-to` from them.
Response = Union[tuple[int, Any], tuple[int, Any, Mapping[str, str]]]
Transport = Callable[[str, str, Optional[bytes], dict[str, str]], Response]

# Response header of a write a daemon relayed to its partition's holder.
FORWARDED_TO = "x-berth-forwarded-to"

CAPACITY_KINDS = ("compute", "network", "storage")


def _time(t: Optional[Time], name: str) -> Optional[str]:
    """An instant as RFC 3339 in UTC; a naive ``datetime`` is refused: its zone is a guess."""
    if t is None or isinstance(t, str):
        return t
    if t.tzinfo is None or t.utcoffset() is None:
        raise ValueError(
            f"`{name}` is the naive datetime {t.isoformat()}; expected a timezone-aware one "
            "(e.g. datetime.now(timezone.utc), or .replace(tzinfo=timezone.utc))"
        )
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def partition_of(key: str, body: Mapping[str, Any]) -> Optional[str]:
    """The partition a write's body names under partition key ``key`` (``zone``, ``provider``,
    ``pool``; as berthd's forwarder reads it): a qualified ``reservation-id``/``instance-id``
    (``<partition>:r<n>``), else its ``zone`` (default ``default``) with ``provider`` or a
    ``source`` pool or provider. ``None``: it names none, or a zone whose pools may lie in
    several partitions."""
    for k in ("reservation-id", "instance-id"):
        v = body.get(k)
        if isinstance(v, str):
            return v.rsplit(":", 1)[0] if ":" in v else None

    def text(k: str) -> Optional[str]:
        v = body.get(k)
        return v if isinstance(v, str) else None

    zone: Optional[str] = text("zone")
    provider: Optional[str] = text("provider") or text("provider-id")
    src = body.get("source")
    if isinstance(src, Mapping):
        src = src.get("id")
    if isinstance(src, str):
        if src.startswith("ResourceProvider:"):
            provider = src[len("ResourceProvider:") :]
        else:
            pool = src[len("ResourcePool:") :] if src.startswith("ResourcePool:") else src
            if "/" in pool:
                zone, provider = pool.split("/", 1)
            else:
                provider = pool
    if zone is None and provider is None:
        return None
    if key == "zone":
        return zone or "default"
    if provider is None:
        return None
    return provider if key == "provider" else f"{zone or 'default'}~{provider}"


def _compact(d: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that are set: berthd applies its defaults to absent ones."""
    return {k: v for k, v in d.items() if v is not None}


class Client:
    """A berthd client over HTTP(S) with the standard library only.

    ``basic_auth=(user, password)`` or ``token=...`` authenticate; ``verify=False`` skips TLS
    verification (tests only), ``ca_file`` trusts a private CA. Every error status raises an
    :class:`~berth_client.errors.ApiError` subclass carrying the status, the error body's
    dialect, its message and the field path berthd named.

    In a cluster, ``route=True`` (the default) sends each write straight to the daemon holding
    its partition, by the map ``GET /v1/cluster`` publishes: the map is read when an answer
    says the write was forwarded (``x-berth-forwarded-to``) or on a 503, so a single daemon
    never costs a map request; a holder that cannot be reached is dropped and ``base_url``
    takes the write (which forwards it).
    """

    def __init__(
        self,
        base_url: str,
        *,
        basic_auth: Optional[tuple[str, str]] = None,
        token: Optional[str] = None,
        verify: bool = True,
        ca_file: Optional[str] = None,
        timeout: float = 30.0,
        transport: Optional[Transport] = None,
        route: bool = True,
    ) -> None:
        if basic_auth is not None and token is not None:
            raise ValueError("give basic_auth or token, not both")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._headers = {"Accept": "application/json"}
        if basic_auth is not None:
            raw = f"{basic_auth[0]}:{basic_auth[1]}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        elif token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._ssl: Optional[ssl.SSLContext] = None
        if self.base_url.startswith("https://"):
            ctx = ssl.create_default_context(cafile=ca_file)
            if not verify:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            self._ssl = ctx
        self._transport: Transport = transport or self._urllib
        self._route = route
        self._map: Optional[dict[str, Any]] = None

    # -- plumbing -------------------------------------------------------------------------

    def _urllib(
        self, method: str, url: str, body: Optional[bytes], headers: dict[str, str]
    ) -> Response:
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as r:
                status, raw, got = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, raw, got = e.code, e.read(), e.headers
        except (urllib.error.URLError, OSError) as e:
            raise TransportError(f"cannot reach {url}: {e}") from e
        names = {k.lower(): v for k, v in got.items()} if got is not None else {}
        if not raw:
            return status, None, names
        try:
            return status, json.loads(raw), names
        except ValueError:
            return status, raw.decode("utf-8", "replace"), names

    def cluster(self) -> dict[str, Any]:
        """``GET /v1/cluster``: the partition map (``partition_key``, and per partition its
        ``holder``, ``url``, fencing ``token`` and ``expires_at``); no ``node`` outside a
        cluster."""
        v = self.request("GET", "/v1/cluster")
        return v if isinstance(v, dict) else {}

    def _base_for(self, body: Mapping[str, Any]) -> str:
        """Where a write with ``body`` goes: its partition's holder by the map, else
        ``base_url``."""
        m = self._map
        if not self._route or not m or not m.get("node"):
            return self.base_url
        parts = m.get("partitions") or []
        if m.get("partition_key") == "none":
            return str(parts[0]["url"]).rstrip("/") if parts else self.base_url
        p = partition_of(str(m.get("partition_key")), body)
        for h in parts:
            if p is not None and h.get("partition") == p:
                return str(h["url"]).rstrip("/")
        return self.base_url

    def _send(
        self, method: str, url: str, data: Optional[bytes], headers: dict[str, str]
    ) -> tuple[int, Any, Mapping[str, str]]:
        r = self._transport(method, url, data, headers)
        if len(r) == 3:
            return r
        return r[0], r[1], {}

    def request(
        self,
        method: str,
        path: str,
        body: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        """Sends one request; the decoded answer, or an ``ApiError`` for an error status."""
        headers = {**self._headers, **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        write = method not in ("GET", "HEAD", "OPTIONS") and body is not None
        base = self._base_for(body) if write and body is not None else self.base_url
        try:
            status, answer, got = self._send(method, base + path, data, headers)
        except TransportError:
            if base == self.base_url:
                raise
            # The holder is gone: the entry daemon forwards to whoever holds it now.
            self._map = None
            status, answer, got = self._send(method, self.base_url + path, data, headers)
        if write and self._route and (status == 503 or FORWARDED_TO in got):
            try:
                self._map = self.cluster()
            except BerthError:
                self._map = None
        if status >= 400:
            raise from_response(status, answer)
        return answer

    # -- probes ---------------------------------------------------------------------------

    def healthy(self) -> bool:
        """``GET /healthz`` answers 200 (the process serves)."""
        try:
            self.request("GET", "/healthz")
            return True
        except BerthError:
            return False

    def ready(self) -> bool:
        """``GET /readyz`` answers 200 (the store is open and the services run)."""
        try:
            self.request("GET", "/readyz")
            return True
        except BerthError:
            return False

    # -- ONAP HAS plans -------------------------------------------------------------------

    def create_plan(
        self,
        name: str,
        template: Union[str, Mapping[str, Any]],
        *,
        timeout: int = 60,
        num_solution: Union[int, str] = 1,
        limit: int = 1000,
        files: Optional[Mapping[str, str]] = None,
        plan_id: Optional[str] = None,
    ) -> Plan:
        """``POST /v1/plans``: accepts a plan (YAML/JSON text or an object); solving starts."""
        body = _compact(
            {
                "name": name,
                "id": plan_id,
                "template": template,
                "num_solution": num_solution,
                "timeout": timeout,
                "limit": limit,
                "files": dict(files) if files is not None else None,
            }
        )
        return Plan.from_json(self.request("POST", "/v1/plans", body))

    def get_plan(self, plan_id: str) -> Plan:
        """``GET /v1/plans/{id}``: the plan's status and recommendations."""
        return self._read_plan(plan_id, None)

    def _read_plan(self, plan_id: str, headers: Optional[Mapping[str, str]]) -> Plan:
        v = self.request(
            "GET", "/v1/plans/" + urllib.parse.quote(plan_id, safe=""), None, headers
        )
        plans = v.get("plans") if isinstance(v, dict) else None
        if not isinstance(plans, list) or not plans:
            raise TransportError(f"plan `{plan_id}`: expected `plans[0]` in {v!r}")
        return Plan.from_json(plans[0])

    poll_plan = get_plan

    def list_plans(self) -> list[Plan]:
        """``GET /v1/plans``: every plan."""
        v = self.request("GET", "/v1/plans")
        plans = v.get("plans") if isinstance(v, dict) else None
        return [Plan.from_json(p) for p in plans or []]

    def delete_plan(self, plan_id: str) -> None:
        """``DELETE /v1/plans/{id}``."""
        self.request("DELETE", "/v1/plans/" + urllib.parse.quote(plan_id, safe=""))

    def triage(self, plan_id: str) -> dict[str, Any]:
        """``GET /v1/triage_tool/{id}``: why candidates were removed."""
        v = self.request("GET", "/v1/triage_tool/" + urllib.parse.quote(plan_id, safe=""))
        return v if isinstance(v, dict) else {}

    def wait_plan(
        self,
        plan_id: str,
        *,
        timeout: float = 60.0,
        interval: float = 0.05,
        max_interval: float = 2.0,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wait: float = 20.0,
    ) -> Plan:
        """Waits until the plan is ``done``, ``not found`` or ``error``.

        Each read asks the daemon to answer once the plan is final (``Prefer: wait``, at most
        ``wait`` seconds and what is left of ``timeout``); a daemon that answers sooner is read
        again after ``interval`` seconds, multiplied by ``backoff`` up to ``max_interval``.
        Raises :class:`PlanTimeout` after ``timeout`` seconds.
        """
        started = clock()
        delay = interval
        while True:
            left = timeout - (clock() - started)
            hold = int(min(wait, left))
            plan = self._read_plan(plan_id, {"Prefer": f"wait={hold}"} if hold > 0 else None)
            if plan.finished:
                return plan
            left = timeout - (clock() - started)
            if left <= 0:
                raise PlanTimeout(plan_id, plan.status, timeout)
            sleep(min(delay, left))
            delay = min(delay * backoff, max_interval)

    # -- OPNFV Promise --------------------------------------------------------------------

    def _promise(
        self, op: str, body: Mapping[str, Any], headers: Optional[Mapping[str, str]] = None
    ) -> dict[str, Any]:
        v = self.request("POST", "/" + op, body, headers)
        return v if isinstance(v, dict) else {}

    def add_provider(
        self,
        provider_type: str = "openstack",
        *,
        name: Optional[str] = None,
        tenant: Optional[Mapping[str, str]] = None,
        endpoint: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        region: Optional[str] = None,
        flavors: Optional[Sequence[Mapping[str, Any]]] = None,
    ) -> Provider:
        """``add-provider``: registers a provider; its pool is ``default/<provider-id>``.
        ``name`` is what the console shows for it (the id otherwise)."""
        body = _compact(
            {
                "provider-type": provider_type,
                "name": name,
                "tenant": dict(tenant) if tenant is not None else {},
                "endpoint": endpoint,
                "username": username,
                "password": password,
                "region": region,
                "flavors": [dict(f) for f in flavors] if flavors is not None else None,
            }
        )
        return Provider.from_json(self._promise("add-provider", body))

    def _capacity(
        self,
        op: str,
        capacity: Mapping[str, Quantity],
        source: Optional[Union[str, Mapping[str, str]]],
        zone: Optional[str],
        provider: Optional[str],
        start: Optional[Time],
        end: Optional[Time],
    ) -> CapacityChange:
        body = _compact(
            {
                "capacity": dict(capacity),
                "source": dict(source) if isinstance(source, Mapping) else source,
                "zone": zone,
                "provider": provider,
                "start": _time(start, "start"),
                "end": _time(end, "end"),
            }
        )
        return CapacityChange.from_json(self._promise(op, body))

    def increase_capacity(
        self,
        capacity: Mapping[str, Quantity],
        *,
        source: Optional[Union[str, Mapping[str, str]]] = None,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        start: Optional[Time] = None,
        end: Optional[Time] = None,
    ) -> CapacityChange:
        """``increase-capacity`` of a pool (``source``: pool id, provider id, ...)."""
        return self._capacity(
            "increase-capacity", capacity, source, zone, provider, start, end
        )

    def decrease_capacity(
        self,
        capacity: Mapping[str, Quantity],
        *,
        source: Optional[Union[str, Mapping[str, str]]] = None,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        start: Optional[Time] = None,
        end: Optional[Time] = None,
    ) -> CapacityChange:
        """``decrease-capacity``: ``at_risk`` lists reservations left short."""
        return self._capacity(
            "decrease-capacity", capacity, source, zone, provider, start, end
        )

    def query_capacity(
        self,
        *,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        capacity: Optional[str] = None,
        start: Optional[Time] = None,
        end: Optional[Time] = None,
        show_utilization: Optional[bool] = None,
    ) -> CapacityReport:
        """``query-capacity``: per pool and dimension the levels over the window.

        ``capacity`` (``total``, ``reserved``, ``usage``, ``available``) asks for one metric;
        leave it out to get every level as :class:`~berth_client.models.Levels`.
        """
        body = _compact(
            {
                "zone": zone,
                "provider": provider,
                "capacity": capacity,
                "window": _window(start, end, None),
                "show-utilization": show_utilization,
            }
        )
        return CapacityReport.from_json(self._promise("query-capacity", body), metric=capacity)

    def create_reservation(
        self,
        capacity: Mapping[str, Quantity],
        *,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        start: Optional[Time] = None,
        end: Optional[Time] = None,
        expiry: Optional[Time] = None,
        priority: Optional[str] = None,
        tenant: Optional[str] = None,
        elements: Optional[Sequence[str]] = None,
        idempotency_key: Optional[str] = None,
    ) -> str:
        """``create-reservation``: the new reservation's id; ``Conflict`` when it does not fit."""
        body = _reservation_body(
            None, capacity, zone, provider, start, end, expiry, priority, tenant, elements
        )
        v = self._promise_keyed("create-reservation", body, idempotency_key)
        return str(v.get("reservation-id", ""))

    def update_reservation(
        self,
        reservation_id: str,
        *,
        capacity: Optional[Mapping[str, Quantity]] = None,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        start: Optional[Time] = None,
        end: Optional[Time] = None,
        expiry: Optional[Time] = None,
        priority: Optional[str] = None,
        tenant: Optional[str] = None,
        elements: Optional[Sequence[str]] = None,
    ) -> None:
        """``update-reservation``: the fields given replace the reservation's."""
        body = _reservation_body(
            reservation_id, capacity, zone, provider, start, end, expiry, priority, tenant, elements
        )
        self._promise("update-reservation", body)

    def cancel_reservation(self, reservation_id: str) -> None:
        """``cancel-reservation``."""
        self._promise("cancel-reservation", {"reservation-id": reservation_id})

    def query_reservation(
        self,
        *,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        start: Optional[Time] = None,
        end: Optional[Time] = None,
        scope: Optional[str] = None,
        without: Optional[Sequence[str]] = None,
        elements_some: Optional[Sequence[str]] = None,
        elements_every: Optional[Sequence[str]] = None,
        show_utilization: Optional[bool] = None,
    ) -> ReservationQuery:
        """``query-reservation``: reservations (and the reserved timeline) matching filters."""
        elements = _compact(
            {
                "some": list(elements_some) if elements_some is not None else None,
                "every": list(elements_every) if elements_every is not None else None,
            }
        )
        body = _compact(
            {
                "zone": zone,
                "provider": provider,
                "window": _window(start, end, scope),
                "without": list(without) if without is not None else None,
                "elements": elements or None,
                "show-utilization": show_utilization,
            }
        )
        return ReservationQuery.from_json(self._promise("query-reservation", body))

    def create_instance(
        self,
        *,
        reservation_id: Optional[str] = None,
        provider_id: Optional[str] = None,
        zone: Optional[str] = None,
        flavor: Optional[str] = None,
        capacity: Optional[Mapping[str, Quantity]] = None,
        name: Optional[str] = None,
        image: Optional[str] = None,
        end: Optional[Time] = None,
        idempotency_key: Optional[str] = None,
    ) -> Instance:
        """``create-instance``: from a reservation (``reservation_id``) or a pool's free part."""
        body = _compact(
            {
                "reservation-id": reservation_id,
                "provider-id": provider_id,
                "zone": zone,
                "flavor": flavor,
                "capacity": dict(capacity) if capacity is not None else None,
                "name": name,
                "image": image,
                "end": _time(end, "end"),
            }
        )
        return Instance.from_json(self._promise_keyed("create-instance", body, idempotency_key))

    def destroy_instance(self, instance_id: str) -> None:
        """``destroy-instance``: gives the instance's capacity back."""
        self._promise("destroy-instance", {"instance-id": instance_id})

    def subscribe_capacity(
        self,
        kind: str,
        callback: str,
        threshold: Quantity,
        *,
        source: Optional[Union[str, Mapping[str, str]]] = None,
        zone: Optional[str] = None,
        provider: Optional[str] = None,
        dimension: Optional[str] = None,
    ) -> str:
        """``POST /capacity/{kind}/subscribe``: notify ``callback`` when available drops below
        ``threshold``; the subscription id."""
        if kind not in CAPACITY_KINDS:
            raise ValueError(f"capacity kind `{kind}`; expected one of {', '.join(CAPACITY_KINDS)}")
        body = _compact(
            {
                "callback": callback,
                "threshold": threshold,
                "source": dict(source) if isinstance(source, Mapping) else source,
                "zone": zone,
                "provider": provider,
                "dimension": dimension,
            }
        )
        v = self.request("POST", f"/capacity/{kind}/subscribe", body)
        return str(v.get("subscription-id", "")) if isinstance(v, dict) else ""

    def unsubscribe_capacity(self, kind: str, subscription_id: str) -> None:
        """``DELETE /capacity/{kind}/subscribe/{id}``."""
        sid = urllib.parse.quote(subscription_id, safe="")
        self.request("DELETE", f"/capacity/{kind}/subscribe/{sid}")

    def subscribe_reservations(
        self,
        callback: str,
        *,
        reservation_id: Optional[str] = None,
        zone: Optional[str] = None,
        events: Optional[Sequence[str]] = None,
    ) -> str:
        """``POST /reservation/subscribe``: the subscription id."""
        filters = _compact(
            {
                "reservation-id": reservation_id,
                "zone": zone,
                "events": list(events) if events is not None else None,
            }
        )
        v = self.request(
            "POST", "/reservation/subscribe", {"callback": callback, "filters": filters}
        )
        return str(v.get("subscription-id", "")) if isinstance(v, dict) else ""

    def unsubscribe_reservations(self, subscription_id: str) -> None:
        """``DELETE /reservation/subscribe/{id}``."""
        sid = urllib.parse.quote(subscription_id, safe="")
        self.request("DELETE", f"/reservation/subscribe/{sid}")

    def _promise_keyed(
        self, op: str, body: Mapping[str, Any], key: Optional[str]
    ) -> dict[str, Any]:
        # A retried request with the same key is answered once (berthd keeps the key).
        return self._promise(op, body, {"Idempotency-Key": key} if key is not None else None)

def _window(start: Optional[Time], end: Optional[Time], scope: Optional[str]) -> Optional[dict[str, Any]]:
    w = _compact({"start": _time(start, "start"), "end": _time(end, "end"), "scope": scope})
    return w or None


def _reservation_body(
    reservation_id: Optional[str],
    capacity: Optional[Mapping[str, Quantity]],
    zone: Optional[str],
    provider: Optional[str],
    start: Optional[Time],
    end: Optional[Time],
    expiry: Optional[Time],
    priority: Optional[str],
    tenant: Optional[str],
    elements: Optional[Sequence[str]],
) -> dict[str, Any]:
    return _compact(
        {
            "reservation-id": reservation_id,
            "capacity": dict(capacity) if capacity is not None else None,
            "zone": zone,
            "provider": provider,
            "start": _time(start, "start"),
            "end": _time(end, "end"),
            "expiry": _time(expiry, "expiry"),
            "priority": priority,
            "tenant": tenant,
            "elements": list(elements) if elements is not None else None,
        }
    )
