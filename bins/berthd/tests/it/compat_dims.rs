//! Issue 45.1 against the real daemon: an inventory naming capacity as Nova does (`vcpus`,
//! `ram`, `disk`) seeds pools that Promise clients reserve from in Promise's names and that
//! flavors (sized through HPA `basicCapabilities` with units) fit; answers carry Promise's
//! names; a request naming one dimension twice is refused.

use serde_json::json;

use super::{client, free_port, post, site, start, terminate};
use crate::db::Db;

const NOVA_INVENTORY: &str = "
candidates:
  - candidate_id: nova1
    inventory_type: cloud
    capacity: {vcpus: 16, ram: 32768, disk: 200, instances: 8}
    flavors:
      - name: m1.large
        capabilities:
          - feature: basicCapabilities
            attributes:
              numVirtualCpu: 4
              virtualMemSize: {value: 8, unit: GB}
              diskSize: {value: 40, unit: GB}
";

fn nova_pool_takes_promise_reservations_and_flavors(dir: &std::path::Path, db: &Db) {
    std::fs::write(dir.join("inventory.yaml"), NOVA_INVENTORY).unwrap();
    let c = client();
    let mut d = start(dir, free_port(), db);
    let pool = "nova1/inventory";
    let levels = |metric: &str| {
        let (s, v) = post(
            &c,
            &d,
            "/query-capacity",
            json!({"zone": "nova1", "capacity": metric, "show-utilization": false}),
        );
        assert_eq!(s, 200, "{v}");
        v["capacity"][pool].clone()
    };
    // Seeded in canonical dimensions, answered in Promise's names.
    assert_eq!(
        levels("total"),
        json!({"cores": 16, "gigabytes": 200, "instances": 8, "ram": 32768})
    );
    // A reservation in Promise's names, and an instance of a flavor drawn from it.
    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "nova1", "provider": "inventory", "capacity": {"cores": 8, "ram": 16384}}),
    );
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    let (s, v) = post(
        &c,
        &d,
        "/create-instance",
        json!({"reservation-id": rid, "flavor": "m1.large"}),
    );
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    // The reservation holds cores and ram: the instance takes those.
    assert_eq!(v["capacity"], json!({"cores": 4, "ram": 8192}), "{v}");
    // Unreserved, the flavor takes its disk and one instance of the pool too.
    let (s, v) = post(
        &c,
        &d,
        "/create-instance",
        json!({"zone": "nova1", "provider-id": "inventory", "flavor": "m1.large"}),
    );
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    assert_eq!(
        v["capacity"],
        json!({"cores": 4, "gigabytes": 40, "instances": 1, "ram": 8192}),
        "{v}"
    );
    // 16 cores: 8 reserved, 4 used outside the reservation; 4 left.
    assert_eq!(
        levels("available"),
        json!({"cores": 4, "gigabytes": 160, "instances": 7, "ram": 8192})
    );
    // Nova's and Placement's names reach the same dimensions; too much is a conflict.
    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "nova1", "provider": "inventory", "capacity": {"VCPU": 5}}),
    );
    assert_eq!((s, v["result"].as_str()), (409, Some("conflict")), "{v}");
    assert_eq!(v["offers"][0]["max_reservable"], json!({"cores": 4}), "{v}");
    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "nova1", "provider": "inventory", "capacity": {"vcpus": 4, "MEMORY_MB": 8192}}),
    );
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    assert_eq!(levels("available")["cores"], 0);
    // One dimension twice is refused, naming both.
    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "nova1", "provider": "inventory", "capacity": {"cores": 1, "vcpus": 1}}),
    );
    assert_eq!(s, 400, "{v}");
    assert_eq!(
        v["message"],
        "`capacity`: `cores` and `vcpus` both name dimension `vcpu`; expected one of them"
    );
    terminate(&mut d);
}

on_both_stores!(
    nova_pool_takes_promise_reservations_and_flavors_on_sqlite,
    nova_pool_takes_promise_reservations_and_flavors_on_postgres,
    "e2e_compat_dims",
    |dir, db| nova_pool_takes_promise_reservations_and_flavors(dir, db)
);
