//! Client commands against a running `berthd`: `berth plan|reservation|capacity|instance ...`.
//! Answers are printed as JSON (or `-o yaml|table`), refusals as a sentence on stderr (their
//! JSON with `-o json`); exit 0 on success, 1 on a domain failure (invalid, conflict, not
//! found, plan not found/error), 2 when the daemon cannot be reached. In a cluster each write
//! goes to its partition's holder (`route.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::blocking::{Client, RequestBuilder};
use serde_json::{Value, json};

use crate::output::{Done, Report, Table, View};
use crate::route::Routes;
use crate::{exit, progress};

/// Where the daemon is and how to authenticate.
#[derive(clap::Args, Debug)]
pub struct Conn {
    /// Daemon base URL.
    #[arg(
        long,
        global = true,
        default_value = "http://127.0.0.1:8091",
        value_name = "URL"
    )]
    url: String,
    /// Bearer token.
    #[arg(long, global = true, value_name = "TOKEN")]
    token: Option<String>,
    /// HTTP Basic credentials `user:password`.
    #[arg(long, global = true, value_name = "USER:PASSWORD")]
    basic: Option<String>,
    /// Extra CA certificates (PEM) to trust for an `https://` daemon, beside the platform's.
    #[arg(long, global = true, value_name = "FILE")]
    ca_file: Option<PathBuf>,
}

/// `berth plan ...`.
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    conn: Conn,
    #[command(subcommand)]
    cmd: PlanCmd,
}

#[derive(clap::Subcommand, Debug)]
enum PlanCmd {
    /// Submit a template (YAML or JSON) as a plan.
    Create {
        /// Template file.
        template: PathBuf,
        /// Plan name (default: the file name).
        #[arg(long)]
        name: Option<String>,
        /// How many plans (`N` or `all`).
        #[arg(long, default_value = "1")]
        solutions: String,
        /// Solve time limit in seconds.
        #[arg(long)]
        timeout: Option<u64>,
        /// Wait until the plan is final and print it.
        #[arg(long)]
        wait: bool,
    },
    /// Print one plan.
    Get {
        /// Plan id.
        id: String,
    },
    /// Print every plan.
    List,
    /// Delete a plan.
    Delete {
        /// Plan id.
        id: String,
    },
}

/// `berth reservation ...`.
#[derive(clap::Args, Debug)]
pub struct ReservationArgs {
    #[command(flatten)]
    conn: Conn,
    #[command(subcommand)]
    cmd: ReservationCmd,
}

