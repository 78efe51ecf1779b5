"""Mock Glance and Neutron for .ci/openstack.sh: just enough of their APIs for Nova to boot.

These are stand-ins, not OpenStack services: nothing of Glance or Neutron is needed for
placement. Nova reads one image's metadata from Glance and, for servers booted with
`"networks": "none"`, only lists (empty) ports and extensions from Neutron.

    python3 standins.py glance PORT    # one public image named `cirros` (id: IMAGE_ID below)
    python3 standins.py neutron PORT   # every collection is empty; writes are refused
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

IMAGE_ID = "0b5e4c1a-3f6d-4e2b-9a7c-1d8f2e6b4a90"
IMAGE = {
    "id": IMAGE_ID,
    "name": "cirros",
    "status": "active",
    "visibility": "public",
    "protected": False,
    "os_hidden": False,
    "disk_format": "qcow2",
    "container_format": "bare",
    # The sizes of CirrOS 0.6 (x86_64): fits m1.tiny's 1 GB root disk.
    "size": 21430272,
    "virtual_size": 117440512,
    "min_ram": 0,
    "min_disk": 0,
    "checksum": "0" * 32,
    "os_hash_algo": "sha512",
    "os_hash_value": "0" * 128,
    "owner": None,
    "tags": [],
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "self": "/v2/images/" + IMAGE_ID,
    "file": "/v2/images/%s/file" % IMAGE_ID,
    "schema": "/v2/schemas/image",
}
IMAGE_SCHEMA = {
    "name": "image",
    "additionalProperties": {"type": "string"},
    "properties": {k: {} for k in IMAGE},
    "links": [{"rel": "self", "href": "{self}"}],
}


class Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    kind = "stand-in"

    def reply(self, code, body):
        # Keep-alive: a request body left unread would be taken for the next request.
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def parts(self):
        return [p for p in self.path.split("?")[0].split("/") if p]

    def version(self, vid, path):
        href = "http://127.0.0.1:%d/%s/" % (self.server.server_address[1], path)
        return {"versions": [{"id": vid, "status": "CURRENT", "links": [{"rel": "self", "href": href}]}]}

    def log_message(self, fmt, *args):
        sys.stderr.write("%s stand-in: %s\n" % (self.kind, fmt % args))


class Glance(Base):
    kind = "glance"

    def do_GET(self):
        p = self.parts()
        if p in ([], ["versions"]):
            self.reply(200, self.version("v2.16", "v2"))
        elif p == ["v2", "schemas", "image"]:
            self.reply(200, IMAGE_SCHEMA)
        elif p == ["v2", "images"]:
            self.reply(200, {"images": [IMAGE], "schema": "/v2/schemas/images", "first": "/v2/images"})
        elif p == ["v2", "images", IMAGE_ID]:
            self.reply(200, IMAGE)
        else:
            self.reply(404, {"message": "no image or route %s in the Glance stand-in" % self.path})

    def refuse(self):
        self.reply(405, {"message": "the Glance stand-in is read-only"})

    do_POST = do_PUT = do_PATCH = do_DELETE = refuse


class Neutron(Base):
    kind = "neutron"

    def do_GET(self):
        p = self.parts()
        if not p:
            self.reply(200, self.version("v2.0", "v2.0"))
        elif p == ["v2.0"]:
            self.reply(200, {"resources": []})
        elif len(p) == 2 and p[0] == "v2.0":
            self.reply(200, {p[1].removesuffix(".json").replace("-", "_"): []})
        else:
            self.reply(404, {"NeutronError": {"type": "NotFound", "message": self.path, "detail": ""}})

    def refuse(self):
        self.reply(404, {"NeutronError": {"type": "NotFound",
                                          "message": "the Neutron stand-in has no resources", "detail": ""}})

    do_POST = do_PUT = do_PATCH = do_DELETE = refuse


def main():
    kinds = {"glance": Glance, "neutron": Neutron}
    if len(sys.argv) != 3 or sys.argv[1] not in kinds or not sys.argv[2].isdigit():
        sys.exit("usage: standins.py glance|neutron PORT")
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), kinds[sys.argv[1]]).serve_forever()


if __name__ == "__main__":
    main()
