"""TLS: a berthd serving HTTPS with a certificate from a private CA (tests/tls, test-only keys):
trusted with ``ca_file``, refused with the system roots, accepted unverified with verify=False."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth_client import Client, TransportError

from conftest import PASSWORD, TOKEN, USER, Daemon, running_berthd

TLS = Path(__file__).parent / "tls"


@pytest.fixture(scope="module")
def https_berthd() -> Iterator[Daemon]:
    env = {"BERTH_TLS_CERT": str(TLS / "cert.pem"), "BERTH_TLS_KEY": str(TLS / "key.pem")}
    with running_berthd(env, scheme="https") as d:
        c = Client(d.url, token=TOKEN, ca_file=str(TLS / "ca.pem"))
        deadline = time.monotonic() + 30
        while not c.ready():
            assert time.monotonic() < deadline, "berthd (TLS) never answered /readyz"
            time.sleep(0.05)
        yield d


def test_a_private_ca_is_trusted_with_ca_file(https_berthd: Daemon) -> None:
    c = Client(https_berthd.url, basic_auth=(USER, PASSWORD), ca_file=str(TLS / "ca.pem"))
    assert c.list_plans() == []
    assert c.query_capacity(zone="dfw1").available("dfw1/inventory", "cores") == 4096  # the inventory's vcpu, in Promise's name


def test_without_the_ca_the_certificate_is_refused(https_berthd: Daemon) -> None:
    with pytest.raises(TransportError) as e:
        Client(https_berthd.url, token=TOKEN).list_plans()
    assert "CERTIFICATE_VERIFY_FAILED" in str(e.value)


def test_verify_false_skips_the_check(https_berthd: Daemon) -> None:
    assert Client(https_berthd.url, token=TOKEN, verify=False).ready()
    assert Client(https_berthd.url, token=TOKEN, verify=False).list_plans() == []
