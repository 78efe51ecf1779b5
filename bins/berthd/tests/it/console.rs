//! The web console in a real headless Chromium, driven over WebDriver (chromedriver, plain
//! JSON over HTTP): every page loads behind HTTP Basic, the timeline shows a reservation made
//! through the API, and another one made while the page is open (server-sent events, no
//! reload), the utilization plot draws the "available" line, a plan made through the API
//! appears with its recommendation, the rack view draws a placement, and the browser's console
//! log holds no error. `BERTH_SCREENSHOTS=1` saves each page into `docs/guide/img/`.
//!
//! Chromium and chromedriver come from Debian packages (`apt-get install chromium
//! chromium-driver`; `.ci/run` installs them) or `BERTH_CHROMIUM` / `BERTH_CHROMEDRIVER`.
//! Without them the test fails under `CI=true` and otherwise says loudly that it skipped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use reqwest::blocking::Client;
use serde_json::{Value, json};

mod actions;

use crate::db::Db;
use crate::{Daemon, TEMPLATE, TOKEN, client, daemon_log, free_port, post, wait_plan, wait_ready};

const USER: &str = "operator";
const PASSWORD: &str = "console-pw";
/// A read-only user (`BERTH_READ_BASIC_AUTH`).
const VIEWER: &str = "viewer";
const VIEWER_PASSWORD: &str = "viewer-pw";

const INVENTORY: &str = "
candidates:
  - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0, cost: 10, cloud_owner: att, location_id: dfw, city: Dallas, state: TX, country: USA, capacity: {cores: 64, ram: 262144, instances: 32}}
  - {candidate_id: nyc, inventory_type: cloud, latitude: 40.7, longitude: -74.0, cost: 5, city: New York, state: NY, country: USA, capacity: {cores: 64, ram: 262144, instances: 32}}
";

/// Homes `vG` within 500 km of a customer in Dallas: the triage removes New York.
const NEAR: &str = "homing_template_version: 2017-10-10\nlocations: {customer: {latitude: 32.8, longitude: -96.8}}\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\nconstraints: {near_customer: {type: distance_to_location, demands: [vG], properties: {distance: < 500 km, location: customer}}}\noptimization: {minimize: {sum: [{distance_between: [customer, vG]}]}}\n";

/// The first of `names` found on `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Chromium and chromedriver, from the environment or `PATH`.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = std::env::var_os("BERTH_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| on_path(&["chromium", "chromium-browser", "google-chrome"]))?;
    let driver = std::env::var_os("BERTH_CHROMEDRIVER")
        .map(PathBuf::from)
        .or_else(|| on_path(&["chromedriver"]))?;
    Some((chromium, driver))
}

/// A chromedriver this test started; killed (by its id) when dropped.
struct Driver {
    child: Child,
    base: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One WebDriver session.
struct Session {
    http: Client,
    url: String,
}

impl Session {
    fn new(driver: &Driver, chromium: &Path) -> Session {
        let http = Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                // Root in CI containers: no sandbox; a small /dev/shm: no shared memory.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1360,900",
                         "--no-first-run", "--no-default-browser-check"],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let mut last = String::new();
        // chromedriver takes a moment to listen (longer on a loaded CI machine).
        for _ in 0..300 {
            match http
                .post(format!("{}/session", driver.base))
                .json(&caps)
                .send()
            {
                Ok(r) => {
                    let v: Value = r.json().unwrap_or(Value::Null);
                    if let Some(id) = v["value"]["sessionId"].as_str() {
                        return Session {
                            http,
                            url: format!("{}/session/{id}", driver.base),
                        };
                    }
                    panic!("chromedriver refused a session: {v}");
                }
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("chromedriver did not answer: {last}");
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.url));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let v: Value = req.send().unwrap().json().unwrap();
        if v["value"]["error"].is_string() {
            panic!("webdriver {path}: {}", v["value"]);
        }
        v["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url})));
    }

