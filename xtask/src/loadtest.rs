//! `cargo xtask loadtest`: the in-process load test (no arguments, or berth-loadtest's own), or
//! cluster runs — N `berthd` processes on one database (`--daemons N --partitions P --clients C
//! --seconds S --store sqlite|postgres`) — and `--sweep`, which runs N in {1, 2, 4} in
//! `[cluster]` mode on PostgreSQL (by zone with P = N and P = 8, and `partition_key = none`)
//! plus the single-daemon SQLite default, then `zone` P = N and `none` at N = 1, 2 with a quarter
//! of the clients per daemon (the same load per writer as at N = 4), and writes docs/scaling.csv and the plot
//! docs/scaling.svg (reservations/s and reservations per CPU-second against N). `--kill-after S`
//! SIGKILLs a partition holder S seconds in and prints each partition's write-unavailability
//! window; it fails when an acknowledged reservation is missing afterwards.
//!
//! PostgreSQL comes from `BERTH_LOADTEST_PG_URL`, else a throwaway cluster started with
//! `.ci/postgres.sh` (stopped and deleted afterwards).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, root, run};

/// Flags this command reads itself; everything else goes to berth-loadtest.
struct Flags {
    sweep: bool,
    store: Option<String>,
    daemons: Option<usize>,
    seconds: Option<f64>,
    clients: Option<usize>,
    /// Cargo profile of the binaries (`release`; `profiling` adds symbols for perf).
    profile: String,
    rest: Vec<String>,
}

fn parse(args: &[String]) -> Result<Flags> {
    let mut f = Flags {
        sweep: false,
        store: None,
        daemons: None,
        seconds: None,
        clients: None,
        profile: "release".to_owned(),
        rest: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .with_context(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--sweep" => f.sweep = true,
            "--profile" => f.profile = value("--profile")?,
            "--store" => f.store = Some(value("--store")?),
            "--daemons" => {
                let v = value("--daemons")?;
                f.daemons = Some(v.parse().with_context(|| format!("--daemons `{v}`"))?);
            }
            "--seconds" => {
                let v = value("--seconds")?;
                f.seconds = Some(v.parse().with_context(|| format!("--seconds `{v}`"))?);
            }
            "--clients" => {
                let v = value("--clients")?;
                f.clients = Some(v.parse().with_context(|| format!("--clients `{v}`"))?);
            }
            _ => f.rest.push(a.clone()),
        }
    }
    Ok(f)
}

pub fn loadtest(args: &[String]) -> Result<()> {
    let f = parse(args)?;
    // Both binaries: cluster runs and `--overload` start real `berthd` processes.
    let mut b = cargo();
    b.args(["build", "--profile", &f.profile, "-p", "berthd", "--bins"]);
    run(&format!("cargo build --profile {} -p berthd", f.profile), b)?;
    if f.sweep {
        return sweep(&f);
    }
    if f.daemons.is_none() && f.store.is_none() {
        let mut l = loadtest_cmd(&f.profile);
        if let Some(c) = f.clients {
            l.args(["--clients", &c.to_string()]);
        } else if f.rest.is_empty() {
            l.args(["--clients", "64"]);
        }
        if let Some(s) = f.seconds {
            l.args(["--seconds", &s.to_string()]);
        }
        l.args(&f.rest);
        return run("berth-loadtest", l);
    }
    let store = f.store.clone().unwrap_or_else(|| "postgres".to_owned());
    let pg = if store == "postgres" {
        Some(Postgres::get()?)
    } else {
        None
    };
    let r = cluster_run(
        &store,
        pg.as_ref(),
        f.daemons.unwrap_or(1),
        f.clients.unwrap_or(32),
        f.seconds.unwrap_or(10.0),
        &f.rest,
        &f.profile,
    )?;
    println!("{}", table(std::slice::from_ref(&r)));
    if let Some(f) = r.get("failover") {
        println!("{}", failover(f));
        if f["lost"].as_u64() != Some(0) {
            bail!("acknowledged reservations were lost: {}", f["lost"]);
        }
    }
    Ok(())
}

