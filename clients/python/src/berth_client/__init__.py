"""Typed client for berthd: ONAP HAS homing plans and OPNFV Promise reservations.

    from berth_client import Client
    c = Client("http://127.0.0.1:8091", basic_auth=("admin1", "plan.15"))
    plan = c.wait_plan(c.create_plan("vcpe", open("vcpe.yaml").read()).id)
"""

from .client import CAPACITY_KINDS, Client, Transport, partition_of
from .errors import (
    ApiError,
    BadRequest,
    BerthError,
    Conflict,
    Diagnostic,
    Forbidden,
    NotFound,
    PlanTimeout,
    TransportError,
    Unauthorized,
    Unavailable,
)
from .models import (
    FINAL_STATUSES,
    Candidate,
    CapacityChange,
    CapacityReport,
    Instance,
    Levels,
    Placement,
    Plan,
    Provider,
    Reservation,
    ReservationQuery,
    UtilizationStep,
)

__version__ = "0.1.0"

__all__ = [
    "CAPACITY_KINDS",
    "FINAL_STATUSES",
    "ApiError",
    "BadRequest",
    "BerthError",
    "Candidate",
    "CapacityChange",
    "CapacityReport",
    "Client",
    "Conflict",
    "Diagnostic",
    "Forbidden",
    "Instance",
    "Levels",
    "NotFound",
    "Placement",
    "Plan",
    "PlanTimeout",
    "Provider",
    "Reservation",
    "ReservationQuery",
    "Transport",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "UtilizationStep",
    "partition_of",
]
