//! `cargo xtask lint-deploy`: checks the Dockerfile, docker-compose.yml, the Kubernetes manifests
//! and the systemd unit; builds the image and waits for its health check when docker can build.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_yaml::Value;

/// Runs every check; all problems are listed before failing.
pub fn lint(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    let read = |rel: &str| {
        std::fs::read_to_string(root.join(rel)).with_context(|| format!("cannot read {rel}"))
    };
    problems.extend(dockerfile(&read("Dockerfile")?));
    problems.extend(dockerignore(&read(".dockerignore")?));
    problems.extend(compose(&read("docker-compose.yml")?));
    let mut k8s = Vec::new();
    let dir = root.join("deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    for f in &files {
        let name = format!(
            "deploy/kubernetes/{}",
            f.file_name().and_then(|n| n.to_str()).unwrap_or("?")
        );
        k8s.push((name.clone(), std::fs::read_to_string(f).context(name)?));
    }
    problems.extend(kubernetes(&k8s));
    let unit = read("deploy/systemd/berthd.service")?;
    problems.extend(systemd_keys(&unit));
    problems.extend(systemd_analyze(root, &unit));
    if !problems.is_empty() {
        bail!("deployment files:\n  {}", problems.join("\n  "));
    }
    eprintln!(
        "lint-deploy: Dockerfile, .dockerignore, docker-compose.yml, {} Kubernetes manifests and the systemd unit pass",
        k8s.len()
    );
    docker_build(root)
}

/// Instructions of a Dockerfile, continuation lines joined: `(keyword, arguments)`.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            cur.push_str(head);
            cur.push(' ');
            continue;
        }
        cur.push_str(t);
        let words: Vec<&str> = cur.split_whitespace().collect();
        if let Some((k, rest)) = words.split_first() {
            out.push((k.to_ascii_uppercase(), rest.join(" ")));
        }
        cur.clear();
    }
    out
}

/// Multi-stage, pinned bases, a locked release build, a non-root user, a health check, a data
/// volume, no remote `ADD`.
pub fn dockerfile(text: &str) -> Vec<String> {
    let mut p = Vec::new();
    let ins = instructions(text);
    let froms: Vec<&String> = ins
        .iter()
        .filter(|(k, _)| k == "FROM")
        .map(|(_, a)| a)
        .collect();
    if froms.len() < 2 {
        p.push(format!(
            "Dockerfile: {} FROM stage(s); expected a build stage and a runtime stage",
            froms.len()
        ));
    }
    let stages: BTreeSet<String> = froms
        .iter()
        .filter_map(|a| {
            let w: Vec<&str> = a.split_whitespace().collect();
            w.iter()
                .position(|x| x.eq_ignore_ascii_case("as"))
                .and_then(|i| w.get(i + 1))
                .map(|s| s.to_ascii_lowercase())
        })
        .collect();
    for a in &froms {
        let image = a
            .split_whitespace()
            .find(|w| !w.starts_with("--"))
            .unwrap_or("");
        if stages.contains(&image.to_ascii_lowercase()) || image.contains('@') {
            continue;
        }
        let tag = image.rsplit_once(':').map(|(_, t)| t).unwrap_or("");
        if tag.is_empty() || tag == "latest" || tag.contains('/') {
            p.push(format!(
                "Dockerfile: FROM `{image}` is not pinned; expected an explicit tag or digest"
            ));
        }
    }
    if !ins
        .iter()
        .any(|(k, a)| k == "RUN" && a.contains("cargo build --release --locked"))
    {
        p.push("Dockerfile: no `cargo build --release --locked` step".into());
    }
    for (k, a) in &ins {
        if k == "ADD" && (a.contains("http://") || a.contains("https://")) {
            p.push(format!(
                "Dockerfile: `ADD {a}` fetches a URL; expected COPY of sources in the context"
            ));
        }
    }
    // The runtime stage: everything after the last FROM.
    let last = ins.iter().rposition(|(k, _)| k == "FROM").unwrap_or(0);
    let run = &ins[last..];
    match run.iter().rev().find(|(k, _)| k == "USER") {
        None => {
            p.push("Dockerfile: the runtime stage has no USER; expected a non-root user".into())
        }
        Some((_, u)) => {
            let user = u.split(':').next().unwrap_or("");
            if user == "root" || user == "0" {
                p.push(format!(
                    "Dockerfile: USER `{u}` is root; expected a non-root user"
                ));
            }
        }
    }
    match run.iter().find(|(k, _)| k == "HEALTHCHECK") {
        None => p.push("Dockerfile: the runtime stage has no HEALTHCHECK".into()),
        Some((_, a)) if !a.contains("CMD") || a.trim() == "NONE" => p.push(format!(
            "Dockerfile: HEALTHCHECK `{a}` has no CMD; expected a probe of /healthz"
        )),
        Some((_, a)) if !a.contains("/healthz") && !a.contains("--healthcheck") => p.push(format!(
            "Dockerfile: HEALTHCHECK `{a}` does not probe /healthz (a URL or `berthd --healthcheck`)"
        )),
        Some(_) => {}
    }
    if !run
        .iter()
        .any(|(k, a)| k == "VOLUME" && a.contains("/var/lib/berth"))
    {
        p.push("Dockerfile: no VOLUME for /var/lib/berth".into());
    }
    p
}