#[derive(clap::Subcommand, Debug)]
enum ReservationCmd {
    /// Reserve capacity.
    Create {
        #[command(flatten)]
        spec: Spec,
        /// Idempotency key: repeating the request returns the first answer.
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Change a reservation (given fields only).
    Update {
        /// Reservation id.
        id: String,
        #[command(flatten)]
        spec: Spec,
    },
    /// Cancel a reservation.
    Cancel {
        /// Reservation id.
        id: String,
    },
    /// Find reservations.
    Query {
        /// Zone.
        #[arg(long)]
        zone: Option<String>,
        /// Provider (pool) in the zone.
        #[arg(long)]
        provider: Option<String>,
    },
}

/// Amounts and window of a request.
#[derive(clap::Args, Debug)]
struct Spec {
    /// Zone.
    #[arg(long)]
    zone: Option<String>,
    /// Provider (pool) in the zone.
    #[arg(long)]
    provider: Option<String>,
    /// Amount: `-c cores=5 -c ram=25600`.
    #[arg(short = 'c', long = "capacity", value_name = "DIM=N", value_parser = parse_amount)]
    capacity: Vec<(String, u64)>,
    /// Start: RFC 3339, `now`, `+2h`, `tomorrow 09:00`, `2030-01-01 09:00` (UTC).
    #[arg(long, value_parser = instant, value_name = "TIME")]
    start: Option<DateTime<Utc>>,
    /// End, in the same forms as `--start` (relative forms count from now).
    #[arg(long, value_parser = instant, value_name = "TIME")]
    end: Option<DateTime<Utc>>,
}

fn instant(s: &str) -> Result<DateTime<Utc>, String> {
    crate::when::parse(s, Utc::now())
}

/// `berth capacity ...`.
#[derive(clap::Args, Debug)]
pub struct CapacityArgs {
    #[command(flatten)]
    conn: Conn,
    #[command(subcommand)]
    cmd: CapacityCmd,
}

#[derive(clap::Subcommand, Debug)]
enum CapacityCmd {
    /// Capacity per pool.
    Query {
        /// Zone.
        #[arg(long)]
        zone: Option<String>,
        /// Provider.
        #[arg(long)]
        provider: Option<String>,
        /// Include the utilization timeline.
        #[arg(long)]
        timeline: bool,
    },
    /// Add capacity to a pool.
    Increase {
        #[command(flatten)]
        spec: Spec,
    },
    /// Remove capacity from a pool.
    Decrease {
        #[command(flatten)]
        spec: Spec,
    },
}

/// `berth instance ...`.
#[derive(clap::Args, Debug)]
pub struct InstanceArgs {
    #[command(flatten)]
    conn: Conn,
    #[command(subcommand)]
    cmd: InstanceCmd,
}

#[derive(clap::Subcommand, Debug)]
enum InstanceCmd {
    /// Allocate an instance (from a reservation, or unreserved capacity in a zone).
    Create {
        /// Reservation to draw from.
        #[arg(long)]
        reservation: Option<String>,
        /// Flavor of the provider (its vCPUs, RAM and disk are the amounts).
        #[arg(long)]
        flavor: Option<String>,
        /// Instance name.
        #[arg(long)]
        name: Option<String>,
        /// Image.
        #[arg(long)]
        image: Option<String>,
        #[command(flatten)]
        spec: Spec,
    },
    /// Release an instance.
    Destroy {
        /// Instance id.
        id: String,
    },
}

fn parse_amount(s: &str) -> Result<(String, u64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected DIM=N, found `{s}`"))?;
    let n = v
        .trim()
        .parse()
        .map_err(|_| format!("`{v}` is not a non-negative integer"))?;
    Ok((k.trim().to_owned(), n))
}

impl Spec {
    fn body(&self) -> Value {
        let mut b = serde_json::Map::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                b.insert(k.to_owned(), json!(v));
            }
        };
        let rfc3339 =
            |t: &Option<DateTime<Utc>>| t.map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true));
        put("zone", self.zone.clone());
        put("provider", self.provider.clone());
        put("start", rfc3339(&self.start));
        put("end", rfc3339(&self.end));
        if !self.capacity.is_empty() {
            let cap: BTreeMap<&str, u64> = self
                .capacity
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect();
            b.insert("capacity".into(), json!(cap));
        }
        Value::Object(b)
    }
}

struct Api {
    client: Client,
    conn: Conn,
    /// The cluster's partition map, to send each write to its holder.
    routes: std::cell::RefCell<Routes>,
}

impl Api {
    fn new(conn: Conn) -> Result<Api> {
        let mut builder = Client::builder().timeout(Duration::from_secs(60));
        if let Some(path) = &conn.ca_file {
            for cert in ca_certificates(path)? {
                builder = builder.add_root_certificate(cert);
            }
        }
        let client = builder.build().context("cannot build an HTTP client")?;
        let routes = std::cell::RefCell::new(Routes::load(&conn.url));
        Ok(Api {
            client,
            conn,
            routes,
        })
    }

