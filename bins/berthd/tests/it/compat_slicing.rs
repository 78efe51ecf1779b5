//! ONAP network-slicing flows against the real `berthd`: the daemon serves
//! `examples/slicing/inventory.yaml`, a client with HTTP Basic credentials posts HAS-shaped
//! plans (nsi reuse, nsi with create, no nsi, nssi, nssi unmatched, nst, and a type no
//! provider serves) and polls each to its final status.

use std::path::Path;
use std::process::{Command, Stdio};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{Daemon, client, free_port, terminate, wait_ready};

const USER: &str = "osdf";
const PASSWORD: &str = "slice-secret";

fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/slicing")
        .join(name)
}

/// The daemon, killed (by its own pid) if a failed assertion unwinds before the graceful stop.
struct Running(Daemon);

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.child.try_wait(), Ok(None)) {
            let _ = self.0.child.kill();
            let _ = self.0.child.wait();
        }
    }
}

/// `berthd` on a loopback port with the slicing inventory and Basic credentials only.
fn start(dir: &Path) -> Running {
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", example("inventory.yaml"))
        .env("BERTH_BASIC_AUTH", format!("{USER}:{PASSWORD}"))
        .env(
            "BERTH_DATABASE_URL",
            format!("sqlite://{}", dir.join("berth.db").display()),
        )
        .env("BERTH_LOG", "warn")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let d = Daemon {
        child: cmd.spawn().unwrap(),
        base: format!("http://127.0.0.1:{port}"),
    };
    Running(wait_ready(d, &client()))
}

/// A HAS `POST /v1/plans` body around a template.
fn has_request(name: &str, template: Value) -> Value {
    json!({
        "name": name,
        "files": {},
        "limit": 10,
        "num_solution": "1",
        "timeout": 600,
        "template": template,
    })
}

