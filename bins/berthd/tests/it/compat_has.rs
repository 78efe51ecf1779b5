//! ONAP HAS compatibility, end to end: the real `berthd` with the shipped example inventory and
//! HTTP Basic credentials (as CSIT and OSDF call HAS), homing requests of every shape OSDF, SO
//! and the HAS CSIT suite send (written here from the public ONAP docs), polled until final,
//! with the plan statuses and recommendation contents (region, vim-id, HPA flavors and score)
//! those clients read.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{Daemon, client, free_port, wait_ready};

const USER: &str = "osdf";
const PASSWORD: &str = "has-compat-secret";

/// The daemon, stopped when the test ends however it ends.
struct Has {
    d: Option<Daemon>,
    _dir: tempfile::TempDir,
}

impl Drop for Has {
    fn drop(&mut self) {
        if let Some(d) = self.d.as_mut() {
            let _ = d.child.kill();
            let _ = d.child.wait();
        }
    }
}

impl Has {
    fn base(&self) -> &str {
        self.d.as_ref().map_or("", |d| d.base.as_str())
    }
}

/// `berthd` on a loopback port, SQLite in a temporary directory, the example inventory, and
/// Basic credentials only (no bearer tokens), as an ONAP deployment configures it.
fn start_has() -> Has {
    start_has_env(&[])
}

/// [`start_has`] with more environment settings.
fn start_has_env(env: &[(&str, &str)]) -> Has {
    start_has_in(tempfile::tempdir().unwrap(), env, &[])
}

/// [`start_has`] in `dir`, with more environment settings and arguments.
fn start_has_in(dir: tempfile::TempDir, env: &[(&str, &str)], args: &[&str]) -> Has {
    let inventory = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/inventory.yaml");
    std::fs::copy(inventory, dir.path().join("inventory.yaml")).unwrap();
    let port = free_port();
    let child: Child = Command::new(env!("CARGO_BIN_EXE_berthd"))
        .env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.path().join("inventory.yaml"))
        .env("BERTH_BASIC_AUTH", format!("{USER}:{PASSWORD}"))
        .env_remove("BERTH_TOKENS")
        .env(
            "BERTH_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("berth.db").display()),
        )
        .env_remove("BERTH_PG_SCHEMA")
        .env("BERTH_LOG", "warn")
        .envs(env.iter().copied())
        .args(args)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let d = Daemon {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    Has {
        d: Some(wait_ready(d, &client())),
        _dir: dir,
    }
}

/// POSTs a plan as OSDF does (Basic credentials, string `num_solution`): status and body.
fn post_plan(c: &Client, h: &Has, name: &str, template: Value) -> (u16, Value) {
    post_plan_to(c, h, "/v1/plans", name, template)
}

/// [`post_plan`] to `path` (OSDF's default `conductorUrl` ends in `/v1/plans/`).
fn post_plan_to(c: &Client, h: &Has, path: &str, name: &str, template: Value) -> (u16, Value) {
    let body = json!({
        "name": name,
        "timeout": 60,
        "limit": 1,
        "num_solution": "1",
        "template": template,
    });
    let r = c
        .post(format!("{}{path}", h.base()))
        .basic_auth(USER, Some(PASSWORD))
        .json(&body)
        .send()
        .unwrap();
    let s = r.status().as_u16();
    (s, r.json().unwrap_or(Value::Null))
}

