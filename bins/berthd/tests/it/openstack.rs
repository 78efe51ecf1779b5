//! The real daemon over a real cloud (`.ci/openstack.sh start`, `BERTH_TEST_OPENSTACK=1`):
//! `[openstack]` makes Placement and Nova the inventory, a HAS template with
//! `inventory_provider: openstack` homes on a compute host, Promise's TC-04 and TC-06 boot
//! `m1.tiny` from `cirros` through Nova on the host chosen, the reservation's claim appears in
//! Placement, shrinks as its instance boots and goes when it is cancelled, and `add-provider`
//! with a Keystone v3 endpoint discovers flavors and capacity. Without a cloud the test says
//! so and passes, except under `CI=true`, where it fails.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;

/// `OS_*` from the cloud's exports, or `None` (said) without a cloud; panics under CI.
fn exports(test: &str) -> Option<impl Fn(&str) -> String> {
    if std::env::var("BERTH_TEST_OPENSTACK").as_deref() != Ok("1") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`{test}` needs a cloud under CI: run `eval \"$(bash .ci/openstack.sh start)\"` first"
        );
        eprintln!("BERTH_TEST_OPENSTACK unset: `{test}` did not run (no cloud)");
        return None;
    }
    Some(|k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is not set")))
}

/// A token and the catalog's Placement and compute URLs, to look behind Berth's back.
struct Cloud {
    token: String,
    placement: String,
    compute: String,
}

impl Cloud {
    fn new(var: &impl Fn(&str) -> String) -> Cloud {
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": var("OS_USERNAME"), "domain": {"name": var("OS_USER_DOMAIN_NAME")},
                "password": var("OS_PASSWORD")}}},
            "scope": {"project": {"name": var("OS_PROJECT_NAME"), "domain": {"name": var("OS_PROJECT_DOMAIN_NAME")}}}}});
        let r = client()
            .post(format!("{}/auth/tokens", var("OS_AUTH_URL")))
            .json(&body)
            .send()
            .unwrap();
        let token = r.headers()["x-subject-token"].to_str().unwrap().to_owned();
        Cloud {
            token,
            placement: var("BERTH_TEST_OS_PLACEMENT_URL"),
            compute: var("BERTH_TEST_OS_COMPUTE_URL"),
        }
    }

    fn get(&self, url: String, version: &str) -> Value {
        client()
            .get(url)
            .header("X-Auth-Token", &self.token)
            .header("OpenStack-API-Version", version)
            .send()
            .unwrap()
            .json()
            .unwrap()
    }

    /// What Berth's consumers hold on `host`: resource class -> units, summed.
    fn berth_claims(&self, host: &str) -> BTreeMap<String, u64> {
        let rps = self.get(
            format!("{}/resource_providers?name={host}", self.placement),
            "placement 1.39",
        );
        let uuid = rps["resource_providers"][0]["uuid"]
            .as_str()
            .unwrap()
            .to_owned();
        let a = self.get(
            format!("{}/resource_providers/{uuid}/allocations", self.placement),
            "placement 1.39",
        );
        let mut out = BTreeMap::new();
        for (c, held) in a["allocations"].as_object().unwrap() {
            if c.starts_with("be27be27-be27-") {
                for (rc, n) in held["resources"].as_object().unwrap() {
                    *out.entry(rc.clone()).or_insert(0) += n.as_u64().unwrap();
                }
            }
        }
        out
    }

    fn server(&self, id: &str) -> Value {
        self.get(format!("{}/servers/{id}", self.compute), "compute 2.79")
    }
}

use std::collections::BTreeMap;

/// Waits (up to 30 s) until `f` holds, for what the claims loop writes behind the API.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(30), "never: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn ok(c: &Client, d: &Daemon, path: &str, body: Value) -> Value {
    let (s, v) = post(c, d, path, body.clone());
    assert_eq!(s, 200, "{path} {body}: {v}");
    v
}

