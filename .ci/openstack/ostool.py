"""REST steps of .ci/openstack.sh: Keystone setup, flavors, waits, the smoke test.

Standard library only. Credentials and URLs come from the variables `.ci/openstack.sh env`
prints (OS_AUTH_URL, OS_USERNAME, ..., BERTH_TEST_OS_*), so every command also runs by hand
after `eval "$(bash .ci/openstack.sh env)"`:

    python3 ostool.py keystone-setup SERVICE_PASSWORD USER... -- NAME:TYPE:URL[|DESCRIPTION]...
    python3 ostool.py flavors | wait-computes SECONDS | smoke | freepool
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

PLACEMENT_MV = "placement 1.39"
# 2.74: `host` in the server create body; networks "none" needs 2.37.
COMPUTE_MV = "compute 2.74"

# The flavors of a stock OpenStack install, with their usual ids.
FLAVORS = [
    ("1", "m1.tiny", 1, 512, 1),
    ("2", "m1.small", 1, 2048, 20),
    ("3", "m1.medium", 2, 4096, 40),
    ("4", "m1.large", 4, 8192, 80),
    ("5", "m1.xlarge", 8, 16384, 160),
]


class Fail(Exception):
    pass


def env(name):
    value = os.environ.get(name)
    if not value:
        raise Fail("%s is not set; expected the exports of `bash .ci/openstack.sh env`" % name)
    return value


def call(method, url, body=None, token=None, headers=None, timeout=30):
    """Returns (status, headers, parsed JSON or None); HTTP errors are answers, not raised."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("X-Auth-Token", token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            return resp.status, resp.headers, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return e.code, e.headers, parsed


def expect(what, status, body, *ok):
    if status not in ok:
        raise Fail("%s: HTTP %d, expected %s: %s" % (what, status, "/".join(map(str, ok)), body))
    return body


def token(project=None, username=None, password=None):
    auth = {
        "identity": {
            "methods": ["password"],
            "password": {"user": {
                "name": username or env("OS_USERNAME"),
                "domain": {"name": os.environ.get("OS_USER_DOMAIN_NAME", "Default")},
                "password": password or env("OS_PASSWORD"),
            }},
        },
        "scope": {"project": {
            "name": project or env("OS_PROJECT_NAME"),
            "domain": {"name": os.environ.get("OS_PROJECT_DOMAIN_NAME", "Default")},
        }},
    }
    status, headers, body = call("POST", env("OS_AUTH_URL") + "/auth/tokens", {"auth": auth})
    expect("keystone token", status, body, 201)
    return headers["X-Subject-Token"], body["token"]


def find_one(url, tok, key, what):
    status, _, body = call("GET", url, token=tok)
    items = expect(what, status, body, 200)[key]
    return items[0] if items else None


def keystone_setup(args):
    """The service project, service users (admin + service roles there) and the catalog."""
    if "--" not in args or len(args) < 2:
        raise Fail("usage: keystone-setup SERVICE_PASSWORD USER... -- NAME:TYPE:URL[|DESCRIPTION]...")
    password, users, endpoints = args[0], args[1:args.index("--")], args[args.index("--") + 1:]
    ks = env("OS_AUTH_URL")
    region = env("OS_REGION_NAME")
    tok, _ = token()
    project = find_one(ks + "/projects?name=service&domain_id=default", tok, "projects", "projects")
    if project is None:
        status, _, body = call("POST", ks + "/projects", {"project": {
            "name": "service", "domain_id": "default", "description": "OpenStack service users"}}, tok)
        project = expect("create project service", status, body, 201)["project"]
    roles = {}
    for name in ("admin", "service"):
        role = find_one(ks + "/roles?name=" + name, tok, "roles", "roles")
        if role is None:
            status, _, body = call("POST", ks + "/roles", {"role": {"name": name}}, tok)
            role = expect("create role " + name, status, body, 201)["role"]
        roles[name] = role["id"]
    for name in users:
        user = find_one(ks + "/users?name=%s&domain_id=default" % name, tok, "users", "users")
        if user is None:
            status, _, body = call("POST", ks + "/users", {"user": {
                "name": name, "domain_id": "default", "password": password,
                "default_project_id": project["id"]}}, tok)
            user = expect("create user " + name, status, body, 201)["user"]
        for role in roles.values():
            status, _, body = call("PUT", "%s/projects/%s/users/%s/roles/%s"
                                   % (ks, project["id"], user["id"], role), token=tok)
            expect("grant role to " + name, status, body, 204)
    for spec in endpoints:
        name, kind, rest = spec.split(":", 2)
        # URLs hold colons: the description, if any, follows the last "|".
        url, _, description = rest.partition("|")
        service = find_one(ks + "/services?type=" + kind, tok, "services", "services")
        if service is None:
            status, _, body = call("POST", ks + "/services", {"service": {
                "name": name, "type": kind, "description": description or name}}, tok)
            service = expect("create service " + name, status, body, 201)["service"]
        have = find_one(ks + "/endpoints?service_id=" + service["id"], tok, "endpoints", "endpoints")
        if have is not None:
            continue
        for interface in ("public", "internal"):
            status, _, body = call("POST", ks + "/endpoints", {"endpoint": {
                "service_id": service["id"], "interface": interface, "url": url,
                "region_id": region}}, tok)
            expect("create %s endpoint of %s" % (interface, name), status, body, 201)


