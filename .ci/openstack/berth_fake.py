"""Nova virt driver for .ci/openstack.sh: a fake hypervisor of a chosen size.

Installed into the venv's nova/virt/ (Nova loads compute drivers from that package only) and
selected with `compute_driver = berth_fake.SizedFakeDriver`. Each nova-compute process reads
its size from BERTH_FAKE_VCPUS, BERTH_FAKE_MEMORY_MB and BERTH_FAKE_DISK_GB. The base class
keeps a stable node identity in state_path, so a compute can be restarted.
"""

import os

from nova.virt import fake


def _size(name):
    raw = os.environ.get(name, "")
    if not raw.isdigit() or int(raw) <= 0:
        raise ValueError(
            "%s=%r; expected a positive integer (set by .ci/openstack.sh from BERTH_OS_COMPUTES)"
            % (name, raw))
    return int(raw)


class SizedFakeDriver(fake.FakeDriverWithoutFakeNodes):
    vcpus = _size("BERTH_FAKE_VCPUS")
    memory_mb = _size("BERTH_FAKE_MEMORY_MB")
    local_gb = _size("BERTH_FAKE_DISK_GB")
