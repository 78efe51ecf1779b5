//! The deployment linter on the committed files (clean) and on broken copies (each fault named).

use super::*;

fn root() -> PathBuf {
    crate::root()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

fn k8s_files() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(root().join("deploy/kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_committed_files_pass() {
    assert_eq!(dockerfile(&read("Dockerfile")), Vec::<String>::new());
    assert_eq!(dockerignore(&read(".dockerignore")), Vec::<String>::new());
    assert_eq!(compose(&read("docker-compose.yml")), Vec::<String>::new());
    assert_eq!(kubernetes(&k8s_files()), Vec::<String>::new());
    assert_eq!(
        systemd_keys(&read("deploy/systemd/berthd.service")),
        Vec::<String>::new()
    );
}

#[test]
fn a_single_stage_root_image_without_health_check_is_refused() {
    let bad = "FROM rust:latest\nADD https://example.com/x.tgz /x\n\
               RUN cargo build --release \\\n  --locked -p berthd\nUSER root\n";
    assert_eq!(
        dockerfile(bad),
        vec![
            "Dockerfile: 1 FROM stage(s); expected a build stage and a runtime stage".to_owned(),
            "Dockerfile: FROM `rust:latest` is not pinned; expected an explicit tag or digest".into(),
            "Dockerfile: `ADD https://example.com/x.tgz /x` fetches a URL; expected COPY of sources in the context".into(),
            "Dockerfile: USER `root` is root; expected a non-root user".into(),
            "Dockerfile: the runtime stage has no HEALTHCHECK".into(),
            "Dockerfile: no VOLUME for /var/lib/berth".into(),
        ]
    );
}

#[test]
fn compose_without_shared_postgres_or_credentials_is_refused() {
    let bad = "services:\n  postgres:\n    image: postgres:16\n  a:\n    build: .\n    environment:\n      BERTH_DATABASE_URL: sqlite:///x.db\n";
    assert_eq!(
        compose(bad),
        vec![
            "docker-compose.yml: services.postgres.healthcheck.test is missing; expected pg_isready".to_owned(),
            "docker-compose.yml: 1 berthd service(s); expected two sharing PostgreSQL".into(),
            "docker-compose.yml: services.a.environment.BERTH_DATABASE_URL is `sqlite:///x.db`; expected postgres://…@postgres:…".into(),
            "docker-compose.yml: services.a.environment has no BERTH_BASIC_AUTH or BERTH_TOKENS".into(),
            "docker-compose.yml: services.a.depends_on does not name `postgres`".into(),
        ]
    );
}

#[test]
fn a_weakened_deployment_is_refused_with_each_fault() {
    let mut files = k8s_files();
    let (_, dep) = files
        .iter_mut()
        .find(|(n, _)| n == "deployment.yaml")
        .unwrap();
    *dep = dep
        .replace(
            "readOnlyRootFilesystem: true",
            "readOnlyRootFilesystem: false",
        )
        .replace("path: /readyz", "path: /healthz")
        .replace("name: berth-credentials", "name: other-secret");
    files.retain(|(n, _)| n != "pvc.yaml");
    assert_eq!(
        kubernetes(&files),
        vec![
            "deploy/kubernetes: no PersistentVolumeClaim".to_owned(),
            "deployment.yaml: containers[berthd].securityContext.readOnlyRootFilesystem is not true".into(),
            "deployment.yaml: containers[berthd].readinessProbe.httpGet.path is `/healthz`; expected `/readyz`".into(),
            "deployment.yaml: containers[berthd].envFrom names Secret `other-secret`, which no manifest defines".into(),
            "deployment.yaml: volume claims `berth-data`, which no manifest defines".into(),
        ]
    );
}

#[test]
fn a_unit_missing_hardening_is_refused() {
    let unit = read("deploy/systemd/berthd.service")
        .replace("ProtectSystem=strict\n", "")
        .replace("DynamicUser=yes\n", "");
    assert_eq!(
        systemd_keys(&unit),
        vec![
            "deploy/systemd/berthd.service: no `ProtectSystem=strict`".to_owned(),
            "deploy/systemd/berthd.service: neither DynamicUser=yes nor User=".into(),
        ]
    );
}