fn dockerignore(text: &str) -> Vec<String> {
    let lines: BTreeSet<&str> = text.lines().map(str::trim).collect();
    ["target", ".git"]
        .iter()
        .filter(|x| !lines.contains(*x))
        .map(|x| {
            format!(".dockerignore: `{x}` is not ignored; expected it out of the build context")
        })
        .collect()
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

fn text(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

/// PostgreSQL with a health check and at least two berthd sharing it, with credentials.
pub fn compose(src: &str) -> Vec<String> {
    let doc: Value = match serde_yaml::from_str(src) {
        Ok(v) => v,
        Err(e) => return vec![format!("docker-compose.yml: {e}")],
    };
    let mut p = Vec::new();
    let Some(services) = get(&doc, &["services"]).and_then(Value::as_mapping) else {
        return vec!["docker-compose.yml: no `services` mapping".into()];
    };
    let mut pg = None;
    let mut berthd = Vec::new();
    for (name, s) in services {
        let name = name.as_str().unwrap_or("?").to_owned();
        let image = text(s.get("image"));
        if image.starts_with("postgres:") {
            pg = Some(name.clone());
            if get(s, &["healthcheck", "test"]).is_none() {
                p.push(format!(
                    "docker-compose.yml: services.{name}.healthcheck.test is missing; expected pg_isready"
                ));
            }
            if image.ends_with(":latest") {
                p.push(format!(
                    "docker-compose.yml: services.{name}.image `{image}` is not pinned"
                ));
            }
        } else if s.get("build").is_some() || image.starts_with("berth") {
            berthd.push((name, s));
        }
    }
    let Some(pg) = pg else {
        return vec!["docker-compose.yml: no postgres service".into()];
    };
    if berthd.len() < 2 {
        p.push(format!(
            "docker-compose.yml: {} berthd service(s); expected two sharing PostgreSQL",
            berthd.len()
        ));
    }
    for (name, s) in berthd {
        let env = |k: &str| text(get(s, &["environment", k])).to_owned();
        let url = env("BERTH_DATABASE_URL");
        if !url.starts_with("postgres://") || !url.contains(&format!("@{pg}:")) {
            p.push(format!(
                "docker-compose.yml: services.{name}.environment.BERTH_DATABASE_URL is `{url}`; expected postgres://…@{pg}:…"
            ));
        }
        if env("BERTH_BASIC_AUTH").is_empty() && env("BERTH_TOKENS").is_empty() {
            p.push(format!(
                "docker-compose.yml: services.{name}.environment has no BERTH_BASIC_AUTH or BERTH_TOKENS"
            ));
        }
        if get(s, &["depends_on", pg.as_str()]).is_none() {
            p.push(format!(
                "docker-compose.yml: services.{name}.depends_on does not name `{pg}`"
            ));
        }
    }
    p
}

/// A workload with hardened pods and probes, its Service, Secret and PVC, all wired by name.
pub fn kubernetes(files: &[(String, String)]) -> Vec<String> {
    let mut p = Vec::new();
    let mut docs = Vec::new();
    for (name, src) in files {
        match serde_yaml::from_str::<Value>(src) {
            Ok(v) => docs.push((name.as_str(), v)),
            Err(e) => p.push(format!("{name}: {e}")),
        }
    }
    let of_kind = |kind: &str| -> Vec<(&str, &Value)> {
        docs.iter()
            .filter(|(_, d)| text(d.get("kind")) == kind)
            .map(|(n, d)| (*n, d))
            .collect()
    };
    let names = |kind: &str| -> BTreeSet<String> {
        of_kind(kind)
            .iter()
            .map(|(_, d)| text(get(d, &["metadata", "name"])).to_owned())
            .collect()
    };
    let workloads: Vec<(&str, &Value)> = ["Deployment", "StatefulSet"]
        .iter()
        .flat_map(|k| of_kind(k))
        .collect();
    for kind in ["Service", "Secret", "PersistentVolumeClaim"] {
        if of_kind(kind).is_empty() {
            p.push(format!("deploy/kubernetes: no {kind}"));
        }
    }
    if workloads.is_empty() {
        p.push("deploy/kubernetes: no Deployment or StatefulSet".into());
    }
    let (secrets, claims) = (names("Secret"), names("PersistentVolumeClaim"));
    for (file, w) in &workloads {
        let pod = get(w, &["spec", "template", "spec"])
            .cloned()
            .unwrap_or_default();
        let labels = get(w, &["spec", "template", "metadata", "labels"])
            .cloned()
            .unwrap_or_default();
        if get(&pod, &["securityContext", "runAsNonRoot"]).and_then(Value::as_bool) != Some(true) {
            p.push(format!(
                "{file}: spec.template.spec.securityContext.runAsNonRoot is not true"
            ));
        }
        let containers = pod
            .get("containers")
            .and_then(Value::as_sequence)
            .cloned()
            .unwrap_or_default();
        if containers.is_empty() {
            p.push(format!("{file}: no containers"));
        }
        for c in &containers {
            let cname = text(c.get("name"));
            let at = format!("{file}: containers[{cname}]");
            for (key, want) in [
                ("readOnlyRootFilesystem", true),
                ("allowPrivilegeEscalation", false),
            ] {
                if get(c, &["securityContext", key]).and_then(Value::as_bool) != Some(want) {
                    p.push(format!("{at}.securityContext.{key} is not {want}"));
                }
            }
            let ports: BTreeSet<String> = c
                .get("ports")
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
                .flat_map(|x| {
                    [x.get("name"), x.get("containerPort")]
                        .into_iter()
                        .flatten()
                        .map(|v| {
                            v.as_str()
                                .map_or_else(|| v.as_u64().unwrap_or(0).to_string(), str::to_owned)
                        })
                })
                .collect();
            for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
                let got = text(get(c, &[probe, "httpGet", "path"]));
                if got != path {
                    p.push(format!(
                        "{at}.{probe}.httpGet.path is `{got}`; expected `{path}`"
                    ));
                }
                let port = get(c, &[probe, "httpGet", "port"])
                    .map(|v| {
                        v.as_str()
                            .map_or_else(|| v.as_u64().unwrap_or(0).to_string(), str::to_owned)
                    })
                    .unwrap_or_default();
                if !ports.contains(&port) {
                    p.push(format!(
                        "{at}.{probe}.httpGet.port `{port}` is not a container port"
                    ));
                }
            }
            for r in c
                .get("envFrom")
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
            {
                let s = text(get(r, &["secretRef", "name"]));
                if !s.is_empty() && !secrets.contains(s) {
                    p.push(format!(
                        "{at}.envFrom names Secret `{s}`, which no manifest defines"
                    ));
                }
            }
        }
        for v in pod
            .get("volumes")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            let c = text(get(v, &["persistentVolumeClaim", "claimName"]));
            if !c.is_empty() && !claims.contains(c) {
                p.push(format!(
                    "{file}: volume claims `{c}`, which no manifest defines"
                ));
            }
        }
        let selected = of_kind("Service").iter().any(|(_, s)| {
            get(s, &["spec", "selector"])
                .and_then(Value::as_mapping)
                .is_some_and(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)))
        });
        if !selected {
            p.push(format!(
                "{file}: no Service selects this workload's pod labels"
            ));
        }
    }
    p
}

