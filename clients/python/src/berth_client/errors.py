"""Errors raised by the client: one class per kind of failure, each carrying what berthd said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Diagnostic:
    """One problem with a request, located by field path and (when known) line:column."""

    path: str
    line: int
    column: int
    message: str

    @staticmethod
    def from_json(v: Any) -> "Diagnostic":
        d = v if isinstance(v, dict) else {}
        return Diagnostic(
            path=str(d.get("path", "")),
            line=int(d.get("line", 0) or 0),
            column=int(d.get("column", 0) or 0),
            message=str(d.get("message", "")),
        )


class BerthError(Exception):
    """Base of every error this package raises."""


@dataclass
class ApiError(BerthError):
    """berthd answered with an error status.

    ``dialect`` says which error body it sent: ``has`` (ONAP HAS ``error_message``),
    ``promise`` (``result``/``message``), ``problem`` (RFC 9457) or ``unknown`` (not JSON).
    """

    status: int
    message: str
    dialect: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    body: Any = None

    def __post_init__(self) -> None:
        super().__init__(self.__str__())

    @property
    def path(self) -> Optional[str]:
        """The field path of the first diagnostic, if berthd named one."""
        return self.diagnostics[0].path if self.diagnostics else None

    @property
    def offers(self) -> Any:
        """On a Promise capacity conflict: what could be reserved instead."""
        return self.body.get("offers") if isinstance(self.body, dict) else None

    def __str__(self) -> str:
        where = f" at `{self.path}`" if self.path else ""
        return f"berthd answered {self.status}{where}: {self.message}"


class BadRequest(ApiError):
    """400: the request is invalid; ``path`` names the field."""


class Unauthorized(ApiError):
    """401: missing or wrong credentials."""


class Forbidden(ApiError):
    """403: these credentials may only read."""


class NotFound(ApiError):
    """404: no such plan, reservation, instance, provider or route."""


class Conflict(ApiError):
    """409: not enough capacity (Promise ``result: conflict``); see ``offers``."""


class Unavailable(ApiError):
    """503: overloaded or writes refused; try again later."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    503: Unavailable,
}


def from_response(status: int, body: Any) -> ApiError:
    """The error for an error answer: its class by status, its message by dialect."""
    cls = _BY_STATUS.get(status, ApiError)
    if isinstance(body, dict) and isinstance(body.get("error_message"), dict):
        m = body["error_message"]
        return cls(
            status,
            str(m.get("explanation", "")),
            "has",
            [Diagnostic.from_json(d) for d in m.get("diagnostics", [])],
            body,
        )
    if isinstance(body, dict) and "result" in body:
        return cls(
            status,
            str(body.get("message", "")),
            "promise",
            [Diagnostic.from_json(d) for d in body.get("diagnostics", [])],
            body,
        )
    if isinstance(body, dict) and "detail" in body:
        return cls(
            status,
            str(body.get("detail", "")),
            "problem",
            [Diagnostic.from_json(d) for d in body.get("diagnostics", [])],
            body,
        )
    return cls(status, "" if body is None else str(body), "unknown", [], body)


class TransportError(BerthError):
    """berthd could not be reached, or TLS failed, or the answer was not JSON."""


class PlanTimeout(BerthError):
    """``wait_plan`` gave up before the plan reached a final status."""

    def __init__(self, plan_id: str, status: str, seconds: float) -> None:
        super().__init__(
            f"plan `{plan_id}` is still `{status}` after {seconds:g} s; expected done, "
            "not found or error"
        )
        self.plan_id = plan_id
        self.status = status