/// Posts a plan with Basic credentials and polls it to a final status; the plan's JSON.
fn run_plan(c: &Client, d: &Daemon, body: Value) -> Value {
    let r = c
        .post(format!("{}/v1/plans", d.base))
        .basic_auth(USER, Some(PASSWORD))
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let v: Value = r.json().unwrap();
    let id = v["id"].as_str().unwrap().to_owned();
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(30) {
        let r = c
            .get(format!("{}/v1/plans/{id}", d.base))
            .basic_auth(USER, Some(PASSWORD))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let v: Value = r.json().unwrap();
        let p = v["plans"][0].clone();
        if ["done", "not found", "error"].contains(&p["status"].as_str().unwrap_or_default()) {
            return p;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("plan {id} never finished");
}

/// The URLLC demand of the nsi flows: an existing shared nsi (model ids as given) or, from
/// the `generator`, slice profiles over three subnets, with HAS's string forms (`"true"`).
fn urllc(model_version: Value, goal: &str) -> Value {
    json!({
        "homing_template_version": "2020-08-13",
        "parameters": {"max_latency": 25, "min_reliability": 99.9},
        "demands": {"URLLC": [
            {
                "inventory_provider": "aai",
                "inventory_type": "nsi",
                "unique": "true",
                "filtering_attributes": {
                    "model-invariant-id": "3f0e8c8a-7a44-4b63-a2b5-5a9c6e7d1001",
                    "model-version-id": model_version,
                    "service-role": "nsi",
                    "service-function": "shared"
                },
                "default_attributes": {"creation_cost": 0.2}
            },
            {
                "inventory_provider": "generator",
                "inventory_type": "slice_profiles",
                "unique": "true",
                "filtering_attributes": {
                    "service_profile": {
                        "latency": {"value": {"get_param": "max_latency"}, "operator": "lte"},
                        "reliability": {"value": {"get_param": "min_reliability"}, "operator": "gte"}
                    },
                    "subnets": {
                        "core": {"latency": {"min": 5, "max": 9, "steps": 3}, "reliability": {"values": [99.95]}},
                        "ran": {"latency": {"min": 6, "max": 11, "steps": 4}, "reliability": {"values": [99.99]}},
                        "transport": {"latency": {"values": [4]}, "reliability": {"values": [99.999]}}
                    }
                },
                "default_attributes": {"creation_cost": 0.7}
            }
        ]},
        "constraints": {"URLLC_threshold": {
            "type": "threshold",
            "demands": ["URLLC"],
            "properties": {"evaluate": [
                {"attribute": "latency", "operator": "lte", "threshold": {"get_param": "max_latency"}, "unit": "ms"},
                {"attribute": "reliability", "operator": "gte", "threshold": {"get_param": "min_reliability"}, "unit": ""}
            ]}
        }},
        "optimization": {"goal": goal, "operation_function": {
            "operator": "sum",
            "operands": [{"function": "attribute", "params": {"demand": "URLLC", "attribute": "creation_cost"}}]
        }}
    })
}

fn nssi(max_latency: u32) -> Value {
    json!({
        "homing_template_version": "2020-08-13",
        "parameters": {"max_latency": max_latency, "min_reliability": 99.9},
        "demands": {"URLLC_core": [{
            "inventory_provider": "aai",
            "inventory_type": "nssi",
            "unique": "true",
            "filtering_attributes": {
                "model-invariant-id": "5c7a9e21-0b3d-4f6e-9a18-2d4c6e8f3001",
                "model-version-id": "5c7a9e21-0b3d-4f6e-9a18-2d4c6e8f3002",
                "service-role": "nssi",
                "service-function": ["shared", "dedicated"]
            },
            "default_attributes": {"creation_cost": 0.1}
        }]},
        "constraints": {"core_threshold": {
            "type": "threshold",
            "demands": ["URLLC_core"],
            "properties": {"evaluate": [
                {"attribute": "latency", "operator": "lte", "threshold": {"get_param": "max_latency"}, "unit": "ms"},
                {"attribute": "reliability", "operator": "gte", "threshold": {"get_param": "min_reliability"}, "unit": ""}
            ]}
        }},
        "optimization": {"goal": "minimize", "operation_function": {
            "operator": "sum",
            "operands": [{"function": "attribute", "params": {"demand": "URLLC_core", "attribute": "latency"}}]
        }}
    })
}

fn candidate(p: &Value, demand: &str) -> Value {
    p["recommendations"][0][demand]["candidate"].clone()
}

fn attributes(p: &Value, demand: &str) -> Value {
    p["recommendations"][0][demand]["attributes"].clone()
}

#[test]
fn compat_slicing_flows_over_http_with_basic_auth() {
    let dir = tempfile::tempdir().unwrap();
    let mut running = start(dir.path());
    let d = &running.0;
    let c = client();

    // Without credentials: 401, as HAS.
    let r = c.get(format!("{}/v1/plans", d.base)).send().unwrap();
    assert_eq!(r.status().as_u16(), 401);

    // Reuse: the existing slice instance within 25 ms is cheaper than a new one.
    let p = run_plan(
        &c,
        d,
        has_request(
            "nsi_reuse",
            urllc(json!("3f0e8c8a-7a44-4b63-a2b5-5a9c6e7d1002"), "minimize"),
        ),
    );
    assert_eq!(p["status"], "done", "{p}");
    let cand = candidate(&p, "URLLC");
    assert_eq!(cand["inventory_type"], "nsi");
    assert_eq!(cand["candidate_id"], "6b1c1f0e-1f43-4a51-9d0a-0a1e5e0c7101");
    assert_eq!(cand["instance_name"], "nsi_factory_a");
    assert_eq!(cand["instance_id"], "6b1c1f0e-1f43-4a51-9d0a-0a1e5e0c7101");
    let attrs = attributes(&p, "URLLC");
    assert_eq!(attrs["creation_cost"], 0.2);
    assert_eq!(attrs["latency"], 18);
    assert_eq!(attrs["reliability"], 99.99);

    // With create: maximizing creation_cost picks a generated slice profile.
    let p = run_plan(
        &c,
        d,
        has_request(
            "nsi_create",
            urllc(json!("3f0e8c8a-7a44-4b63-a2b5-5a9c6e7d1002"), "maximize"),
        ),
    );
    assert_eq!(p["status"], "done", "{p}");
    let cand = candidate(&p, "URLLC");
    assert_eq!(cand["inventory_type"], "slice_profiles");
    assert_eq!(
        p["recommendations"][0]["URLLC"]["inventory_provider"],
        "generator"
    );
    let attrs = attributes(&p, "URLLC");
    assert_eq!(attrs["creation_cost"], 0.7);
    // core 5|8 + ran 6|10 + transport 4: every slice-level latency is within 25 ms.
    let latency = attrs["latency"].as_i64().unwrap();
    assert!([15, 18, 19, 22].contains(&latency), "{attrs}");
    assert_eq!(
        attrs["core_latency"].as_i64().unwrap()
            + attrs["ran_latency"].as_i64().unwrap()
            + attrs["transport_latency"].as_i64().unwrap(),
        latency
    );
    assert_eq!(attrs["reliability"], 99.95);
    assert_eq!(attrs["transport_reliability"], 99.999);

    // No nsi: no instance has any of the listed model versions; a slice profile is offered.
    let p = run_plan(
        &c,
        d,
        has_request(
            "no_nsi",
            urllc(
                json!([
                    "00000000-0000-0000-0000-000000000001",
                    "00000000-0000-0000-0000-000000000002"
                ]),
                "minimize",
            ),
        ),
    );
    assert_eq!(p["status"], "done", "{p}");
    assert_eq!(candidate(&p, "URLLC")["inventory_type"], "slice_profiles");
    assert_eq!(attributes(&p, "URLLC")["creation_cost"], 0.7);

    // An instance with two service profiles is offered per profile (candidate_id is the
    // profile's id, instance_id the instance's); the 35 ms profile fails the threshold.
    let p = run_plan(
        &c,
        d,
        has_request(
            "nsi_profiles",
            json!({
                "homing_template_version": "2020-08-13",
                "demands": {"campus": [{
                    "inventory_provider": "aai",
                    "inventory_type": "nsi",
                    "unique": "true",
                    "filtering_attributes": {"model-invariant-id": "3f0e8c8a-7a44-4b63-a2b5-5a9c6e7d3001"}
                }]},
                "constraints": {"t": {"type": "threshold", "demands": ["campus"], "properties": {
                    "evaluate": [{"attribute": "latency", "operator": "lte", "threshold": 20, "unit": "ms"}]
                }}}
            }),
        ),
    );
    assert_eq!(p["status"], "done", "{p}");
    let cand = candidate(&p, "campus");
    assert_eq!(cand["candidate_id"], "sp-campus-robots");
    assert_eq!(cand["instance_id"], "6b1c1f0e-1f43-4a51-9d0a-0a1e5e0c7104");
    assert_eq!(cand["instance_name"], "nsi_campus");
    assert_eq!(cand["profile_id"], "sp-campus-robots");
    assert_eq!(attributes(&p, "campus")["reliability"], 99.999);

    // nssi: the subnet instance with the lowest latency.
    let p = run_plan(&c, d, has_request("nssi", nssi(15)));
    assert_eq!(p["status"], "done", "{p}");
    let cand = candidate(&p, "URLLC_core");
    assert_eq!(cand["inventory_type"], "nssi");
    assert_eq!(cand["instance_name"], "nssi_core_west");
    assert_eq!(attributes(&p, "URLLC_core")["latency"], 8);

    // nssi unmatched: nothing within 5 ms.
    let p = run_plan(&c, d, has_request("nssi_unmatched", nssi(5)));
    assert_eq!(p["status"], "not found", "{p}");
    assert_eq!(p["recommendations"], json!([]));

    // nst, from the shipped example file (its YAML text as the envelope's `template`).
    let text = std::fs::read_to_string(example("nst.yaml")).unwrap();
    let p = run_plan(&c, d, has_request("nst", Value::String(text)));
    assert_eq!(p["status"], "done", "{p}");
    let cand = candidate(&p, "urllc_template");
    assert_eq!(cand["inventory_type"], "nst");
    assert_eq!(cand["model_name"], "nst_urllc_low_latency");

    // A type the inventory holds no candidate of: an empty set, so the plan ends
    // `not found` as in HAS, its message naming the requirement and the missing type.
    let p = run_plan(
        &c,
        d,
        has_request(
            "unserved",
            json!({
                "homing_template_version": "2020-08-13",
                "demands": {"vnf": [{"inventory_provider": "aai", "inventory_type": "cloud"}]}
            }),
        ),
    );
    assert_eq!(p["status"], "not found", "{p}");
    let msg = p["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("demands.vnf[0]: no candidate of inventory type `cloud` under provider `aai` exists in the inventory"),
        "{p}"
    );

    terminate(&mut running.0);
}