/// The failover part of a `--kill-after` run: each partition's write-unavailability window.
fn failover(f: &Value) -> String {
    let mut out = format!(
        "killed {} at {:.1} s: {} acknowledged, {} lost, {} duplicates, {} retries\n\n| partition | held by the killed daemon | unavailable s |\n|---|---|---|\n",
        cell(&f["victim"]),
        f["killed_at_s"].as_f64().unwrap_or(0.0),
        cell(&f["acknowledged"]),
        cell(&f["lost"]),
        cell(&f["duplicates"]),
        cell(&f["retries"]),
    );
    for p in f["partitions"].as_array().into_iter().flatten() {
        let w = p["unavailable_s"]
            .as_f64()
            .map_or_else(|| "none acknowledged".to_owned(), |v| format!("{v:.2}"));
        let _ = writeln!(
            out,
            "| {} | {} | {w} |",
            cell(&p["partition"]),
            if p["held_by_victim"] == true {
                "yes"
            } else {
                "no"
            },
        );
    }
    out
}

fn loadtest_cmd(profile: &str) -> Command {
    let mut l = cargo();
    l.args([
        "run",
        "--profile",
        profile,
        "--quiet",
        "-p",
        "berthd",
        "--bin",
        "berth-loadtest",
        "--",
    ]);
    l
}

/// One cluster run; its JSON report.
fn cluster_run(
    store: &str,
    pg: Option<&Postgres>,
    daemons: usize,
    clients: usize,
    seconds: f64,
    extra: &[String],
    profile: &str,
) -> Result<Value> {
    let mut l = loadtest_cmd(profile);
    l.args(["--daemons", &daemons.to_string()])
        .args(["--clients", &clients.to_string()])
        .args(["--seconds", &seconds.to_string()])
        .args(["--store", store]);
    if let Some(pg) = pg {
        l.args(["--pg-url", &pg.url]);
        if let Some(dir) = &pg.dir {
            l.arg("--pg-data").arg(Path::new(dir).join("data"));
        }
    }
    l.args(extra);
    let shown: Vec<String> = extra.to_vec();
    eprintln!(
        "\n==> berth-loadtest --store {store} --daemons {daemons} --clients {clients} --seconds {seconds} {}",
        shown.join(" ")
    );
    let out = l.output().context("cannot run berth-loadtest")?;
    if !out.status.success() {
        bail!(
            "berth-loadtest failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .context("berth-loadtest printed no report")?;
    let v: Value = serde_json::from_str(line).context("unreadable berth-loadtest report")?;
    eprintln!("{line}");
    Ok(v)
}

/// A PostgreSQL to run on: `BERTH_LOADTEST_PG_URL`, or a throwaway cluster stopped on drop.
struct Postgres {
    url: String,
    dir: Option<String>,
}

impl Postgres {
    fn get() -> Result<Postgres> {
        if let Ok(url) = std::env::var("BERTH_LOADTEST_PG_URL")
            && !url.is_empty()
        {
            return Ok(Postgres { url, dir: None });
        }
        let out = Command::new("bash")
            .arg(".ci/postgres.sh")
            .arg("start")
            .current_dir(root())
            // A cluster of its own, never one the caller's shell points at.
            .env_remove("BERTH_TEST_POSTGRES_DIR")
            .output()
            .context("cannot run .ci/postgres.sh")?;
        if !out.status.success() {
            bail!(
                ".ci/postgres.sh start failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let var = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")))
                .map(|v| v.trim_matches('\'').to_owned())
        };
        let url = var("BERTH_TEST_POSTGRES_URL").context("no URL from .ci/postgres.sh")?;
        let dir = var("BERTH_TEST_POSTGRES_DIR");
        Ok(Postgres { url, dir })
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = Command::new("bash")
                .arg(".ci/postgres.sh")
                .arg("stop")
                .arg(dir)
                .current_dir(root())
                .status();
        }
    }
}

/// `(partition key, daemons, partitions)` of the PostgreSQL sweep, all in `[cluster]` mode:
/// by zone with P = N and with more partitions than daemons, then one calendar (`none`).
const SWEEP: [(&str, usize, usize); 9] = [
    ("zone", 1, 1),
    ("zone", 2, 2),
    ("zone", 4, 4),
    ("zone", 1, 8),
    ("zone", 2, 8),
    ("zone", 4, 8),
    ("none", 1, 8),
    ("none", 2, 8),
    ("none", 4, 8),
];

/// Layouts run again with a quarter of the clients per daemon (C/4 at N = 1, C/2 at N = 2; the
/// fixed-load N = 4 run is the third point): each partition's writer sees the same load at
/// every N, so what changes with N is the cluster's own cost, not the group-commit batch.
const PER_DAEMON: [(&str, usize, usize); 4] = [
    ("zone", 1, 1),
    ("zone", 2, 2),
    ("none", 1, 8),
    ("none", 2, 8),
];