/// Hardening settings the unit must keep.
const UNIT_KEYS: &[&str] = &[
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "StateDirectory=berth",
    "CapabilityBoundingSet=",
    "SystemCallFilter=@system-service",
    "RestrictAddressFamilies=",
];

fn systemd_keys(unit: &str) -> Vec<String> {
    let lines: Vec<&str> = unit.lines().map(str::trim).collect();
    let mut p: Vec<String> = UNIT_KEYS
        .iter()
        .filter(|k| !lines.iter().any(|l| l.starts_with(*k)))
        .map(|k| format!("deploy/systemd/berthd.service: no `{k}`"))
        .collect();
    if !lines
        .iter()
        .any(|l| *l == "DynamicUser=yes" || l.starts_with("User="))
    {
        p.push("deploy/systemd/berthd.service: neither DynamicUser=yes nor User=".into());
    }
    p
}

/// `systemd-analyze verify` (the binary path pointed at the workspace's build) and the offline
/// security score, when systemd-analyze is installed.
fn systemd_analyze(root: &Path, unit: &str) -> Vec<String> {
    let ok = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("lint-deploy: no systemd-analyze; checked the unit's hardening keys only");
        return Vec::new();
    }
    let bin = root.join("target/debug/berthd");
    let bin = if bin.is_file() {
        bin
    } else {
        PathBuf::from("/bin/true")
    };
    let dir = root.join("target/lint-deploy");
    let path = dir.join("berthd.service");
    let body = unit.replace(
        "ExecStart=/usr/local/bin/berthd",
        &format!("ExecStart={}", bin.display()),
    );
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, body)) {
        return vec![format!("cannot write {}: {e}", path.display())];
    }
    let mut p = Vec::new();
    match Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
    {
        Ok(o) if o.status.success() && o.stderr.is_empty() => {}
        Ok(o) => p.push(format!(
            "deploy/systemd/berthd.service: systemd-analyze verify: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => p.push(format!("cannot run systemd-analyze verify: {e}")),
    }
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--no-pager"])
        .arg(&path)
        .output();
    let score = out.ok().and_then(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.contains("Overall exposure level"))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse::<f64>().ok())
    });
    match score {
        Some(s) if s <= 2.0 => {
            eprintln!("lint-deploy: systemd exposure level {s} (0 best, 10 worst)")
        }
        Some(s) => p.push(format!(
            "deploy/systemd/berthd.service: exposure level {s}; expected at most 2.0"
        )),
        None => eprintln!("lint-deploy: this systemd-analyze has no offline security score"),
    }
    p
}

