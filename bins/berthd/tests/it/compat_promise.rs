//! OPNFV Promise compatibility: the real `berthd` with HTTP Basic credentials walks the Promise
//! functional flow TC-01 … TC-14 in the order of its mocha suite, as a Promise client sends it
//! (provider records as `source`, reservations without start/end, flavors by name), asserting
//! every status and body, and the capacity the flavors consume and free.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use reqwest::blocking::Client;
use serde_json::{Value, json};

const USER: &str = "promise";
const PASSWORD: &str = "s3cret";

/// One cloud site whose flavors (HPA `basicCapabilities`) the `inventory` provider offers.
const INVENTORY: &str = "
candidates:
  - candidate_id: site1
    inventory_type: cloud
    latitude: 32.9
    longitude: -97.0
    cost: 1
    capacity: {cores: 8, ram: 16384, instances: 4}
    flavors:
      - id: f-tiny
        name: m1.tiny
        capabilities:
          - feature: basicCapabilities
            attributes:
              numVirtualCpu: 1
              virtualMemSize: {value: 512, unit: MB}
";

/// A `berthd` this test started; killed when dropped.
struct Berthd {
    child: Child,
    base: String,
    http: Client,
}

impl Drop for Berthd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Berthd {
    fn start(dir: &std::path::Path) -> Berthd {
        std::fs::write(dir.join("inventory.yaml"), INVENTORY).unwrap();
        let port = super::free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_berthd"))
            .env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
            .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
            .env("BERTH_BASIC_AUTH", format!("{USER}:{PASSWORD}"))
            .env(
                "BERTH_DATABASE_URL",
                format!("sqlite://{}", dir.join("promise.db").display()),
            )
            .env_remove("BERTH_TOKENS")
            .env_remove("BERTH_PG_SCHEMA")
            .env("BERTH_LOG", "warn")
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let d = Berthd {
            child,
            base: format!("http://127.0.0.1:{port}"),
            http: super::client(),
        };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(30) {
            if d.http
                .get(format!("{}/readyz", d.base))
                .send()
                .is_ok_and(|r| r.status().is_success())
            {
                return d;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("berthd did not become ready");
    }

    /// Invokes a Promise operation with the client's Basic credentials.
    fn invoke(&self, op: &str, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}/{op}", self.base))
            .basic_auth(USER, Some(PASSWORD))
            .json(&body)
            .send()
            .unwrap();
        let s = r.status().as_u16();
        (s, r.json().unwrap_or(Value::Null))
    }

    /// Invokes `op` and asserts `result: ok`.
    fn ok(&self, op: &str, body: Value) -> Value {
        let (s, v) = self.invoke(op, body);
        assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{op}: {v}");
        v
    }

    /// `query-capacity` of one metric for `pool`.
    fn capacity(&self, metric: &str, pool: &str) -> Value {
        let (s, v) = self.invoke("query-capacity", json!({"capacity": metric}));
        assert_eq!(s, 200, "{v}");
        v["capacity"][pool].clone()
    }
}

fn at(hours: i64) -> DateTime<Utc> {
    Utc::now() + TimeDelta::hours(hours)
}

fn ids(v: &Value) -> Vec<String> {
    v["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn compat_promise_functional_flow_tc01_to_tc14() {
    let dir = tempfile::tempdir().unwrap();
    let d = Berthd::start(dir.path());

    // Promise routes need the credentials.
    let r = d
        .http
        .post(format!("{}/query-capacity", d.base))
        .json(&json!({}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);

    // TC-01 add-provider (the flavor catalog stands in for Nova discovery).
    let v = d.ok(
        "add-provider",
        json!({
            "provider-type": "openstack",
            "endpoint": "http://10.0.2.15:5000/v2.0/tokens",
            "username": "promise",
            "password": "promise-pw",
            "tenant": {"name": "promise"},
            "flavors": [{"id": "2", "name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20}],
        }),
    );
    assert_eq!(v["message"], "provider added");
    assert!(!v.to_string().contains("promise-pw"));
    let provider = json!({"id": v["provider-id"].as_str().unwrap()});
    let pid = provider["id"].as_str().unwrap().to_owned();

    // TC-02 increase-capacity with the provider record as `source`.
    let v = d.ok(
        "increase-capacity",
        json!({"source": provider, "capacity": {"cores": 20, "ram": 51200, "instances": 10, "addresses": 10}}),
    );
    assert_eq!(v["message"], "capacity increase successful");
    let pool = v["pool-id"].as_str().unwrap().to_owned();
    assert_eq!(pool, format!("default/{pid}"));

    // TC-03 query-capacity total: the new pool and a non-empty utilization.
    let (s, v) = d.invoke("query-capacity", json!({"capacity": "total"}));
    assert_eq!(s, 200);
    let collections = v["collections"].as_array().unwrap();
    assert!(
        collections.contains(&json!(format!("ResourcePool:{pool}"))),
        "{v}"
    );
    assert!(
        collections.contains(&json!("ResourcePool:site1/inventory")),
        "{v}"
    );
    assert!(!v["utilization"].as_array().unwrap().is_empty());
    assert_eq!(
        v["capacity"][&pool],
        json!({"addresses": 10, "cores": 20, "instances": 10, "ram": 51200})
    );

    // TC-04 create-instance without reservation: low priority, the flavor consumed.
    let v = d.ok(
        "create-instance",
        json!({"provider-id": pid, "name": "promise-test-no-reservation", "image": "cirros", "flavor": "m1.small", "networks": ["net0"]}),
    );
    assert_eq!(v["priority"], "low");
    assert_eq!(
        v["capacity"],
        json!({"cores": 1, "instances": 1, "ram": 2048})
    );
    let no_reservation = v["instance-id"].as_str().unwrap().to_owned();
    assert_eq!(
        d.capacity("usage", &pool),
        json!({"addresses": 0, "cores": 1, "instances": 1, "ram": 2048})
    );

    // TC-05 create-reservation without start/end: from now for the max duration.
    let v = d.ok(
        "create-reservation",
        json!({"capacity": {"cores": 5, "ram": 25600, "addresses": 3, "instances": 3}}),
    );
    let immediate = v["reservation-id"].as_str().unwrap().to_owned();
    let (_, q) = d.invoke("query-reservation", json!({}));
    assert_eq!(ids(&q), vec![immediate.clone()]);
    let detail = &q["details"][0];
    assert_eq!(
        (detail["active"].as_bool(), detail["pool-id"].as_str()),
        (Some(true), Some(pool.as_str()))
    );
    let start: DateTime<Utc> = serde_json::from_value(detail["start"].clone()).unwrap();
    let end: DateTime<Utc> = serde_json::from_value(detail["end"].clone()).unwrap();
    // The end is resolved when the request is taken, the start when it is admitted (later by
    // the queueing time), so the window is the 8760 h default less a moment.
    let short = TimeDelta::hours(8760) - (end - start);
    assert!(
        short >= TimeDelta::zero() && short < TimeDelta::seconds(5),
        "{detail}"
    );

    // TC-06 create-instance with the reservation: high priority, listed in the reservation.
    let v = d.ok(
        "create-instance",
        json!({"provider-id": pid, "name": "promise-test-reservation", "image": "cirros", "flavor": "m1.small", "networks": ["net0"], "reservation-id": immediate}),
    );
    assert_eq!(
        (v["priority"].as_str(), v["reservation-id"].as_str()),
        (Some("high"), Some(immediate.as_str()))
    );
    let with_reservation = v["instance-id"].as_str().unwrap().to_owned();
    let (_, q) = d.invoke("query-reservation", json!({}));
    assert_eq!(q["details"][0]["allocations"], json!([with_reservation]));
    assert_eq!(
        q["details"][0]["remaining"],
        json!({"addresses": 3, "cores": 4, "instances": 2, "ram": 23552})
    );
    assert!(!q["utilization"].as_array().unwrap().is_empty());

    // TC-07 create-reservation for future use (+7 h … +8 h).
    let (start, end) = (at(7), at(8));
    let v = d.ok(
        "create-reservation",
        json!({"start": start, "end": end, "capacity": {"cores": 1, "ram": 12800, "addresses": 1, "instances": 1}}),
    );
    let future = v["reservation-id"].as_str().unwrap().to_owned();

    // TC-08 query-reservation over its window contains it.
    let (s, q) = d.invoke(
        "query-reservation",
        json!({"window": {"start": start, "end": end}}),
    );
    assert_eq!(s, 200);
    assert!(ids(&q).contains(&future), "{q}");
    let f = q["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["reservation-id"] == json!(future))
        .unwrap()
        .clone();
    assert_eq!(
        (f["active"].as_bool(), f["state"].as_str()),
        (Some(false), Some("initialized"))
    );
    let reserved: Vec<i64> = q["utilization"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["pool-id"] == json!(pool))
        .map(|u| u["capacity"]["cores"].as_i64().unwrap())
        .collect();
    assert_eq!(reserved, vec![6], "{q}");

    // TC-09 update-reservation.
    let v = d.ok(
        "update-reservation",
        json!({"reservation-id": future, "capacity": {"cores": 3, "ram": 12800, "addresses": 2, "instances": 2}}),
    );
    assert_eq!(v["message"], "reservation update successful");
    let (_, q) = d.invoke(
        "query-reservation",
        json!({"window": {"start": start, "end": end}}),
    );
    let f = q["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["reservation-id"] == json!(future))
        .unwrap()
        .clone();
    assert_eq!(
        f["capacity"],
        json!({"addresses": 2, "cores": 3, "instances": 2, "ram": 12800})
    );

    // TC-10 cancel-reservation: the record is gone from every query.
    let v = d.ok("cancel-reservation", json!({"reservation-id": future}));
    assert_eq!(v["message"], "reservation canceled");
    let (_, q) = d.invoke(
        "query-reservation",
        json!({"window": {"start": start, "end": end}}),
    );
    assert_eq!(ids(&q), vec![immediate.clone()]);
    let (_, q) = d.invoke("query-reservation", json!({}));
    assert_eq!(ids(&q), vec![immediate.clone()]);

    // TC-11 and TC-12 decrease-capacity in the future (both as Promise's suite sends them).
    let v = d.ok(
        "decrease-capacity",
        json!({"source": provider, "capacity": {"cores": 5, "ram": 17920, "instances": 5}, "start": at(30), "end": at(45)}),
    );
    assert_eq!(
        (v["message"].as_str(), v["pool-id"].as_str()),
        (Some("capacity decrease successful"), Some(pool.as_str()))
    );
    let v = d.ok(
        "decrease-capacity",
        json!({"source": provider, "capacity": {"cores": 1, "ram": 3584, "instances": 1}, "start": at(14), "end": at(21)}),
    );
    assert_eq!(v["pool-id"], json!(pool));

    // TC-13 query-capacity available: the least over time, from the +30 h … +45 h dip.
    let (s, v) = d.invoke("query-capacity", json!({"capacity": "available"}));
    assert_eq!(s, 200);
    assert!(!v["collections"].as_array().unwrap().is_empty());
    assert!(!v["utilization"].as_array().unwrap().is_empty());
    assert_eq!(
        v["capacity"][&pool],
        json!({"addresses": 7, "cores": 9, "instances": 1, "ram": 5632})
    );
    let now_cores: Vec<i64> = v["utilization"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["pool-id"] == json!(pool))
        .map(|u| u["capacity"]["cores"].as_i64().unwrap())
        .collect();
    assert_eq!(now_cores, vec![14, 13, 14, 9, 14, 19], "{v}");

    // TC-14 reservations that do not fit, now and in the future: Promise's conflict.
    for body in [
        json!({"capacity": {"cores": 5, "ram": 17920, "instances": 10}}),
        json!({"capacity": {"cores": 5, "ram": 17920, "instances": 10}, "start": at(30)}),
    ] {
        let (s, v) = d.invoke("create-reservation", body);
        assert_eq!((s, v["result"].as_str()), (409, Some("conflict")), "{v}");
        assert!(!v["message"].as_str().unwrap_or_default().is_empty());
    }

    // Cleanup: destroy every instance; the flavors' capacity returns.
    for id in [&no_reservation, &with_reservation] {
        let v = d.ok("destroy-instance", json!({"instance-id": id}));
        assert_eq!(
            v["message"],
            "instance destroyed and resource released back to pool"
        );
    }
    assert_eq!(
        d.capacity("usage", &pool),
        json!({"addresses": 0, "cores": 0, "instances": 0, "ram": 0})
    );
    let (_, q) = d.invoke("query-reservation", json!({}));
    assert_eq!(q["details"][0]["allocations"], json!([]));
    assert_eq!(q["details"][0]["remaining"]["cores"], 5);
    let (s, v) = d.invoke("destroy-instance", json!({"instance-id": no_reservation}));
    assert_eq!(
        (s, v["result"].as_str(), v["message"].as_str()),
        (
            400,
            Some("error"),
            Some(
                format!(
                    "allocation `{no_reservation}` is destroyed; expected an active allocation"
                )
                .as_str()
            )
        )
    );
}

#[test]
fn compat_promise_providers_are_registered_or_from_the_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let d = Berthd::start(dir.path());
    // An unknown provider is refused by name and no pool appears.
    let (s, v) = d.invoke(
        "increase-capacity",
        json!({"source": {"id": "no-such-provider"}, "capacity": {"cores": 4}}),
    );
    assert_eq!((s, v["result"].as_str()), (404, Some("error")));
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("`no-such-provider`"),
        "{v}"
    );
    let (_, v) = d.invoke("query-capacity", json!({}));
    assert_eq!(v["collections"], json!(["ResourcePool:site1/inventory"]));
    // The inventory's provider and flavors need no add-provider.
    let v = d.ok(
        "create-instance",
        json!({"provider-id": "inventory", "zone": "site1", "name": "vm", "flavor": "m1.tiny"}),
    );
    assert_eq!(
        v["capacity"],
        json!({"cores": 1, "instances": 1, "ram": 512})
    );
    assert_eq!(v["pool-id"], "site1/inventory");
    assert_eq!(
        d.capacity("available", "site1/inventory"),
        json!({"cores": 7, "instances": 3, "ram": 15872})
    );
    let (s, v) = d.invoke(
        "create-instance",
        json!({"provider-id": "inventory", "zone": "site1", "flavor": "m1.large"}),
    );
    assert_eq!((s, v["result"].as_str()), (400, Some("error")));
    assert_eq!(
        v["message"],
        "`flavor`: flavor `m1.large` is unknown to provider `inventory`; expected one of [m1.tiny]"
    );
    // The pool is addressed by every source form.
    for src in [
        json!("site1/inventory"),
        json!("ResourcePool:site1/inventory"),
        json!({"id": "ResourcePool:site1/inventory"}),
    ] {
        let v = d.ok(
            "increase-capacity",
            json!({"source": src, "capacity": {"cores": 1}}),
        );
        assert_eq!(v["pool-id"], "site1/inventory");
    }
    let v = d.ok(
        "decrease-capacity",
        json!({"source": "ResourceProvider:inventory", "zone": "site1", "capacity": {"cores": 3}}),
    );
    assert_eq!(v["pool-id"], "site1/inventory");
    assert_eq!(d.capacity("total", "site1/inventory")["cores"], 8);
}