fn sweep(f: &Flags) -> Result<()> {
    let seconds = f.seconds.unwrap_or(10.0);
    let clients = f.clients.unwrap_or(32);
    let mut rows = Vec::new();
    // The SQLite point is the zero-setup default: one daemon, no `[cluster]`.
    let plain: Vec<String> = f
        .rest
        .iter()
        .filter(|a| *a != "--cluster")
        .cloned()
        .collect();
    let sqlite_extra = [plain.clone(), vec!["--partitions".into(), "1".into()]].concat();
    rows.push(cluster_run(
        "sqlite",
        None,
        1,
        clients,
        seconds,
        &sqlite_extra,
        &f.profile,
    )?);
    let pg = Postgres::get()?;
    let per_daemon = (clients / 4).max(1);
    let runs = SWEEP.iter().map(|&(key, n, p)| (key, n, p, clients)).chain(
        PER_DAEMON
            .iter()
            .map(|&(key, n, p)| (key, n, p, per_daemon * n)),
    );
    for (key, n, p, clients) in runs {
        let extra = [
            plain.clone(),
            ["--cluster", "--partition-key", key, "--partitions"]
                .map(String::from)
                .to_vec(),
            vec![p.to_string()],
        ]
        .concat();
        rows.push(cluster_run(
            "postgres",
            Some(&pg),
            n,
            clients,
            seconds,
            &extra,
            &f.profile,
        )?);
    }
    drop(pg);
    let docs = root().join("docs");
    write(&docs.join("scaling.csv"), &csv(&rows))?;
    write(&docs.join("scaling.svg"), &svg(&rows))?;
    println!("{}", table(&rows));
    eprintln!("loadtest: wrote docs/scaling.csv and docs/scaling.svg");
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

const COLUMNS: [&str; 21] = [
    "store",
    "partition_key",
    "daemons",
    "partitions",
    "clients",
    "seconds",
    "reservations_per_s",
    "reservation_p50_ms",
    "reservation_p99_ms",
    "plans_per_s",
    "plan_p50_ms",
    "plan_p99_ms",
    "errors",
    "daemons_cpu_s",
    "postgres_cpu_s",
    "loadgen_cpu_s",
    "reservations_per_cpu_s",
    "forwarded_share",
    "load_avg_start",
    "load_avg_end",
    "cores",
];

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => format!("{x:.2}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn csv(rows: &[Value]) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for r in rows {
        let cells: Vec<String> = COLUMNS.iter().map(|c| cell(&r[*c])).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A Markdown table of the runs.
fn table(rows: &[Value]) -> String {
    let mut out = String::from(
        "| store | key | daemons | partitions | clients | reservations/s | p50 ms | p99 ms | plans/s | errors | daemons CPU s | PostgreSQL CPU s | generator CPU s | reservations/CPU-s | forwarded | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        let pg = r["postgres_cpu_s"]
            .as_f64()
            .map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {} | {:.1} | {pg} | {:.1} | {:.0} | {:.0}% | {:.1}–{:.1} |",
            cell(&r["store"]),
            cell(&r["partition_key"]),
            cell(&r["daemons"]),
            cell(&r["partitions"]),
            cell(&r["clients"]),
            f("reservations_per_s"),
            f("reservation_p50_ms"),
            f("reservation_p99_ms"),
            f("plans_per_s"),
            cell(&r["errors"]),
            f("daemons_cpu_s"),
            f("loadgen_cpu_s"),
            f("reservations_per_cpu_s"),
            f("forwarded_share") * 100.0,
            f("load_avg_start"),
            f("load_avg_end"),
        );
    }
    out
}

/// Reservations/s (left) and reservations per CPU-second of daemons + PostgreSQL (right)
/// against daemons, one line per layout on PostgreSQL (by zone with P = N and P = 8, one
/// calendar), the single-daemon SQLite run as a marked point.
fn svg(rows: &[Value]) -> String {
    let (w, h) = (760.0, 360.0);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    );
    let cores = rows.first().and_then(|r| r["cores"].as_u64()).unwrap_or(0);
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">berthd scaling on one PostgreSQL ({cores} cores; see docs/scaling.md)</text>",
        w / 2.0
    );
    for (i, (key, title)) in [
        ("reservations_per_s", "reservations/s"),
        ("reservations_per_cpu_s", "reservations per CPU-second"),
    ]
    .iter()
    .enumerate()
    {
        panel(&mut out, rows, key, title, 60.0 + i as f64 * 370.0);
    }
    out.push_str("</svg>\n");
    out
}