    fn auth(&self, r: RequestBuilder) -> RequestBuilder {
        let r = match &self.conn.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        };
        match self.conn.basic.as_deref().and_then(|b| b.split_once(':')) {
            Some((u, p)) => r.basic_auth(u, Some(p)),
            None => r,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.conn.url.trim_end_matches('/'))
    }

    /// Sends; returns the status and the JSON body (text wrapped as a string).
    fn send(&self, r: RequestBuilder) -> Result<(u16, Value)> {
        self.send_full(r).map(|(s, b, _)| (s, b))
    }

    /// Sends; returns the status, the JSON body and the headers.
    fn send_full(&self, r: RequestBuilder) -> Result<(u16, Value, reqwest::header::HeaderMap)> {
        let resp = self
            .auth(r)
            .send()
            .with_context(|| format!("cannot reach berthd at {}", self.conn.url))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().context("cannot read the response")?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Ok((status, body, headers))
    }

    fn post(&self, path: &str, body: &Value) -> Result<(u16, Value)> {
        self.write(path, body, None)
    }

    /// A POST sent to the holder of the partition `body` names (by the cached map), else to
    /// `--url`. A holder that refuses the connection is dropped from the cache and `--url`
    /// takes the write (nothing was sent); an answer showing the map stale re-reads it.
    fn write(&self, path: &str, body: &Value, key: Option<&str>) -> Result<(u16, Value)> {
        let build = |base: &str| {
            let r = self.client.post(format!("{base}{path}")).json(body);
            match key {
                Some(k) => r.header("Idempotency-Key", k),
                None => r,
            }
        };
        let base = self.routes.borrow().base(body);
        let here = self.routes.borrow().url().to_owned();
        let (status, value, headers) = match self.send_full(build(&base)) {
            Err(e)
                if base != here
                    && e.downcast_ref::<reqwest::Error>()
                        .is_some_and(reqwest::Error::is_connect) =>
            {
                self.routes.borrow_mut().store(None);
                self.send_full(build(&here))?
            }
            other => other?,
        };
        if Routes::stale(status, &headers) {
            let map = self
                .send_full(self.client.get(self.url("/v1/cluster")))
                .ok()
                .filter(|(s, _, _)| *s == 200)
                .and_then(|(_, v, _)| serde_json::from_value(v).ok());
            self.routes.borrow_mut().store(map);
        }
        Ok((status, value))
    }

    fn get(&self, path: &str) -> Result<(u16, Value)> {
        self.send(self.client.get(self.url(path)))
    }

    /// A GET the daemon may hold up to `secs` for a change (`Prefer: wait`, RFC 7240; a
    /// daemon that ignores it answers at once).
    fn get_waiting(&self, path: &str, secs: u64) -> Result<(u16, Value)> {
        let r = self.client.get(self.url(path));
        self.send(r.header("prefer", format!("wait={secs}")))
    }

    fn delete(&self, path: &str) -> Result<(u16, Value)> {
        self.send(self.client.delete(self.url(path)))
    }
}

/// The body to print and the exit code of the status (5xx: 2, other errors: 1).
fn report(answer: (u16, Value)) -> Result<Done> {
    report_rows(answer, None)
}

/// [`report`] whose table shows the answer's `list` member (one row per reservation, pool).
fn report_rows((status, body): (u16, Value), list: Option<&str>) -> Result<Done> {
    let code = match status {
        200..=299 => exit::OK,
        500..=599 => exit::USAGE,
        _ => exit::DOMAIN,
    };
    let error = (code != exit::OK).then(|| refusal(status, &body));
    let mut done = if body.is_null() {
        Done::code(code)
    } else {
        let report = match list {
            Some(list) => Report::json_rows(body, list),
            None => Report::json(body, &[]),
        };
        Done::new(report, code)
    };
    done.error = error;
    Ok(done)
}

/// A daemon's refusal as a sentence: the status, then the message each dialect carries
/// (Promise `message`, HAS `error_message.explanation`, RFC 9457 `title` and `detail`).
fn refusal(status: u16, body: &Value) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let message = text(&body["message"])
        .or_else(|| text(&body["error_message"]["explanation"]))
        .or_else(|| text(&body["error_message"]))
        .or_else(|| match (text(&body["title"]), text(&body["detail"])) {
            (Some(t), Some(d)) => Some(format!("{t}: {d}")),
            (t, d) => t.or(d),
        })
        .or_else(|| text(body))
        .unwrap_or_else(|| body.to_string());
    let mut out = format!("berthd answered {status} {reason}: {message}");
    if let Some(offers) = body["offers"].as_array().filter(|o| !o.is_empty()) {
        out.push_str(&format!(
            "; {} offer(s) would fit (`-o json` shows them)",
            offers.len()
        ));
    }
    out
}