/// With a docker daemon: builds the image, runs it, and waits for `healthy`.
fn docker_build(root: &Path) -> Result<()> {
    let up = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !up {
        eprintln!("lint-deploy: no docker daemon; the image was not built (files linted only)");
        return Ok(());
    }
    let mut b = Command::new("docker");
    b.args(["build", "-t", "berth:ci", "."]).current_dir(root);
    crate::run("docker build -t berth:ci .", b)?;
    let out = Command::new("docker")
        .args([
            "run",
            "-d",
            "--rm",
            "-e",
            "BERTH_BASIC_AUTH=ci:ci",
            "berth:ci",
        ])
        .output()
        .context("cannot run docker")?;
    if !out.status.success() {
        bail!(
            "docker run berth:ci: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let mut health = String::new();
    for _ in 0..90 {
        let o = Command::new("docker")
            .args(["inspect", "--format", "{{.State.Health.Status}}", &id])
            .output()
            .context("cannot run docker inspect")?;
        health = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        if health == "healthy" || health == "unhealthy" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    let _ = Command::new("docker").args(["stop", &id]).output();
    if health != "healthy" {
        bail!("the berth:ci container is `{health}` after 90 s; expected healthy");
    }
    eprintln!("lint-deploy: image berth:ci built and healthy");
    Ok(())
}

#[cfg(test)]
mod tests;