/// A plotted line: label, colour, which runs it takes.
type Series = (&'static str, &'static str, fn(&Value) -> bool);

fn panel(out: &mut String, rows: &[Value], key: &str, title: &str, x0: f64) {
    let (pw, ph, y0) = (290.0, 250.0, 50.0);
    let get = |r: &Value, k: &str| r[k].as_f64().unwrap_or(0.0);
    let top = rows
        .iter()
        .map(|r| get(r, key))
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let xs = |n: f64| x0 + (n - 1.0) / 3.0 * pw;
    let ys = |v: f64| y0 + ph - v / top * ph;
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{title}</text>",
        x0 + pw / 2.0,
        y0 - 8.0
    );
    let _ = writeln!(
        out,
        "<path d=\"M{x0},{y0} V{} H{}\" fill=\"none\" stroke=\"black\"/>",
        y0 + ph,
        x0 + pw
    );
    for n in [1.0, 2.0, 4.0] {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
            xs(n),
            y0 + ph + 16.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">daemons</text>",
        x0 + pw / 2.0,
        y0 + ph + 32.0
    );
    for i in 0..=4 {
        let v = top / 1.1 * f64::from(i) / 4.0;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{v:.0}</text><path d=\"M{x0},{} h{pw}\" stroke=\"#ddd\"/>",
            x0 - 4.0,
            ys(v) + 4.0,
            ys(v)
        );
    }
    let series: [Series; 3] = [
        ("zone, P = N", "#1f77b4", |r: &Value| {
            r["partition_key"] == "zone" && r["daemons"] == r["partitions"]
        }),
        ("zone, P = 8", "#d62728", |r: &Value| {
            r["partition_key"] == "zone" && r["partitions"].as_u64() == Some(8)
        }),
        ("none", "#9467bd", |r: &Value| r["partition_key"] == "none"),
    ];
    // The fixed load is the most clients of any run; the per-daemon series has a quarter of
    // it per daemon (see `PER_DAEMON`).
    let total = rows
        .iter()
        .filter_map(|r| r["clients"].as_u64())
        .max()
        .unwrap_or(0);
    let per = (total / 4).max(1);
    let lines = series
        .iter()
        .map(|&(label, color, pick)| (label.to_owned(), color, pick, None))
        .chain(
            series[..1]
                .iter()
                .chain(&series[2..])
                .map(|&(label, color, pick)| {
                    (
                        format!("{label}, {per} clients/daemon"),
                        color,
                        pick,
                        Some(per),
                    )
                }),
        );
    for (i, (label, color, pick, per_daemon)) in lines.enumerate() {
        let clients_ok = |r: &Value| {
            let c = r["clients"].as_u64().unwrap_or(0);
            match per_daemon {
                None => c == total,
                Some(per) => c == per * r["daemons"].as_u64().unwrap_or(0),
            }
        };
        let dash = if per_daemon.is_some() {
            " stroke-dasharray=\"5,3\""
        } else {
            ""
        };
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r["store"] == "postgres" && pick(r) && clients_ok(r))
            .map(|r| (get(r, "daemons"), get(r, key)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts
            .iter()
            .map(|(n, v)| format!("{:.1},{:.1}", xs(*n), ys(*v)))
            .collect();
        let _ = writeln!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            path.join(" ")
        );
        for (n, v) in &pts {
            let _ = writeln!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                xs(*n),
                ys(*v)
            );
        }
        let ly = y0 + 12.0 + i as f64 * 16.0;
        let _ = writeln!(
            out,
            "<path d=\"M{},{ly} h18\" stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{}\" y=\"{}\">PostgreSQL, {label}</text>",
            x0 + pw - 200.0,
            x0 + pw - 178.0,
            ly + 4.0
        );
    }
    if let Some(r) = rows.iter().find(|r| r["store"] == "sqlite") {
        let (cx, cy) = (xs(get(r, "daemons")), ys(get(r, key)));
        let ly = y0 + 92.0;
        let _ = writeln!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"#2ca02c\"/><rect x=\"{}\" y=\"{}\" width=\"7\" height=\"7\" fill=\"#2ca02c\"/><text x=\"{}\" y=\"{}\">SQLite, 1 daemon</text>",
            cx - 3.5,
            cy - 3.5,
            x0 + pw - 194.0,
            ly - 3.0,
            x0 + pw - 178.0,
            ly + 4.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(store: &str, n: u64, p: u64, rps: f64) -> Value {
        let key = if store == "sqlite" { "-" } else { "zone" };
        serde_json::json!({"store": store, "partition_key": key, "daemons": n, "partitions": p, "clients": 8, "seconds": 10.0,
            "reservations_per_s": rps, "reservation_p50_ms": 1.5, "reservation_p99_ms": 9.25,
            "plans_per_s": rps / 10.0, "plan_p50_ms": 20.0, "plan_p99_ms": 80.0, "errors": 0,
            "daemons_cpu_s": 8.0, "postgres_cpu_s": if store == "sqlite" { Value::Null } else { 4.5.into() },
            "loadgen_cpu_s": 3.25, "reservations_per_cpu_s": rps / 2.0, "forwarded_share": 0.5,
            "load_avg_start": 1.0, "load_avg_end": 2.5, "cores": 2})
    }

    #[test]
    fn csv_has_a_header_and_one_line_per_run() {
        let rows = [row("sqlite", 1, 1, 100.0), row("postgres", 2, 8, 250.5)];
        let text = csv(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(
            lines[2],
            "postgres,zone,2,8,8,10.00,250.50,1.50,9.25,25.05,20.00,80.00,0,8.00,4.50,3.25,125.25,0.50,1.00,2.50,2"
        );
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains(",0,8.00,,3.25,"), "{}", lines[1]);
        let t = table(&rows);
        assert!(t.contains("| 8.0 | - | 3.2 | 50 | 50% | 1.0–2.5 |"), "{t}");
    }

    #[test]
    fn the_plot_has_both_series_and_the_sqlite_point() {
        let mut none = row("postgres", 2, 8, 120.0);
        none["partition_key"] = "none".into();
        let light = |n: u64, clients: u64| {
            let mut r = row("postgres", n, n, 50.0);
            r["clients"] = clients.into();
            r
        };
        let rows = [
            row("sqlite", 1, 1, 100.0),
            row("postgres", 1, 1, 80.0),
            row("postgres", 2, 2, 150.0),
            row("postgres", 4, 8, 200.0),
            none,
            light(1, 2),
            light(2, 4),
        ];
        let s = svg(&rows);
        // The per-daemon zone line takes the two light runs, not the fixed-load ones.
        let dashed: Vec<usize> = s
            .lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-dasharray"))
            .map(|l| l.split('"').nth(1).unwrap_or("").split_whitespace().count())
            .collect();
        assert_eq!(dashed, [2, 0, 2, 0]);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        // Three fixed-load lines and two per-daemon ones, in each of the two panels.
        assert_eq!(s.matches("<polyline").count(), 10);
        assert!(s.contains("PostgreSQL, zone, P = N, 2 clients/daemon"));
        assert!(s.contains("PostgreSQL, zone, P = N") && s.contains("SQLite, 1 daemon"));
        assert!(s.contains("PostgreSQL, none") && s.contains("reservations per CPU-second"));
        assert!(s.contains("2 cores"));
    }

    #[test]
    fn flags_are_split_from_the_rest() {
        let args: Vec<String> = ["--daemons", "2", "--partitions", "4", "--store", "sqlite"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let f = parse(&args).unwrap();
        assert_eq!(f.daemons, Some(2));
        assert_eq!(f.store.as_deref(), Some("sqlite"));
        assert_eq!(f.rest, ["--partitions", "4"]);
        assert!(parse(&["--daemons".to_owned()]).is_err());
    }

    #[test]
    fn the_failover_summary_lists_every_partition() {
        let f = serde_json::json!({"victim": "loadtest-0", "killed_at_s": 5.04, "acknowledged": 1722,
            "lost": 0, "duplicates": 0, "retries": 9, "partitions": [
                {"partition": "zone-0", "held_by_victim": true, "unavailable_s": 2.6433},
                {"partition": "zone-1", "held_by_victim": false, "unavailable_s": null}]});
        let text = failover(&f);
        assert!(
            text.starts_with(
                "killed loadtest-0 at 5.0 s: 1722 acknowledged, 0 lost, 0 duplicates, 9 retries"
            ),
            "{text}"
        );
        assert!(
            text.contains("| zone-0 | yes | 2.64 |")
                && text.contains("| zone-1 | no | none acknowledged |"),
            "{text}"
        );
    }
}