def compute(path, method="GET", body=None, tok=None, mv=COMPUTE_MV):
    return call(method, env("BERTH_TEST_OS_COMPUTE_URL") + path, body, tok,
                {"OpenStack-API-Version": mv})


def placement(path, tok, method="GET", body=None):
    return call(method, env("BERTH_TEST_OS_PLACEMENT_URL") + path, body, tok,
                {"OpenStack-API-Version": PLACEMENT_MV})


def flavors(_args):
    tok, _ = token()
    for fid, name, vcpus, ram, disk in FLAVORS:
        status, _, body = compute("/flavors", "POST", {"flavor": {
            "id": fid, "name": name, "vcpus": vcpus, "ram": ram, "disk": disk}}, tok)
        expect("create flavor " + name, status, body, 200, 409)


def computes():
    """The hosts of BERTH_TEST_OS_COMPUTES: [(name, vcpus, memory_mb, disk_gb)]."""
    hosts = []
    for item in env("BERTH_TEST_OS_COMPUTES").split():
        name, vcpus, ram, disk = item.split(":")
        hosts.append((name, int(vcpus), int(ram), int(disk)))
    return hosts


def providers(tok):
    status, _, body = placement("/resource_providers", tok)
    return {rp["name"]: rp for rp in expect("list resource providers", status, body, 200)["resource_providers"]}


def inventory(tok, rp_uuid):
    status, _, body = placement("/resource_providers/%s/inventories" % rp_uuid, tok)
    return expect("inventories of " + rp_uuid, status, body, 200)["inventories"]


def inventory_problems(tok, rps):
    problems = []
    for name, vcpus, ram, disk in computes():
        if name not in rps:
            problems.append("no resource provider `%s` in Placement" % name)
            continue
        inv = inventory(tok, rps[name]["uuid"])
        for rc, want in (("VCPU", vcpus), ("MEMORY_MB", ram), ("DISK_GB", disk)):
            got = inv.get(rc, {}).get("total")
            if got != want:
                problems.append("%s: %s total %s, expected %d" % (name, rc, got, want))
    return problems


def wait_computes(args):
    """Until Placement holds every configured compute with its inventory, or the deadline."""
    deadline = time.monotonic() + float(args[0] if args else 120)
    tok, _ = token()
    while True:
        problems = inventory_problems(tok, providers(tok))
        if not problems:
            return
        if time.monotonic() > deadline:
            raise Fail("computes not in Placement in time: " + "; ".join(problems))
        time.sleep(0.5)


def freepool(_args):
    """Blazar keeps unreserved hosts in an aggregate it expects to exist."""
    tok, _ = token()
    status, _, body = compute("/os-aggregates", tok=tok)
    names = [a["name"] for a in expect("list aggregates", status, body, 200)["aggregates"]]
    if "freepool" not in names:
        status, _, body = compute("/os-aggregates", "POST", {"aggregate": {"name": "freepool"}}, tok)
        expect("create aggregate freepool", status, body, 200)