/// The columns of a reservation a person reads; `-o json` keeps every field.
fn reservation_table(answer: &Value) -> Table {
    let amounts = |v: &Value| {
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, n)| {
                        format!(
                            "{k}={}",
                            n.as_str().map_or_else(|| n.to_string(), str::to_owned)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    let text = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut t = Table::new(&[
        "id",
        "zone",
        "provider",
        "state",
        "priority",
        "start",
        "end",
        "amounts",
        "remaining",
        "active",
    ]);
    for r in answer["details"].as_array().into_iter().flatten() {
        t.row(vec![
            text(&r["reservation-id"]),
            text(&r["zone"]),
            text(&r["provider"]),
            text(&r["state"]),
            text(&r["priority"]),
            text(&r["start"]),
            text(&r["end"]),
            amounts(&r["capacity"]),
            amounts(&r["remaining"]),
            text(&r["active"]),
        ]);
    }
    t
}

/// Runs `berth plan ...`.
pub fn plan(args: PlanArgs, quiet: bool) -> Result<Done> {
    let api = Api::new(args.conn)?;
    match args.cmd {
        PlanCmd::Create {
            template,
            name,
            solutions,
            timeout,
            wait,
        } => {
            let text = std::fs::read_to_string(&template)
                .with_context(|| format!("cannot read template {}", template.display()))?;
            let name = name.unwrap_or_else(|| {
                template
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "plan".into())
            });
            let mut body = json!({"name": name, "template": text, "num_solution": solutions});
            if let Some(t) = timeout {
                body["timeout"] = json!(t);
            }
            let (status, created) = api.post("/v1/plans", &body)?;
            if !wait || status != 201 {
                return report((status, created));
            }
            let Some(id) = created["id"].as_str() else {
                bail!("the daemon answered without a plan id")
            };
            let started = Instant::now();
            let live = progress::Live::start("waiting", quiet);
            loop {
                // The daemon answers when the plan ends, or after 10 s so the status shown
                // moves on.
                let (s, v) = api.get_waiting(&format!("/v1/plans/{id}"), 10)?;
                let st = v["plans"][0]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                live.say(format!("plan {id}: {st}"));
                if s != 200 || ["done", "not found", "error"].contains(&st.as_str()) {
                    let mut done = report((s, v))?;
                    if st != "done" {
                        done.code = done.code.max(exit::DOMAIN);
                    }
                    return Ok(done);
                }
                if started.elapsed() > Duration::from_secs(3600) {
                    bail!("plan {id} is still `{st}` after an hour");
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        PlanCmd::Get { id } => report(api.get(&format!("/v1/plans/{id}"))?),
        PlanCmd::List => report(api.get("/v1/plans")?),
        PlanCmd::Delete { id } => report(api.delete(&format!("/v1/plans/{id}"))?),
    }
}

/// Runs `berth reservation ...`.
pub fn reservation(args: ReservationArgs) -> Result<Done> {
    let api = Api::new(args.conn)?;
    match args.cmd {
        ReservationCmd::Create {
            spec,
            idempotency_key,
        } => report(api.write(
            "/create-reservation",
            &spec.body(),
            idempotency_key.as_deref(),
        )?),
        ReservationCmd::Update { id, spec } => {
            let mut body = spec.body();
            body["reservation-id"] = json!(id);
            report(api.post("/update-reservation", &body)?)
        }
        ReservationCmd::Cancel { id } => {
            report(api.post("/cancel-reservation", &json!({"reservation-id": id}))?)
        }
        ReservationCmd::Query { zone, provider } => {
            let answer = api.post(
                "/query-reservation",
                &json!({"zone": zone, "provider": provider}),
            )?;
            let table = reservation_table(&answer.1);
            let mut done = report(answer)?;
            if let Some(r) = done.report.as_mut() {
                r.table = View::Grid(table);
            }
            Ok(done)
        }
    }
}

/// Runs `berth capacity ...`.
pub fn capacity(args: CapacityArgs) -> Result<Done> {
    let api = Api::new(args.conn)?;
    match args.cmd {
        CapacityCmd::Query {
            zone,
            provider,
            timeline,
        } => report_rows(
            api.post(
                "/query-capacity",
                &json!({"zone": zone, "provider": provider, "show-utilization": timeline}),
            )?,
            Some("capacity"),
        ),
        CapacityCmd::Increase { spec } => report(api.post("/increase-capacity", &spec.body())?),
        CapacityCmd::Decrease { spec } => report(api.post("/decrease-capacity", &spec.body())?),
    }
}

/// Runs `berth instance ...`.
pub fn instance(args: InstanceArgs) -> Result<Done> {
    let api = Api::new(args.conn)?;
    match args.cmd {
        InstanceCmd::Create {
            reservation,
            flavor,
            name,
            image,
            spec,
        } => {
            let mut body = spec.body();
            // `create-instance` names its provider `provider-id`.
            if let Some(p) = body.as_object_mut().and_then(|b| b.remove("provider")) {
                body["provider-id"] = p;
            }
            for (k, v) in [
                ("reservation-id", reservation),
                ("flavor", flavor),
                ("name", name),
                ("image", image),
            ] {
                if let Some(v) = v {
                    body[k] = json!(v);
                }
            }
            report(api.post("/create-instance", &body)?)
        }
        InstanceCmd::Destroy { id } => {
            report(api.post("/destroy-instance", &json!({"instance-id": id}))?)
        }
    }
}

/// The certificates of a PEM bundle; an unreadable file or one without a certificate is an
/// error naming the file.
pub fn ca_certificates(path: &std::path::Path) -> Result<Vec<reqwest::Certificate>> {
    let pem =
        std::fs::read(path).with_context(|| format!("cannot read CA file {}", path.display()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .with_context(|| format!("CA file {} is not a PEM certificate bundle", path.display()))?;
    if certs.is_empty() {
        bail!(
            "CA file {} holds no certificate; expected PEM `BEGIN CERTIFICATE` blocks",
            path.display()
        );
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_and_bodies_carry_only_given_fields() {
        assert_eq!(parse_amount("cores=5"), Ok(("cores".to_owned(), 5)));
        assert!(parse_amount("cores").is_err());
        assert!(parse_amount("cores=-1").is_err());
        let spec = Spec {
            zone: Some("z".into()),
            provider: None,
            capacity: vec![("cores".into(), 5)],
            start: None,
            end: Some(crate::when::parse("2030-01-01T00:00:00Z", Utc::now()).unwrap()),
        };
        assert_eq!(
            spec.body(),
            json!({"zone": "z", "end": "2030-01-01T00:00:00Z", "capacity": {"cores": 5}})
        );
    }

    #[test]
    fn ca_files_load_every_certificate_and_bad_ones_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let pem = |name: &str| {
            let key = rcgen::KeyPair::generate().unwrap();
            rcgen::CertificateParams::new(vec![name.to_owned()])
                .unwrap()
                .self_signed(&key)
                .unwrap()
                .pem()
        };
        let bundle = dir.path().join("bundle.pem");
        std::fs::write(&bundle, format!("{}{}", pem("a"), pem("b"))).unwrap();
        assert_eq!(ca_certificates(&bundle).unwrap().len(), 2);

        let missing = dir.path().join("missing.pem");
        let e = format!("{:#}", ca_certificates(&missing).unwrap_err());
        assert!(
            e.contains("cannot read CA file") && e.contains("missing.pem"),
            "{e}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "no certificates here\n").unwrap();
        let e = format!("{:#}", ca_certificates(&empty).unwrap_err());
        assert!(
            e.contains("empty.pem") && e.contains("BEGIN CERTIFICATE"),
            "{e}"
        );
    }

    #[test]
    fn statuses_map_to_exit_codes() {
        let code = |r: (u16, Value)| report(r).ok().map(|d| d.code);
        assert_eq!(code((201, Value::Null)), Some(exit::OK));
        assert_eq!(
            code((409, json!({"result": "conflict"}))),
            Some(exit::DOMAIN)
        );
        assert_eq!(code((503, Value::Null)), Some(exit::USAGE));
    }
}