/// Polls the plan at `url` until it is final; returns `plans[0]`.
fn final_plan(c: &Client, url: &str) -> Value {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(30) {
        let r = c.get(url).basic_auth(USER, Some(PASSWORD)).send().unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let v: Value = r.json().unwrap();
        let p = v["plans"][0].clone();
        if ["done", "not found", "error"].contains(&p["status"].as_str().unwrap_or_default()) {
            return p;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    panic!("plan {url} never finished");
}

/// The plan URL of a 201 answer, checked as OSDF reads it: status `template` and the
/// `links[0][0].href` it polls (`/v1/plans/{id}`).
fn plan_url(h: &Has, name: &str, s: u16, v: &Value) -> String {
    assert_eq!(s, 201, "{name}: {v}");
    assert_eq!(v["name"], name);
    assert_eq!(v["status"], "template", "{v}");
    let id = v["id"].as_str().unwrap();
    let href = v["links"][0][0]["href"].as_str().unwrap().to_owned();
    assert_eq!(href, format!("{}/v1/plans/{id}", h.base()));
    href
}

/// Creates a plan (201, as HAS answers even for templates it will reject) and returns it
/// once final, polled at the link the answer gives.
fn run(c: &Client, h: &Has, name: &str, template: Value) -> Value {
    let (s, v) = post_plan(c, h, name, template);
    let url = plan_url(h, name, s, &v);
    let p = final_plan(c, &url);
    assert_eq!(p["name"], name);
    p
}

/// The parts of a vCPE-style request OSDF builds: parameters, a customer location given by
/// latitude/longitude parameters, one cloud demand `vGW`.
fn request(constraints: Value, optimization: Value) -> Value {
    json!({
        "homing_template_version": "2017-10-10",
        "parameters": {
            "service_name": "Residential vCPE",
            "service_id": "vcpe_compat",
            "customer_lat": 45.41,
            "customer_long": -71.12,
            "REQUIRED_MEM": 6,
            "REQUIRED_DISK": 250
        },
        "locations": {
            "customer_loc": {
                "latitude": {"get_param": "customer_lat"},
                "longitude": {"get_param": "customer_long"}
            }
        },
        "demands": {"vGW": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "constraints": constraints,
        "optimization": optimization,
    })
}

fn near(km: &str) -> Value {
    json!({"type": "distance_to_location", "demands": ["vGW"],
           "properties": {"distance": format!("< {km} km"), "location": "customer_loc"}})
}

fn by_distance() -> Value {
    json!({"minimize": {"sum": [{"distance_between": ["customer_loc", "vGW"]}]}})
}

/// One HPA feature as OSDF's policy translation writes it (booleans and numbers as strings).
fn feature(name: &str, arch: &str, mandatory: bool, score: Option<u32>, attrs: Value) -> Value {
    let mut f = json!({
        "hpa-feature": name,
        "hpa-version": "v1",
        "architecture": arch,
        "mandatory": if mandatory { "True" } else { "False" },
        "directives": [],
        "hpa-feature-attributes": attrs,
    });
    if let Some(s) = score {
        f["score"] = json!(s.to_string());
    }
    f
}

fn attr(key: &str, value: Value, op: &str, unit: &str) -> Value {
    json!({"hpa-attribute-key": key, "hpa-attribute-value": value, "operator": op, "unit": unit})
}

fn basic(op: &str, cpus: u32, mem_gb: u32, mandatory: bool, score: Option<u32>) -> Value {
    feature(
        "basicCapabilities",
        "generic",
        mandatory,
        score,
        json!([
            attr("numVirtualCpu", json!(cpus.to_string()), op, ""),
            attr("virtualMemSize", json!(mem_gb.to_string()), op, "GB")
        ]),
    )
}

fn numa(mandatory: bool, score: Option<u32>) -> Value {
    feature(
        "numa",
        "generic",
        mandatory,
        score,
        json!([
            attr("numaNodes", json!("2"), "=", ""),
            attr("numaCpu-0", json!("2"), "=", ""),
            attr("numaCpu-1", json!("4"), "=", ""),
            attr("numaMem-0", json!("2"), "=", "GB"),
            attr("numaMem-1", json!("4"), "=", "GB")
        ]),
    )
}

fn dpdk(mandatory: bool, score: Option<u32>) -> Value {
    feature(
        "ovsDpdk",
        "generic",
        mandatory,
        score,
        json!([attr(
            "dataProcessingAccelerationLibrary",
            json!("v18.02"),
            "=",
            ""
        )]),
    )
}

fn isa_extensions() -> Value {
    feature(
        "instructionSetExtensions",
        "Intel64",
        true,
        None,
        json!([attr(
            "instructionSetExtensions",
            json!(["aes", "sse", "avx"]),
            "ALL",
            ""
        )]),
    )
}

/// An `hpa` constraint over two VNFCs with their flavor labels.
fn hpa(ctl: Vec<Value>, data: Vec<Value>) -> Value {
    let vnfc = |id: &str, label: &str, features: Vec<Value>| {
        json!({
            "id": id,
            "type": "vnfc",
            "directives": [{"type": "flavor_directives",
                            "attributes": [{"attribute_name": label, "attribute_value": ""}]}],
            "flavorProperties": features,
        })
    };
    json!({"type": "hpa", "demands": ["vGW"], "properties": {"evaluate": [
        vnfc("vgw_ctl", "flavor_label_ctl", ctl),
        vnfc("vgw_data", "flavor_label_data", data)
    ]}})
}

/// The `vGW` recommendation of a done plan.
fn recommendation(p: &Value) -> &Value {
    assert_eq!(p["status"], "done", "{p}");
    &p["recommendations"][0]["vGW"]
}

#[test]
fn compat_has_csit_statuses() {
    let h = start_has();
    let c = client();

    // Without credentials: 401, as HAS behind its Basic auth.
    let r = c.get(format!("{}/v1/plans", h.base())).send().unwrap();
    assert_eq!(r.status().as_u16(), 401);

    // A wrong template version: accepted, then `error` naming the version.
    let mut t = request(json!({}), by_distance());
    t["homing_template_version"] = json!("2099-13-40");
    let p = run(&c, &h, "wrong_version", t);
    assert_eq!(p["status"], "error");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("homing_template_version"),
        "{p}"
    );

    // No demands: HAS's "Undefined Demand", as a final `error`.
    let mut t = request(json!({}), by_distance());
    t.as_object_mut().unwrap().remove("demands");
    let p = run(&c, &h, "no_demands", t);
    assert_eq!(p["status"], "error");
    assert!(
        p["message"].as_str().unwrap().contains("undefined demand"),
        "{p}"
    );
    assert_eq!(p["recommendations"], json!([]));

    // A malformed constraint (no `type`): `error` naming the constraint.
    let bad = json!({"demands": ["vGW"], "properties": {"distance": "< 100 km", "location": "customer_loc"}});
    let p = run(
        &c,
        &h,
        "wrong_constraint",
        request(json!({"distance-vgw": bad}), by_distance()),
    );
    assert_eq!(p["status"], "error");
    assert!(
        p["message"].as_str().unwrap().contains("distance-vgw"),
        "{p}"
    );

    // A malformed vim_fit request: `error` naming what was expected.
    let fit = json!({"type": "vim_fit", "demands": ["vGW"], "properties": {"controller": "multicloud",
        "request": {"vCPU": 4, "Memory": {"quantity": 8, "unit": "parsecs"}}}});
    let p = run(
        &c,
        &h,
        "bad_vim_fit",
        request(json!({"fit": fit}), by_distance()),
    );
    assert_eq!(p["status"], "error");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("unknown unit `parsecs`"),
        "{p}"
    );

    // An unclosed flow collection in a YAML template: `error` naming where it was opened.
    let (s, v) = post_plan(
        &c,
        &h,
        "unclosed_yaml",
        json!(
            "homing_template_version: 2017-10-10\ndemands:\n  vGW: [{inventory_provider: aai,\n    inventory_type: cloud}\noptimization: {}\n"
        ),
    );
    let p = final_plan(&c, &plan_url(&h, "unclosed_yaml", s, &v));
    assert_eq!(p["status"], "error");
    assert!(
        p["message"].as_str().unwrap().contains("`[` opened at 3:8"),
        "{p}"
    );

    // A distance nobody satisfies: `not found`.
    let p = run(
        &c,
        &h,
        "too_close",
        request(json!({"distance-vgw": near("1")}), by_distance()),
    );
    assert_eq!(p["status"], "not found", "{p}");
    assert_eq!(p["recommendations"], json!([]));

    // HPA nobody matches (60 vCPUs exactly): `not found`.
    let p = run(
        &c,
        &h,
        "hpa_unmatched",
        request(
            json!({"near": near("100"), "hpa_constraint": hpa(vec![basic("=", 60, 64, true, None)], vec![basic("=", 30, 128, true, None)])}),
            by_distance(),
        ),
    );
    assert_eq!(p["status"], "not found", "{p}");

    // OSDF posts to its configured `conductorUrl`, by default ending in `/v1/plans/`.
    let (s, v) = post_plan_to(
        &c,
        &h,
        "/v1/plans/",
        "trailing_slash",
        request(json!({}), json!({})),
    );
    let p = final_plan(&c, &plan_url(&h, "trailing_slash", s, &v));
    assert_eq!(p["status"], "done", "{p}");

    // Location by latitude/longitude, `optimization: {}` (OSDF: a policy without objective):
    // a feasible plan, `done`.
    let p = run(
        &c,
        &h,
        "lat_long_no_objective",
        request(json!({"near": near("100")}), json!({})),
    );
    let r = recommendation(&p);
    let region = r["candidate"]["candidate_id"].as_str().unwrap();
    assert!(["lmg1", "ean1", "shb1"].contains(&region), "{r}");
    assert_eq!(r["candidate"]["vim-id"], format!("CloudOwner_{region}"));
    assert_eq!(r["candidate"]["inventory_type"], "cloud");
    assert_eq!(r["inventory_provider"], "aai");
}

#[test]
fn compat_has_vim_fit_and_hpa_recommendations() {
    let h = start_has();
    let c = client();

    // vim_fit, multicloud shape with get_param quantities: lmg1 (nearest, 8 vCPUs) cannot host
    // 10 vCPU / 6 GB / 250 GB; ean1 can.
    let fit = json!({"type": "vim_fit", "demands": ["vGW"], "properties": {
    "controller": "multicloud",
    "request": {
        "vCPU": 10,
        "Memory": {"quantity": {"get_param": "REQUIRED_MEM"}, "unit": "GB"},
        "Storage": {"quantity": {"get_param": "REQUIRED_DISK"}, "unit": "GB"}
    }}});
    let p = run(
        &c,
        &h,
        "vim_fit",
        request(
            json!({"near": near("100"), "check_cloud_capacity": fit}),
            by_distance(),
        ),
    );
    let r = recommendation(&p);
    assert_eq!(r["candidate"]["candidate_id"], "ean1");
    assert_eq!(r["candidate"]["vim-id"], "CloudOwner_ean1");
    assert_eq!(r["candidate"]["cloud_owner"], "CloudOwner");
    assert_eq!(r["attributes"]["physical-location-id"], "ESANQC01");
    assert_eq!(r["attributes"]["cloud_owner"], "CloudOwner");

    // OSDF's demand shape: service_type/service_resource_id on a cloud demand (HAS looks up
    // cloud regions regardless), filtering and passthrough attributes, excluded candidates.
    let mut t = request(json!({"near": near("100")}), by_distance());
    t["demands"]["vGW"] = json!([{
        "inventory_provider": "aai",
        "inventory_type": "cloud",
        "service_type": "vCPE",
        "service_resource_id": "vgw-resource-7",
        "customer_id": "compat-customer",
        "filtering_attributes": {"cloud_owner": "CloudOwner"},
        "passthrough_attributes": {"tenant-id": "t-42", "vnf-name": "vgw-compat"},
        "excluded_candidates": [{"inventory_type": "cloud", "candidate_id": ["lmg1"]}]
    }]);
    let p = run(&c, &h, "osdf_demand_shape", t);
    let r = recommendation(&p);
    assert_eq!(r["service_resource_id"], "vgw-resource-7");
    assert_eq!(r["candidate"]["vim-id"], "CloudOwner_ean1");
    assert_eq!(r["attributes"]["tenant-id"], "t-42");
    assert_eq!(r["attributes"]["vnf-name"], "vgw-compat");

    // HPA, every feature optional: the nearest region, a flavor per label, the summed score.
    let p = run(
        &c,
        &h,
        "hpa_optional_only",
        request(
            json!({"near": near("100"), "hpa_constraint": hpa(
                vec![basic(">=", 4, 4, false, Some(5)), numa(false, Some(5))],
                vec![basic(">=", 8, 16, false, Some(5)), dpdk(false, Some(5))])}),
            by_distance(),
        ),
    );
    let r = recommendation(&p);
    assert_eq!(r["candidate"]["vim-id"], "CloudOwner_lmg1");
    assert_eq!(
        r["attributes"]["flavors"],
        json!({"flavor_label_ctl": "m1.medium", "flavor_label_data": "m1.xlarge"})
    );
    assert_eq!(r["attributes"]["hpa_score"], 10.0);

    // HPA simple: no distance constraint, optional basics only.
    let p = run(
        &c,
        &h,
        "hpa_simple",
        request(
            json!({"hpa_constraint": hpa(
                vec![basic("=", 32, 64, false, Some(5))],
                vec![basic(">=", 8, 16, false, Some(5))])}),
            by_distance(),
        ),
    );
    let r = recommendation(&p);
    assert_eq!(r["candidate"]["candidate_id"], "lmg1");
    assert_eq!(r["attributes"]["hpa_score"], 5.0);

    // HPA mandatory: only shb1 offers 64 vCPU/64 GB with NUMA and 32 vCPU/128 GB with DPDK.
    let p = run(
        &c,
        &h,
        "hpa_mandatory",
        request(
            json!({"near": near("100"), "hpa_constraint": hpa(
                vec![basic("=", 64, 64, true, None), numa(true, None)],
                vec![basic("=", 32, 128, true, None), dpdk(true, None)])}),
            by_distance(),
        ),
    );
    let r = recommendation(&p);
    assert_eq!(r["candidate"]["vim-id"], "CloudOwner_shb1");
    assert_eq!(
        r["attributes"]["flavors"],
        json!({"flavor_label_ctl": "onap.hpa.numa.64", "flavor_label_data": "onap.hpa.dpdk.32"})
    );
    assert_eq!(r["attributes"]["hpa_score"], 0.0);
    // HAS's directives, with the chosen flavor (and its id) filled in.
    assert_eq!(
        r["attributes"]["directives"]["directives"][0],
        json!({"id": "vgw_ctl", "type": "vnfc", "directives": [{"type": "flavor_directives",
        "attributes": [
            {"attribute_name": "flavor_label_ctl", "attribute_value": "onap.hpa.numa.64"},
            {"attribute_name": "flavorId", "attribute_value": "f-shb-numa-64"}
        ]}]})
    );

    // HPA with mandatory instruction-set extensions (Intel64) and optional extras, by distance:
    // the nearest region with the extensions (ean1), whatever its score.
    let ctl = vec![
        basic(">=", 4, 8, true, None),
        isa_extensions(),
        numa(false, Some(3)),
    ];
    let data = vec![
        basic(">=", 4, 8, true, None),
        dpdk(false, Some(5)),
        numa(false, Some(3)),
    ];
    let p = run(
        &c,
        &h,
        "hpa_optionals",
        request(
            json!({"near": near("100"), "hpa_constraint": hpa(ctl.clone(), data.clone())}),
            by_distance(),
        ),
    );
    let r = recommendation(&p);
    assert_eq!(r["candidate"]["vim-id"], "CloudOwner_ean1");
    assert_eq!(r["attributes"]["hpa_score"], 0.0);

    // The same with the HPA score weighed in (HAS: minimize 100 * distance + 200 * hpa_score,
    // a higher score counting as better): shb1 scores 3 + 8 = 11 and wins although farther.
    let multi = json!({"minimize": {"sum": [
        {"product": [100, {"distance_between": ["customer_loc", "vGW"]}]},
        {"product": [200, {"hpa_score": ["vGW"]}]}
    ]}});
    let req = request(
        json!({"near": near("100"), "hpa_constraint": hpa(ctl, data)}),
        multi,
    );
    let p = run(&c, &h, "hpa_score_multi_objective", req.clone());
    let r = recommendation(&p);
    assert_eq!(r["candidate"]["vim-id"], "CloudOwner_shb1");
    assert_eq!(r["attributes"]["hpa_score"], 11.0);
    assert_eq!(
        r["attributes"]["flavors"],
        json!({"flavor_label_ctl": "onap.hpa.ise.numa", "flavor_label_data": "onap.hpa.dpdk.numa"})
    );
    // Deterministic: the same request, the same recommendation.
    let again = run(&c, &h, "hpa_score_multi_objective_again", req);
    assert_eq!(again["recommendations"], p["recommendations"]);
}

/// `[plans] threads` (here `BERTH_PLAN_THREADS`): a daemon whose plans search on two threads
/// answers OSDF's request with the same recommendations as one on one thread.
#[test]
fn compat_has_plan_threads_keep_the_recommendations() {
    let c = client();
    let t = request(json!({"vGW_near": near("3000")}), by_distance());
    let mut answers = Vec::new();
    for threads in ["1", "2"] {
        let h = start_has_env(&[("BERTH_PLAN_THREADS", threads)]);
        let p = run(&c, &h, "threads", t.clone());
        assert_eq!(p["status"], "done", "{threads} threads: {p}");
        answers.push(p["recommendations"].clone());
    }
    assert!(
        answers[0].as_array().is_some_and(|r| !r.is_empty()),
        "{}",
        answers[0]
    );
    assert_eq!(answers[0], answers[1]);
}

/// Seed 002 through the daemon: `[cloud_policy]` names the policy and its operator files,
/// and every plan's demands the policy names are homed by it: owners that cannot realize
/// the intent are dropped (the triage tool says why), the recommendation carries the
/// realized intent (flavor, capacity check) and the deployment cost.
#[test]
fn compat_has_cloud_policy_from_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let ex = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cloud-policy/");
    let cfg = dir.path().join("berth.toml");
    std::fs::write(
        &cfg,
        format!(
            "[cloud_policy]\npolicy = \"{ex}homing-policy.json\"\nowners = \"{ex}homing-owners.yaml\"\ncosts = \"{ex}homing-costs.yaml\"\nworkloads = \"{ex}homing-workloads.yaml\"\n"
        ),
    )
    .unwrap();
    let cfg = cfg.display().to_string();
    let h = start_has_in(dir, &[], &["--config", &cfg]);
    let c = client();
    let template = std::fs::read_to_string(format!("{ex}homing.yaml")).unwrap();
    let p = run(&c, &h, "cloud", Value::String(template));
    let r = &p["recommendations"][0]["vgw"];
    assert_eq!(p["status"], "done", "{p}");
    assert_eq!(r["candidate"]["candidate_id"], "dfw2", "{p}");
    let ri = &r["attributes"]["realized_intent"];
    assert_eq!(ri["cloud_owner"], "aws");
    assert_eq!(ri["flavor"], "c5.xlarge");
    assert_eq!(ri["isolation"]["oversubscription_percent"], 25);
    assert_eq!(ri["capacity"]["check"], "tenant");
    assert_eq!(r["attributes"]["deployment_cost"]["total"], 33.0);
    let id = p["id"].as_str().unwrap();
    let t: Value = c
        .get(format!("{}/v1/triage_tool/{id}", h.base()))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let removed = &t["triage"]["vgw"]["removed"];
    assert_eq!(removed["hou2"], "cloud-policy:intent_unsupported", "{t}");
    assert_eq!(removed["sfo1"], "cloud-policy:oversubscription_not_offered");
}