def wait_server(tok, sid, deadline_s):
    deadline = time.monotonic() + deadline_s
    while True:
        status, _, body = compute("/servers/" + sid, tok=tok)
        server = expect("show server", status, body, 200)["server"]
        if server["status"] in ("ACTIVE", "ERROR") or time.monotonic() > deadline:
            return server
        time.sleep(0.25)


def smoke(_args):
    """Token, providers and inventories, a boot on a chosen host with its allocation, a delete."""
    checks = []

    def ok(msg):
        checks.append(msg)
        print("openstack smoke: ok: " + msg, flush=True)

    tok, body = token()
    catalog = {s["type"] for s in body.get("catalog", [])}
    missing = {"identity", "placement", "compute"} - catalog
    if missing:
        raise Fail("service catalog lacks %s; it has %s" % (sorted(missing), sorted(catalog)))
    ok("keystone token for %s, catalog %s" % (env("OS_USERNAME"), ", ".join(sorted(catalog))))

    rps = providers(tok)
    problems = inventory_problems(tok, rps)
    hosts = computes()
    if problems:
        raise Fail("; ".join(problems))
    if len(rps) != len(hosts):
        raise Fail("Placement has %d resource providers %s, expected the %d computes"
                   % (len(rps), sorted(rps), len(hosts)))
    ok("placement lists %d computes with their inventories: %s"
       % (len(hosts), env("BERTH_TEST_OS_COMPUTES")))

    host = hosts[-1][0]
    rp = rps[host]["uuid"]
    status, _, body = compute("/servers", "POST", {"server": {
        "name": "berth-smoke", "flavorRef": "1", "imageRef": env("BERTH_TEST_OS_IMAGE_ID"),
        "networks": "none", "host": host}}, tok)
    sid = expect("boot m1.tiny on " + host, status, body, 202)["server"]["id"]
    try:
        t0 = time.monotonic()
        server = wait_server(tok, sid, 60)
        if server["status"] != "ACTIVE":
            raise Fail("server %s is %s, expected ACTIVE; fault: %s"
                       % (sid, server["status"], server.get("fault")))
        if server.get("OS-EXT-SRV-ATTR:host") != host:
            raise Fail("server %s is on %s, expected %s" % (sid, server.get("OS-EXT-SRV-ATTR:host"), host))
        ok("server %s ACTIVE on %s in %.1f s" % (sid, host, time.monotonic() - t0))
        status, _, body = placement("/allocations/" + sid, tok)
        allocs = expect("allocations of the server", status, body, 200)["allocations"]
        want = {rp: {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}
        got = {k: v["resources"] for k, v in allocs.items()}
        if got != want:
            raise Fail("allocations of %s are %s, expected %s" % (sid, got, want))
        ok("placement holds its allocation on %s: %s" % (host, want[rp]))
    finally:
        status, _, body = compute("/servers/" + sid, "DELETE", tok=tok)
        expect("delete server", status, body, 204, 404)
    deadline = time.monotonic() + 60
    while True:
        status, _, _ = compute("/servers/" + sid, tok=tok)
        if status == 404:
            break
        if time.monotonic() > deadline:
            raise Fail("server %s still there 60 s after its delete" % sid)
        time.sleep(0.25)
    status, _, body = placement("/allocations/" + sid, tok)
    left = expect("allocations after delete", status, body, 200)["allocations"]
    if left:
        raise Fail("allocations of deleted server %s remain: %s" % (sid, left))
    ok("server deleted and its allocation removed")
    if os.environ.get("BERTH_TEST_OS_BLAZAR_URL"):
        status, _, body = call("GET", env("BERTH_TEST_OS_BLAZAR_URL") + "/leases", token=tok)
        expect("blazar lease list", status, body, 200)
        ok("blazar lists %d leases" % len(body["leases"]))
    print("openstack smoke: all %d checks passed" % len(checks))


COMMANDS = {
    "keystone-setup": keystone_setup,
    "flavors": flavors,
    "wait-computes": wait_computes,
    "freepool": freepool,
    "smoke": smoke,
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit("usage: ostool.py %s [ARGS]" % "|".join(COMMANDS))
    try:
        COMMANDS[sys.argv[1]](sys.argv[2:])
    except (Fail, OSError) as e:
        sys.exit("ostool %s: %s" % (sys.argv[1], e))


if __name__ == "__main__":
    main()