#[test]
fn berthd_over_a_real_openstack() {
    let Some(var) = exports("berthd_over_a_real_openstack") else {
        return;
    };
    let dir = site();
    let config = dir.path().join("berthd.toml");
    std::fs::write(
        &config,
        format!(
            "[openstack]\nauth_url = \"{}\"\nusername = \"{}\"\nproject = \"{}\"\nregion = \"{}\"\ndefault_image = \"cirros\"\nrefresh_secs = 2\n",
            var("OS_AUTH_URL"),
            var("OS_USERNAME"),
            var("OS_PROJECT_NAME"),
            var("OS_REGION_NAME"),
        ),
    )
    .unwrap();
    let port = free_port();
    let db = Db::sqlite(dir.path());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.arg("--config")
        .arg(&config)
        .env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.path().join("inventory.yaml"))
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_OPENSTACK_PASSWORD", var("OS_PASSWORD"))
        .env("BERTH_LOG", "info")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(daemon_log(dir.path(), port));
    db.configure(&mut cmd);
    let d = wait_ready(
        Daemon {
            child: cmd.spawn().unwrap(),
            base: format!("http://127.0.0.1:{port}"),
        },
        &client(),
    );
    let c = client();
    let cloud = Cloud::new(&var);

    // The cloud's hosts are pools, with Placement's capacity.
    let (s, v) = post(&c, &d, "/query-capacity", json!({"capacity": "total"}));
    assert_eq!(s, 200, "{v}");
    for host in ["cpu1", "cpu2"] {
        let pool = format!("{host}/openstack");
        assert!(
            v["capacity"][&pool]["cores"].as_u64().unwrap_or(0) > 0,
            "{pool}: {v}"
        );
    }
    let ram = v["capacity"]["cpu2/openstack"]["ram"].as_u64().unwrap();

    // HAS: a demand of provider `openstack` homes on one of its hosts.
    let template = json!({
        "homing_template_version": "2017-10-10",
        "demands": {"vG": [{"inventory_provider": "openstack", "inventory_type": "cloud"}]},
    });
    let (s, v) = post(
        &c,
        &d,
        "/v1/plans",
        json!({"name": "os", "template": template, "num_solution": "1", "timeout": 30}),
    );
    assert_eq!(s, 201, "{v}");
    let p = wait_plan(&c, &d, v["id"].as_str().unwrap());
    let host = p["recommendations"][0]["vG"]["candidate"]["candidate_id"].clone();
    assert!(host == "cpu1" || host == "cpu2", "{p}");

    // TC-04: an instance without reservation boots m1.tiny on the host asked.
    let v = ok(
        &c,
        &d,
        "/create-instance",
        json!({"provider-id": "openstack", "zone": "cpu1", "name": "tc04", "image": "cirros", "flavor": "m1.tiny"}),
    );
    assert_eq!(
        (v["host"].as_str(), v["status"].as_str()),
        (Some("cpu1"), Some("ACTIVE")),
        "{v}"
    );
    assert_eq!(
        v["capacity"],
        json!({"cores": 1, "gigabytes": 1, "ram": 512})
    );
    let tc04 = v["instance-id"].as_str().unwrap().to_owned();
    let tc04_server = v["server-id"].as_str().unwrap().to_owned();
    let s = cloud.server(&tc04_server);
    assert_eq!(s["server"]["OS-EXT-SRV-ATTR:host"], "cpu1", "{s}");
    assert_eq!(s["server"]["status"], "ACTIVE");

    // TC-05/06: a reservation of all of cpu2's memory is claimed in Placement; an instance
    // drawn from it boots there (the claim gives up the server's share before Nova claims
    // it, or no host would have the memory), and the claim shrinks by what Nova holds.
    let v = ok(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "cpu2", "provider": "openstack", "capacity": {"cores": 2, "ram": ram}}),
    );
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    let want = |vcpu: u64, ram: u64| {
        BTreeMap::from([("MEMORY_MB".to_owned(), ram), ("VCPU".to_owned(), vcpu)])
    };
    eventually("the reservation's claim is in placement", || {
        cloud.berth_claims("cpu2") == want(2, ram)
    });
    let v = ok(
        &c,
        &d,
        "/create-instance",
        json!({"provider-id": "openstack", "reservation-id": rid, "name": "tc06", "flavor": "m1.tiny"}),
    );
    assert_eq!(
        (v["host"].as_str(), v["priority"].as_str()),
        (Some("cpu2"), Some("high")),
        "{v}"
    );
    let tc06 = v["instance-id"].as_str().unwrap().to_owned();
    let tc06_server = v["server-id"].as_str().unwrap().to_owned();
    eventually("the claim shrinks by the booted server", || {
        cloud.berth_claims("cpu2") == want(1, ram - 512)
    });

    // An unknown flavor is refused and leaves no instance behind.
    let (s, v) = post(
        &c,
        &d,
        "/create-instance",
        json!({"provider-id": "openstack", "zone": "cpu1", "flavor": "m9.huge"}),
    );
    assert_eq!(s, 400, "{v}");

    // TC-08/09: destroy-instance deletes the servers; cancelling the reservation frees its claim.
    for (i, server) in [(&tc04, &tc04_server), (&tc06, &tc06_server)] {
        ok(&c, &d, "/destroy-instance", json!({"instance-id": i}));
        let s = cloud.server(server);
        assert!(s.get("itemNotFound").is_some(), "{server} still there: {s}");
    }
    ok(
        &c,
        &d,
        "/cancel-reservation",
        json!({"reservation-id": rid}),
    );
    eventually("the cancelled reservation's claim is gone", || {
        cloud.berth_claims("cpu2").is_empty()
    });

    // add-provider with a Keystone v3 endpoint discovers the flavors and the capacity.
    let v = ok(
        &c,
        &d,
        "/add-provider",
        json!({"provider-type": "openstack", "endpoint": var("OS_AUTH_URL"),
               "username": var("OS_USERNAME"), "password": var("OS_PASSWORD"),
               "tenant": {"name": var("OS_PROJECT_NAME")}}),
    );
    let pid = v["provider-id"].as_str().unwrap().to_owned();
    assert!(
        v["flavors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "m1.tiny" && f["vcpus"] == 1),
        "{v}"
    );
    assert!(
        v["capacity"][format!("cpu1/{pid}")]["cores"]
            .as_u64()
            .unwrap()
            > 0,
        "{v}"
    );
    assert!(!v.to_string().contains(&var("OS_PASSWORD")));
}
