"""Errors through the client against a real berthd: 401 in both dialects, bearer tokens, 404,
400 with the field path, and transport failures."""

from __future__ import annotations

import pytest

from berth_client import BadRequest, Client, Forbidden, NotFound, TransportError, Unauthorized

from conftest import READ_TOKEN, TOKEN, Daemon


def test_no_or_wrong_credentials_are_401_in_the_routes_dialect(berthd: Daemon) -> None:
    with pytest.raises(Unauthorized) as has:
        Client(berthd.url).list_plans()
    assert (has.value.status, has.value.dialect) == (401, "has")
    assert has.value.message.startswith("Unauthorized: The request does not provide any HTTP")
    with pytest.raises(Unauthorized) as promise:
        Client(berthd.url, basic_auth=("ops", "wrong")).query_capacity()
    assert (promise.value.status, promise.value.dialect) == (401, "promise")
    assert "expected HTTP Basic or a bearer token" in promise.value.message
    with pytest.raises(Unauthorized):
        Client(berthd.url, token="not-" + TOKEN).list_plans()


def test_a_bearer_token_and_open_probes(berthd: Daemon) -> None:
    assert isinstance(Client(berthd.url, token=TOKEN).list_plans(), list)
    # Probes answer without credentials.
    assert Client(berthd.url).healthy() and Client(berthd.url).ready()


def test_read_only_credentials_read_and_get_403_on_writes(berthd: Daemon) -> None:
    ro = Client(berthd.url, token=READ_TOKEN)
    assert isinstance(ro.query_capacity(zone="dfw1").capacity, dict)
    with pytest.raises(Forbidden) as e:
        ro.create_reservation({"cores": 1})
    assert (e.value.status, e.value.dialect) == (403, "promise")
    assert "may only read" in e.value.message
    with pytest.raises(Forbidden):
        ro.create_plan("ro", "demands: {}")


def test_unknown_records_are_404_naming_the_field(client: Client) -> None:
    with pytest.raises(NotFound) as plan:
        client.get_plan("no-such-plan")
    assert (plan.value.status, plan.value.dialect) == (404, "has")
    with pytest.raises(NotFound) as res:
        client.cancel_reservation("r999999")
    assert (res.value.dialect, res.value.path) == ("promise", "reservation-id")
    with pytest.raises(NotFound) as prov:
        client.increase_capacity({"cores": 1}, source="ResourceProvider:nobody")
    assert prov.value.path == "source"
    assert "provider `nobody` is unknown" in prov.value.message


def test_bad_input_is_400_with_the_field_path(client: Client) -> None:
    with pytest.raises(BadRequest) as cap:
        client.create_reservation({"cores": "lots"})
    assert (cap.value.status, cap.value.dialect, cap.value.path) == (400, "promise", "capacity.cores")
    assert "expected a non-negative integer" in cap.value.message
    with pytest.raises(BadRequest) as prio:
        client.create_reservation({"cores": 1}, priority="urgent")
    assert prio.value.path == "priority"
    with pytest.raises(BadRequest) as tmpl:
        client.create_plan("bad", "homing_template_version: 2017-10-10\ndemands: {}\n", timeout=-1)
    assert (tmpl.value.dialect, tmpl.value.path) == ("has", "timeout")
    assert "berthd answered 400 at `timeout`" in str(tmpl.value)


def test_unreachable_and_tls_failures_are_transport_errors(berthd: Daemon) -> None:
    # A plain-HTTP daemon spoken to over TLS: the handshake fails.
    https = berthd.url.replace("http://", "https://")
    with pytest.raises(TransportError):
        Client(https, token=TOKEN, timeout=5).list_plans()
    with pytest.raises(TransportError):
        Client(https, token=TOKEN, timeout=5, verify=False).list_plans()
    with pytest.raises(FileNotFoundError):
        Client(https, ca_file="/nonexistent/ca.pem")