/// A `[cloud_policy]` whose documents do not load stops berthd at start, naming the
/// document and every problem.
#[test]
fn a_bad_cloud_policy_in_the_config_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let ex = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cloud-policy/");
    let workloads = dir.path().join("workloads.yaml");
    std::fs::write(&workloads, "workloads:\n  vgw: {demand: {vcpu: many}}\n").unwrap();
    let cfg = dir.path().join("berth.toml");
    std::fs::write(
        &cfg,
        format!(
            "[cloud_policy]\npolicy = \"{ex}homing-policy.json\"\nowners = \"{ex}homing-owners.yaml\"\ncosts = \"{ex}homing-costs.yaml\"\nworkloads = \"{}\"\n",
            workloads.display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_berthd"))
        .arg("--config")
        .arg(&cfg)
        .env("BERTH_LISTEN", format!("127.0.0.1:{}", free_port()))
        .env(
            "BERTH_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("berth.db").display()),
        )
        .env_remove("BERTH_PG_SCHEMA")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid [cloud_policy]")
            && err.contains("workload file")
            && err.contains("workloads.vgw.demand.vcpu (2:24): `vcpu` is \"many\""),
        "{err}"
    );
}

/// A HAS client that asks the daemon to hold its read (`Prefer: wait`) gets the final plan in
/// one read; one that does not polls as before.
#[test]
fn a_plan_read_with_prefer_wait_answers_once_the_plan_is_final() {
    let h = start_has();
    let c = client();
    let template = request(
        json!({}),
        json!({"minimize": {"sum": [{"distance_between": ["customer_loc", "vGW"]}]}}),
    );
    let (s, v) = post_plan(&c, &h, "held", template.clone());
    let url = plan_url(&h, "held", s, &v);
    let started = Instant::now();
    let r = c
        .get(&url)
        .basic_auth(USER, Some(PASSWORD))
        .header("prefer", "wait=20")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let applied = r
        .headers()
        .get("preference-applied")
        .map(|v| v.to_str().unwrap().to_owned());
    let v: Value = r.json().unwrap();
    assert_eq!(v["plans"][0]["status"], "done", "{v}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // Applied when the plan was not yet final at the first read.
    assert!(
        applied.is_none() || applied.as_deref() == Some("wait=20"),
        "{applied:?}"
    );
    // The same plan polled without the preference: the same answer.
    assert_eq!(final_plan(&c, &url), v["plans"][0]);
}