    fn js(&self, script: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// Performs WebDriver input actions (real wheel and pointer events), then releases them.
    fn actions(&self, actions: Value) {
        self.call(
            reqwest::Method::POST,
            "/actions",
            Some(json!({"actions": actions})),
        );
        self.call(reqwest::Method::DELETE, "/actions", None);
    }

    /// Waits (20 s at most) until `script` returns true.
    fn wait(&self, what: &str, script: &str) {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(20) {
            if self.js(script) == Value::Bool(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let page = self.js("return document.body.innerText.slice(0, 2000)");
        panic!(
            "timed out waiting for {what}; page: {page}; browser log: {:?}",
            self.log()
        );
    }

    /// The browser's console log since the last call: (level, message).
    fn log(&self) -> Vec<(String, String)> {
        let v = self.call(
            reqwest::Method::POST,
            "/se/log",
            Some(json!({"type": "browser"})),
        );
        v.as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["level"].as_str().unwrap_or_default().to_owned(),
                    e["message"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// Saves the viewport as `docs/guide/img/<name>.png` when `BERTH_SCREENSHOTS=1`.
    fn screenshot(&self, name: &str) {
        if std::env::var("BERTH_SCREENSHOTS").as_deref() != Ok("1") {
            return;
        }
        let b64 = self.call(reqwest::Method::GET, "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide/img");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    fn end(self) {
        let _ = self.http.delete(&self.url).send();
    }
}

/// The daemon with Basic credentials and a policy that lets a reservation cancel pending ones
/// of lower priority (so the timeline has a preemption to show).
fn start_preempting(dir: &Path, port: u16, db: &Db) -> Daemon {
    let config = dir.join("berthd.toml");
    std::fs::write(
        &config,
        "[policy.preemption]\ncancel_pending_reservations = true\n",
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.arg("--config")
        .arg(&config)
        .env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
        .env("BERTH_BASIC_AUTH", format!("{USER}:{PASSWORD}"))
        .env(
            "BERTH_READ_BASIC_AUTH",
            format!("{VIEWER}:{VIEWER_PASSWORD}"),
        )
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_LOG", "warn")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(daemon_log(dir, port));
    db.configure(&mut cmd);
    let d = Daemon {
        child: cmd.spawn().unwrap(),
        base: format!("http://127.0.0.1:{port}"),
    };
    wait_ready(d, &client())
}

fn api(c: &Client, base: &str, path: &str, body: Value) -> Value {
    let r = c
        .post(format!("{base}{path}"))
        .basic_auth(USER, Some(PASSWORD))
        .json(&body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let v: Value = r.json().unwrap_or(Value::Null);
    assert!(status < 300, "{path}: {status} {v}");
    v
}

/// The errors of a browser log but the one answer the test provoked: Chromium logs each
/// response of status `provoked[1]` from a route ending in `provoked[0]` as a failed load.
fn unexpected(log: Vec<(String, String)>, provoked: &[&str; 2]) -> Vec<(String, String)> {
    log.into_iter()
        .filter(|(level, _)| level == "SEVERE")
        .filter(|(_, m)| {
            !(m.contains(&format!("{} - Failed to load resource", provoked[0]))
                && m.contains(&format!("status of {}", provoked[1])))
        })
        .collect()
}

fn in_hours(h: i64) -> String {
    (chrono::Utc::now() + chrono::TimeDelta::hours(h)).to_rfc3339()
}

#[test]
fn console_in_chromium_shows_live_reservations_plans_and_racks() {
    let Some((chromium, chromedriver)) = browser() else {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!(
                "CI=true but Chromium or chromedriver is missing; expected `apt-get install chromium chromium-driver` (or BERTH_CHROMIUM / BERTH_CHROMEDRIVER)"
            );
        }
        eprintln!(
            "\n*** SKIPPED console_in_chromium_shows_live_reservations_plans_and_racks: no chromium + chromedriver on PATH (apt-get install chromium chromium-driver) ***\n"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inventory.yaml"), INVENTORY).unwrap();
    let db = Db::sqlite(dir.path());
    let port = free_port();
    let mut d = start_preempting(dir.path(), port, &db);
    let c = client();
    let base = d.base.clone();

    // Unauthenticated, the console is refused like the API, and asks for Basic credentials.
    let r = c.get(format!("{base}/ui/")).send().unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(
        r.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Basic")
    );

    // A provider, capacity, a reservation with an instance, and a capacity cut.
    let v = api(
        &c,
        &base,
        "/add-provider",
        json!({"provider-type": "openstack", "name": "ostack-east", "region": "RegionOne", "endpoint": "http://10.0.2.15:5000/v2.0/tokens", "tenant": {"name": "promise"}}),
    );
    let os = v["provider-id"].as_str().unwrap().to_owned();
    api(
        &c,
        &base,
        "/increase-capacity",
        json!({"zone": "edge", "source": format!("ResourceProvider:{os}"), "capacity": {"cores": "64", "ram": "131072", "instances": "32"}}),
    );
    // One that ends in two seconds: it has ended by the time the page opens.
    let v = api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "1"}, "end": (chrono::Utc::now() + chrono::TimeDelta::seconds(2)).to_rfc3339()}),
    );
    let ended = v["reservation-id"].as_str().unwrap().to_owned();
    let ends = Instant::now() + Duration::from_secs(2);
    let v = api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "8", "ram": "16384", "instances": "4"}, "start": in_hours(1), "end": in_hours(20)}),
    );
    let first = v["reservation-id"].as_str().unwrap().to_owned();
    let v = api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "4", "ram": "8192", "instances": "2"}, "end": in_hours(30)}),
    );
    let running = v["reservation-id"].as_str().unwrap().to_owned();
    // A low-priority reservation that a high-priority one preempts, and one in another pool.
    let v = api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "40"}, "priority": "low", "start": in_hours(3), "end": in_hours(9)}),
    );
    let preempted = v["reservation-id"].as_str().unwrap().to_owned();
    api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "20"}, "priority": "high", "start": in_hours(4), "end": in_hours(8)}),
    );
    api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "dfw", "capacity": {"cores": "16", "ram": "32768"}, "start": in_hours(2), "end": in_hours(12)}),
    );
    api(
        &c,
        &base,
        "/create-instance",
        json!({"reservation-id": running, "name": "vm1", "capacity": {"instances": 1, "cores": 2, "ram": 4096}}),
    );
    // One cancelled, and one fetched with the margin around the window but not in view.
    let v = api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "2"}, "start": in_hours(2), "end": in_hours(10)}),
    );
    let cancelled = v["reservation-id"].as_str().unwrap().to_owned();
    api(
        &c,
        &base,
        "/cancel-reservation",
        json!({"reservation-id": cancelled}),
    );
    api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "2"}, "start": in_hours(50), "end": in_hours(60)}),
    );
    // An over-committed pool: a decrease leaves 4 cores under a reservation of 6.
    api(
        &c,
        &base,
        "/increase-capacity",
        json!({"zone": "lab", "capacity": {"cores": "8"}}),
    );
    api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "lab", "capacity": {"cores": "6"}, "start": in_hours(1), "end": in_hours(10)}),
    );
    api(
        &c,
        &base,
        "/decrease-capacity",
        json!({"zone": "lab", "capacity": {"cores": "4"}, "start": in_hours(2)}),
    );
    std::thread::sleep(
        ends.saturating_duration_since(Instant::now()) + Duration::from_millis(1500),
    );

    let driver_port = free_port();
    let driver = Driver {
        child: Command::new(&chromedriver)
            .arg(format!("--port={driver_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        base: format!("http://127.0.0.1:{driver_port}"),
    };
    let s = Session::new(&driver, &chromium);
    let ui = format!("http://{USER}:{PASSWORD}@127.0.0.1:{port}/ui/");

    // Timeline: the reservation made before the page opened.
    s.go(&format!("{ui}#timeline"));
    s.wait(
        "the live event stream",
        "return document.body.dataset.live === 'on'",
    );
    s.wait(
        "the first reservation on the timeline",
        &format!("return !!document.querySelector('[data-reservation-id=\"{first}\"]')"),
    );
    s.wait(
        "an allocation on the timeline",
        "return document.querySelectorAll('[data-allocation-id]').length === 1",
    );
    assert_eq!(
        s.js("return [...document.querySelectorAll('[data-pool]')].map(g => g.dataset.pool)"),
        json!(["dfw/inventory", format!("edge/{os}"), "lab/default"])
    );
    // Bands are named by zone and provider name; the ids are on hover.
    let band = s.js(&format!(
        "const g = document.querySelector('[data-pool=\"edge/{os}\"]'); return [g.querySelector('.pool-label').firstChild.textContent, g.querySelector('.pool-label title').textContent, g.querySelector('.pool-detail').firstChild.textContent, g.querySelector('.pool-count').firstChild.textContent, g.dataset.reservations]"
    ));
    assert_eq!(band[0], json!("edge · ostack-east"), "{band}");
    assert!(
        band[1]
            .as_str()
            .unwrap()
            .contains(&format!("pool edge/{os}")),
        "{band}"
    );
    assert_eq!(band[2], json!("tenant promise, region RegionOne"), "{band}");
    // Seven reservations in the pool; the one 50 hours ahead is fetched but not in view.
    assert_eq!(band[3], json!("6 reservations, 1 allocation"), "{band}");
    assert_eq!(band[4], json!("6"), "{band}");
    assert_eq!(
        s.js("return document.querySelector('[data-pool=\"dfw/inventory\"] .pool-label').firstChild.textContent"),
        json!("dfw · inventory")
    );
    // Ended and cancelled reservations look unlike each other and unlike a live one.
    let looks = s.js(&format!(
        "const st = (id) => {{ const r = document.querySelector(`[data-reservation-id=\"${{id}}\"]`); const c = getComputedStyle(r); return [r.dataset.state, c.fill, c.strokeDasharray]; }}; return [st('{first}'), st('{ended}'), st('{cancelled}')]"
    ));
    assert_eq!(
        [&looks[0][0], &looks[1][0], &looks[2][0]],
        [&json!("initialized"), &json!("ended"), &json!("cancelled")],
        "{looks}"
    );
    assert_ne!(looks[0][1], looks[1][1], "{looks}");
    assert_ne!(looks[1][1], looks[2][1], "{looks}");
    assert_ne!(
        looks[2][2],
        json!("none"),
        "a cancelled bar is dashed: {looks}"
    );
    assert_eq!(
        s.js(&format!(
            "return document.querySelector('[data-reservation-id=\"{preempted}\"]').classList.contains('preempted')"
        )),
        json!(true)
    );

    // One made while the page is open arrives over SSE: the page is not reloaded.
    s.js("window.__berthMarker = 42; return true");
    let v = api(
        &c,
        &base,
        "/create-reservation",
        json!({"zone": "edge", "capacity": {"cores": "16", "ram": "32768", "instances": "8"}, "start": in_hours(6), "end": in_hours(40)}),
    );
    let live = v["reservation-id"].as_str().unwrap().to_owned();
    s.wait(
        "the reservation made while the page was open",
        &format!("return !!document.querySelector('[data-reservation-id=\"{live}\"]')"),
    );
    assert_eq!(s.js("return window.__berthMarker"), json!(42), "reloaded");
    api(
        &c,
        &base,
        "/decrease-capacity",
        json!({"source": format!("ResourcePool:edge/{os}"), "capacity": {"cores": "4"}, "start": in_hours(30)}),
    );
    s.wait(
        "the capacity change marker",
        // The console names dimensions canonically: Promise's `cores` is `vcpu`.
        "return !!document.querySelector('[data-capacity-change=\"vcpu\"]')",
    );
    // Zoom buttons change the window.
    let before = s.js("return document.getElementById('tl-range').textContent");
    s.js("document.getElementById('tl-zoom-out').click(); return true");
    assert_ne!(
        s.js("return document.getElementById('tl-range').textContent"),
        before
    );
    // Real input: the wheel over the chart zooms in, a drag pans.
    let span = |s: &Session| {
        s.js("const r = document.getElementById('tl-range').textContent.split(' — '); return Date.parse(r[1]) - Date.parse(r[0])")
            .as_f64()
            .unwrap()
    };
    let wide = span(&s);
    s.actions(json!([{"type": "wheel", "id": "wheel", "actions": [
        {"type": "scroll", "x": 700, "y": 160, "deltaX": 0, "deltaY": -300, "origin": "viewport"}]}]));
    s.wait(
        "the wheel to zoom in",
        &format!("const r = document.getElementById('tl-range').textContent.split(' — '); return Date.parse(r[1]) - Date.parse(r[0]) < {wide}"),
    );
    let zoomed = span(&s);
    let before = s.js("return document.getElementById('tl-range').textContent");
    s.actions(json!([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
        {"type": "pointerMove", "x": 700, "y": 160, "origin": "viewport"},
        {"type": "pointerDown", "button": 0},
        {"type": "pointerMove", "x": 400, "y": 160, "origin": "viewport", "duration": 100},
        {"type": "pointerUp", "button": 0}]}]));
    let after = s.js("return document.getElementById('tl-range').textContent");
    assert_ne!(after, before, "a drag pans the timeline");
    assert!(
        (span(&s) - zoomed).abs() < 60_000.0,
        "a drag keeps the zoom"
    );
    s.js("document.querySelector('[data-span=\"86400000\"]').click(); return true");
    s.wait(
        "the timeline after zooming",
        &format!("return !!document.querySelector('[data-reservation-id=\"{live}\"]')"),
    );
    s.screenshot("console-timeline");
    // One band per zone: the same records, grouped by zone.
    s.js("const g = document.getElementById('tl-group'); g.value = 'zone'; g.dispatchEvent(new Event('change')); return true");
    assert_eq!(
        s.js("return [...document.querySelectorAll('[data-pool]')].map(g => g.dataset.pool)"),
        json!(["dfw", "edge", "lab"])
    );
    assert_eq!(
        s.js("return document.querySelectorAll('[data-pool=edge] [data-reservation-id]').length"),
        json!(7)
    );
    actions::reservations(&s, &c, &base);

    // Utilization of the pool: one plot per dimension with the available line.
    s.go(&format!("{ui}#utilization"));
    s.wait(
        "the utilization plots",
        "return document.querySelectorAll('svg[data-dimension] [data-line=available]').length === 3",
    );
    // The busiest pool comes first; r2 holds 4 cores now and its instance uses 2.
    assert_eq!(
        s.js("return document.getElementById('ut-pool').value"),
        json!(format!("edge/{os}"))
    );
    assert_eq!(
        s.js("return document.querySelector('svg[data-dimension=vcpu]').parentNode.querySelector('h3').textContent"),
        json!("vcpu — capacity 64, reserved 4, allocated 2, available 60 (now)")
    );
    assert_eq!(
        s.js(&format!(
            "const o = document.querySelector('#ut-pool option[value=\"edge/{os}\"]'); return [o.textContent, o.title.includes('{os}')]"
        )),
        json!(["edge · ostack-east (tenant promise, region RegionOne) •", true])
    );
    // The over-committed pool's available line goes below its zero line.
    s.js("const p = document.getElementById('ut-pool'); p.value = 'lab/default'; p.dispatchEvent(new Event('change')); return true");
    let below = s.js(
        "const svg = document.querySelector('svg[data-dimension=vcpu]'); const zero = Number(svg.querySelector('[data-zero]').getAttribute('y1')); const ys = [...svg.querySelector('[data-line=available]').getAttribute('d').matchAll(/[ML]([-\\d.]+),([-\\d.]+)/g)].map(m => Number(m[2])); return [svg.dataset.min, Math.max(...ys) > zero + 1, [...svg.querySelectorAll('.tick')].map(t => t.textContent).includes('-2')]",
    );
    assert_eq!(below, json!(["-2", true, true]));
    s.screenshot("console-utilization");

    // A plan made through the API appears with its recommendation; one made while the page is
    // open arrives too.
    let r = c
        .post(format!("{base}/v1/plans"))
        .basic_auth(USER, Some(PASSWORD))
        .json(&json!({"name": "vcpe-dallas", "template": TEMPLATE, "num_solution": "1", "timeout": 30}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let pid = r.json::<Value>().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    s.go(&format!("{ui}#plans"));
    s.wait(
        "the plan's recommendation",
        &format!(
            "const p = document.querySelector('[data-plan-id=\"{pid}\"]'); return !!p && !!p.querySelector('[data-recommendation=\"vG\"]')"
        ),
    );
    let rec = s.js(&format!(
        "return document.querySelector('[data-plan-id=\"{pid}\"] [data-recommendation=\"vG\"]').textContent"
    ));
    assert!(rec.as_str().unwrap().contains("dfw"), "{rec}");
    let (code, second) = post(
        &c,
        &d,
        "/v1/plans",
        json!({"name": "near-customer", "template": NEAR, "num_solution": "1", "timeout": 30}),
    );
    assert_eq!(code, 201, "{second}");
    let second = second["id"].as_str().unwrap().to_owned();
    assert_eq!(wait_plan(&c, &d, &second)["status"], "done");
    s.wait(
        "the plan made while the page was open",
        &format!(
            "const p = document.querySelector('[data-plan-id=\"{second}\"]'); return !!p && p.dataset.status === 'done'"
        ),
    );
    assert_eq!(
        s.js(&format!(
            "return document.querySelector('[data-plan-id=\"{pid}\"] [data-objective]').textContent !== ''"
        )),
        json!(true)
    );
    // A proven plan shows its bound (the objective) and a gap of 0.
    let shown = s.js(&format!(
        "const p = document.querySelector('[data-plan-id=\"{pid}\"]'); return [p.querySelector('[data-objective]').textContent, p.querySelector('[data-bound]').textContent, p.querySelector('[data-gap]').textContent]"
    ));
    assert_eq!(shown[0], shown[1], "{shown}");
    assert_eq!(shown[2], json!("0%"), "{shown}");
    s.js("document.querySelectorAll('[data-triage]').forEach(d => d.open = true); return true");
    assert_eq!(
        s.js(&format!(
            "return document.querySelector('[data-plan-id=\"{second}\"] [data-triage] td:nth-child(3)').textContent"
        )),
        json!("near_customer: nyc")
    );
    assert_eq!(
        s.js(&format!(
            "return document.querySelector('[data-plan-id=\"{pid}\"] [data-triage] td:nth-child(2)').textContent"
        )),
        json!("2"),
        "both candidates of the inventory were considered"
    );
    // The map: the customer, Dallas chosen, New York removed by `near_customer` and coloured
    // as its legend says; east is right and north is up.
    let dots = s.js(&format!(
        "return [...document.querySelectorAll('[data-plan-id=\"{second}\"] svg[data-map] circle')].map(c => [c.getAttribute('class'), c.dataset.candidate || c.dataset.location, c.dataset.reason || null, Number(c.getAttribute('cx')), Number(c.getAttribute('cy')), c.getAttribute('fill')])"
    ));
    let by = |name: &str| {
        dots.as_array()
            .unwrap()
            .iter()
            .find(|d| d[1] == name)
            .unwrap_or_else(|| panic!("no {name} on the map: {dots}"))
            .clone()
    };
    let (customer, dfw, nyc) = (by("customer"), by("dfw"), by("nyc"));
    assert_eq!(dots.as_array().unwrap().len(), 3, "{dots}");
    assert_eq!(customer[0], json!("map-location"), "{dots}");
    assert_eq!(
        (&dfw[0], &dfw[2]),
        (&json!("map-candidate chosen"), &json!(null))
    );
    assert_eq!(
        (&nyc[0], &nyc[2]),
        (&json!("map-candidate removed"), &json!("near_customer"))
    );
    assert!(
        nyc[3].as_f64() > dfw[3].as_f64() && nyc[4].as_f64() < dfw[4].as_f64(),
        "{dots}"
    );
    assert_eq!(
        s.js(&format!(
            "return document.querySelector('[data-plan-id=\"{second}\"] .map-legend [data-reason=near_customer] circle').getAttribute('fill')"
        )),
        nyc[5]
    );
    assert_eq!(
        s.js(&format!(
            "const p = document.querySelector('[data-plan-id=\"{second}\"] svg[data-map] path.land'); return p.getAttribute('d').length > 10000 && p.getBBox().width > 0"
        )),
        json!(true),
        "the bundled outline is drawn"
    );
    s.screenshot("console-plans");
    actions::plans(&s, &c, &d);

    // The rack view places the bundled example template on the bundled room.
    s.go(&format!("{ui}#racks"));
    s.wait(
        "the example template",
        "return document.getElementById('rk-template').value.includes('OS::Nova::Server')",
    );
    s.js("document.getElementById('rk-place').click(); return true");
    s.wait(
        "the rack diagram",
        "const i = document.querySelector('[data-testid=rack-svg]'); return document.getElementById('rk-result').dataset.status === 'placed' && !!i && i.complete && i.naturalWidth > 0",
    );
    let rows = s.js("return document.querySelectorAll('#rk-result tr').length");
    assert_eq!(rows, json!(13), "12 servers and a header");
    s.screenshot("console-racks");

    let errors = unexpected(s.log(), &["/create-reservation", "409"]);
    assert!(errors.is_empty(), "browser console errors: {errors:?}");

    // Wrong credentials show a page that says so, not a blank one.
    s.go(&format!("http://{USER}:wrong@127.0.0.1:{port}/ui/"));
    s.wait(
        "the wrong-credentials page",
        "return document.title === 'Berth: wrong credentials'",
    );
    let text = s.js("return document.getElementById('door-text').textContent");
    assert!(
        text.as_str()
            .unwrap_or_default()
            .contains("was not accepted"),
        "{text}"
    );
    assert_eq!(
        s.js("return document.getElementById('sign-in').getAttribute('href')"),
        json!("/ui/login")
    );
    // With accepted credentials the sign-in link leads to the console, which offers sign-out
    // (the signed-out answer challenges, so a headless browser shows no page for it: the
    // router test checks its page).
    s.go(&format!(
        "http://{USER}:{PASSWORD}@127.0.0.1:{port}/ui/login"
    ));
    s.wait(
        "the console with its sign-out link",
        "return location.pathname === '/ui/' && !!document.getElementById('logout')",
    );
    assert_eq!(
        s.js("return document.getElementById('logout').getAttribute('href')"),
        json!("/ui/logout")
    );
    s.end();

    // A read-only user, in a browser of its own.
    let reader = Session::new(&driver, &chromium);
    actions::read_only(
        &reader,
        &format!("http://{VIEWER}:{VIEWER_PASSWORD}@127.0.0.1:{port}/ui/"),
        &first,
    );
    let errors = unexpected(reader.log(), &["/cancel-reservation", "403"]);
    assert!(errors.is_empty(), "reader's console errors: {errors:?}");
    reader.end();
    drop(driver);

    // An open event stream does not hold up a graceful stop: it ends when shutdown begins.
    let events = c
        .get(format!("{base}/ui/api/events"))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(events.status().as_u16(), 200);
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(d.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let t = Instant::now();
    let exit = loop {
        if let Some(exit) = d.child.try_wait().unwrap() {
            break exit;
        }
        if t.elapsed() > Duration::from_secs(15) {
            let _ = d.child.kill();
            panic!("berthd did not stop within 15 s with an event stream open");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "berthd exited with {exit}");
    assert!(events.text().unwrap().starts_with("event: ready\n"));
}

/// Reads server-sent events from `r` until one named `name` arrives (10 s at most); returns its
/// data line.
fn next_event(r: &mut reqwest::blocking::Response, name: &str) -> String {
    use std::io::Read as _;
    let t = Instant::now();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while t.elapsed() < Duration::from_secs(10) {
        if let Some(at) = text.find(&format!("event: {name}\ndata: ")) {
            let rest = &text[at..];
            if let Some(end) = rest.find("\n\n") {
                let data = rest[..end].lines().nth(1).unwrap_or_default();
                return data.trim_start_matches("data: ").to_owned();
            }
        }
        let n = r.read(&mut buf).unwrap();
        assert!(n > 0, "the event stream ended; read so far: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    panic!("no `{name}` event within 10 s; read: {text}");
}

#[test]
fn a_page_on_one_daemon_hears_of_changes_made_through_another() {
    // Two daemons on one database: the second one's event stream reports the first one's
    // commits once its timer catches up with the log (no browser needed).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inventory.yaml"), INVENTORY).unwrap();
    let db = Db::sqlite(dir.path());
    let mut a = start_preempting(dir.path(), free_port(), &db);
    let mut b = start_preempting(dir.path(), free_port(), &db);
    let c = client();
    let mut events = c
        .get(format!("{}/ui/api/events", b.base))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap();
    let ready: Value = serde_json::from_str(&next_event(&mut events, "ready")).unwrap();
    let v = api(
        &c,
        &a.base,
        "/create-reservation",
        json!({"zone": "dfw", "capacity": {"cores": "2"}, "end": in_hours(5)}),
    );
    assert_eq!(v["result"], "ok", "{v}");
    let t = Instant::now();
    let seen: Value = serde_json::from_str(&next_event(&mut events, "calendar")).unwrap();
    assert_eq!(seen["kind"], "calendar");
    assert!(
        seen["seq"].as_u64().unwrap() > ready["seq"].as_u64().unwrap(),
        "{seen} after {ready}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    drop(events);
    crate::terminate(&mut a);
    crate::terminate(&mut b);
}
