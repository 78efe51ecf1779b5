//! Loading: layering, every problem reported with its place, the SQLite directory rule.

use super::*;

#[test]
fn defaults_file_and_env_layer() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.toml");
    std::fs::write(
        &f,
        "listen = \"127.0.0.1:9000\"\n[auth]\ntokens = [\"t1\"]\nread_tokens = [\"r1\", \"r2\"]\nbasic = [{user = \"v\", password = \"w\", read_only = true}]\n[plans]\nworkers = 3\nthreads = 4\nclaim_secs = 12\nnode = \"east-1\"\n[journal]\nmax_batch = 64\n[notify]\nrequire_https = true\n[server]\ntls_cert = \"c.pem\"\ntls_key = \"k.pem\"\n",
    )
    .unwrap();
    let env = |k: &str| match k {
        "BERTH_DATABASE_URL" => Some("sqlite::memory:".to_owned()),
        "BERTH_BASIC_AUTH" => Some("a:b".to_owned()),
        "BERTH_SNAPSHOT_EVERY" => Some("0".to_owned()),
        "BERTH_NOTIFY_CA_FILE" => Some("/etc/ca.pem".to_owned()),
        "BERTH_PG_SCHEMA" => Some("b1".to_owned()),
        "BERTH_READ_TOKENS" => Some("r3".to_owned()),
        "BERTH_READ_BASIC_AUTH" => Some("ro:pw".to_owned()),
        _ => None,
    };
    let c = Config::load(Some(&f), env).unwrap();
    assert_eq!(c.plans.threads, 4);
    let threads = |k: &str| (k == "BERTH_PLAN_THREADS").then(|| "2".to_owned());
    assert_eq!(Config::load(Some(&f), threads).unwrap().plans.threads, 2);
    let bad = |k: &str| (k == "BERTH_PLAN_THREADS").then(|| "many".to_owned());
    let e = Config::load(Some(&f), bad).unwrap_err().to_string();
    assert!(e.contains("BERTH_PLAN_THREADS"), "{e}");
    let bad = |k: &str| (k == "BERTH_PLAN_THREADS").then(|| "1000".to_owned());
    let e = Config::load(Some(&f), bad).unwrap_err().to_string();
    assert!(
        e.contains("[plans] threads is 1000; expected at most 256"),
        "{e}"
    );
    assert_eq!((c.journal.max_batch, c.journal.snapshot_every), (64, 0));
    assert_eq!(c.listen.port(), 9000);
    assert_eq!(c.database_url, "sqlite::memory:");
    assert_eq!(c.plans.workers, 3);
    assert_eq!(
        (c.plans.claim_secs, c.plans.node.as_deref()),
        (12, Some("east-1"))
    );
    assert_eq!(
        c.notify,
        Notify {
            ca_file: Some(PathBuf::from("/etc/ca.pem")),
            require_https: true,
            allow_private_callbacks: false,
        }
    );
    assert_eq!(c.pg_schema.as_deref(), Some("b1"));
    assert_eq!(c.server.tls_key, Some(PathBuf::from("k.pem")));
    assert!(!c.auth_off());
    assert_eq!(c.auth.tokens, ["t1"]);
    assert_eq!(c.auth.read_tokens, ["r1", "r2", "r3"]);
    assert_eq!(
        c.auth
            .basic
            .iter()
            .map(|b| (b.user.as_str(), b.read_only))
            .collect::<Vec<_>>(),
        [("v", true), ("a", false), ("ro", true)]
    );
    assert_eq!(Config::load(None, |_| None).unwrap(), Config::default());
}

#[test]
fn cluster_settings_from_file_and_env() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.toml");
    std::fs::write(
        &f,
        "[cluster]\nenabled = true\nnode_id = \"a\"\nlease_secs = 5\nisolation = \"serializable\"\n",
    )
    .unwrap();
    let c = Config::load(Some(&f), |_| None).unwrap();
    assert_eq!(
        c.cluster,
        Cluster {
            enabled: true,
            node_id: Some("a".into()),
            advertise_url: None,
            lease_secs: 5,
            isolation: Isolation::Serializable,
            partition_key: PartitionKey::Zone,
        }
    );
    let env = |k: &str| match k {
        "BERTH_NODE_ID" => Some("b".to_owned()),
        "BERTH_ADVERTISE_URL" => Some("http://10.0.0.2:8091".to_owned()),
        "BERTH_LEASE_SECS" => Some("2".to_owned()),
        "BERTH_PG_ISOLATION" => Some("read-committed".to_owned()),
        "BERTH_CLUSTER_PARTITION_KEY" => Some("pool".to_owned()),
        _ => None,
    };
    let c = Config::load(Some(&f), env).unwrap();
    assert_eq!(c.cluster.node_id.as_deref(), Some("b"));
    assert_eq!(
        c.cluster.advertise_url.as_deref(),
        Some("http://10.0.0.2:8091")
    );
    assert_eq!(
        (c.cluster.lease_secs, c.cluster.isolation),
        (2, Isolation::ReadCommitted)
    );
    assert_eq!(c.cluster.partition_key, PartitionKey::Pool);
    let e = Config::load(None, |k| {
        (k == "BERTH_CLUSTER_PARTITION_KEY").then(|| "rack".into())
    })
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "BERTH_CLUSTER_PARTITION_KEY `rack` is not one of zone, provider, pool, none"
    );
    std::fs::write(&f, "[cluster]\npartition_key = \"provider\"\n").unwrap();
    let c = Config::load(Some(&f), |_| None).unwrap();
    assert_eq!(c.cluster.partition_key, PartitionKey::Provider);
    std::fs::write(&f, "[cluster]\npartition_key = \"rack\"\n").unwrap();
    let e = Config::load(Some(&f), |_| None).unwrap_err().to_string();
    assert!(e.contains("cluster.partition_key (2:17)"), "{e}");
    let e = Config::load(None, |k| {
        (k == "BERTH_PG_ISOLATION").then(|| "snapshot".into())
    })
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "BERTH_PG_ISOLATION `snapshot` is not one of read-committed, serializable"
    );
    let e = Config::load(None, |k| (k == "BERTH_LEASE_SECS").then(|| "0".into())).unwrap_err();
    assert!(e.to_string().contains("expected at least 1 second"), "{e}");
    let e = Config::load(None, |k| match k {
        "BERTH_CLUSTER" => Some("true".into()),
        "BERTH_LISTEN" => Some("0.0.0.0:8091".into()),
        _ => None,
    })
    .unwrap_err();
    assert!(e.to_string().contains("set [cluster] advertise_url"), "{e}");
    std::fs::write(&f, "[cluster]\nisolation = \"snapshot\"\n").unwrap();
    let e = Config::load(Some(&f), |_| None).unwrap_err().to_string();
    assert!(e.contains("cluster.isolation (2:13)"), "{e}");
}

#[test]
fn bad_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.toml");
    std::fs::write(&f, "listn = 1\n").unwrap();
    assert!(Config::load(Some(&f), |_| None).is_err());
    assert!(Config::load(None, |k| (k == "BERTH_LISTEN").then(|| "nope".to_owned())).is_err());
    let half = Config::load(None, |k| {
        (k == "BERTH_TLS_CERT").then(|| "c.pem".to_owned())
    });
    assert!(half.unwrap_err().to_string().contains("tls_key"));
    let open = Config {
        listen: "0.0.0.0:8091".parse().unwrap(),
        ..Config::default()
    };
    let e = open.check_auth().unwrap_err();
    assert!(
        e.to_string().contains("0.0.0.0:8091 is not a loopback"),
        "{e}"
    );
    assert!(Config::default().check_auth().is_ok());
    assert!(Config::default().auth_off());
}

#[test]
fn placeholder_and_well_known_secrets_are_refused_by_name() {
    let env = |listen: &'static str, auth: &'static str| {
        move |k: &str| match k {
            "BERTH_LISTEN" => Some(listen.to_owned()),
            "BERTH_BASIC_AUTH" => Some(auth.to_owned()),
            "BERTH_TOKENS" => Some(format!("ok-token,{}", PLACEHOLDER_SECRET)),
            _ => None,
        }
    };
    // The deploy files' placeholder is refused everywhere, a token's too, each by name.
    let cfg = Config::load(
        None,
        env("127.0.0.1:8091", "admin1:REPLACE-WITH-A-GENERATED-SECRET"),
    )
    .unwrap();
    assert_eq!(
        cfg.placeholder_secrets(),
        [
            "basic user `admin1` has the placeholder password `REPLACE-WITH-A-GENERATED-SECRET`; generate one (`openssl rand -base64 24`)",
            "[auth] tokens holds the placeholder `REPLACE-WITH-A-GENERATED-SECRET`; generate one (`openssl rand -hex 32`)",
        ]
    );
    let e = cfg.check_auth().unwrap_err().to_string();
    assert!(
        e.contains("basic user `admin1` has the placeholder password"),
        "{e}"
    );
    // `change-me` is fine for a loopback demo, refused where others reach the daemon.
    let local = Config::load(None, |k| {
        (k == "BERTH_BASIC_AUTH").then(|| "admin1:change-me".to_owned())
    })
    .unwrap();
    assert!(local.check_auth().is_ok());
    let mut open = local.clone();
    open.listen = "0.0.0.0:8091".parse().unwrap();
    let e = open.check_auth().unwrap_err().to_string();
    assert!(
        e.contains("basic user `admin1` has the placeholder password `change-me`"),
        "{e}"
    );
    open.auth.basic[0].password = "x7Vq2n0sR4".into();
    assert!(open.check_auth().is_ok());
}

#[test]
fn parse_errors_name_the_field_and_where_it_is() {
    let p = Path::new("b.toml");
    let e = Config::parse(p, "listen = \"127.0.0.1:1\"\n[plans]\nworkers = \"two\"\n").unwrap_err();
    let ConfigError::Parse {
        field,
        line,
        column,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!((field.as_str(), *line, *column), ("plans.workers", 3, 11));
    assert_eq!(
        e.to_string(),
        "invalid config b.toml: plans.workers (3:11): invalid type: string \"two\", expected usize"
    );
    let e = Config::parse(p, "[journal]\nmax_bach = 3\n").unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("journal")
            && msg.contains("(2:1)")
            && msg.contains("unknown field `max_bach`"),
        "{msg}"
    );
    let e = Config::parse(p, "listen = \"nowhere\"\n").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid config b.toml: listen (1:10): "),
        "{e}"
    );
    let e = Config::parse(p, "[server\n").unwrap_err();
    assert!(matches!(e, ConfigError::Parse { line: 1, .. }), "{e:?}");
    let e = Config::load(None, |k| {
        (k == "BERTH_MAX_BATCH").then(|| "lots".to_owned())
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "BERTH_MAX_BATCH `lots` is not a number");
}

/// Each problem as `field (line:column)` or the variable, in the order reported.
fn places(e: &ConfigError) -> Vec<String> {
    e.problems()
        .iter()
        .map(|p| match p {
            ConfigError::Parse {
                field,
                line,
                column,
                ..
            } => format!("{field} ({line}:{column})"),
            ConfigError::Env { var, .. } => (*var).to_owned(),
            ConfigError::Invalid { field, .. } => format!("invalid {field}"),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn every_problem_of_a_file_is_reported_in_document_order() {
    let p = Path::new("b.toml");
    let text = "[plans]\nworkers = \"two\"\nthreads = 2\n[journal]\nmax_bach = 3\nsnapshot_every = \"often\"\n[limits]\nmax_inflight = 3\n";
    let e = Config::parse(p, text).unwrap_err();
    assert_eq!(
        places(&e),
        [
            "plans.workers (2:11)",
            "journal (5:1)",
            "journal.snapshot_every (6:18)",
            "limits (8:1)"
        ]
    );
    let msg = e.to_string();
    assert!(msg.starts_with("4 problems in the config: "), "{msg}");
    assert!(msg.contains("unknown field `max_bach`"), "{msg}");
    assert!(msg.contains("unknown field `max_inflight`"), "{msg}");
    // What was right is kept around what was wrong.
    let fine = Config::parse(p, "[plans]\nthreads = 2\n").unwrap();
    assert_eq!(fine.plans.threads, 2);
}

#[test]
fn array_elements_keep_their_own_index() {
    let p = Path::new("b.toml");
    let e = Config::parse(
        p,
        "[auth]\ntokens = [1, \"t\", 2]\n[[auth.basic]]\nuser = \"a\"\n[[auth.basic]]\nuser = \"b\"\npassword = \"c\"\n[[auth.basic]]\nuser = \"d\"\npasword = \"e\"\n",
    )
    .unwrap_err();
    assert_eq!(
        places(&e),
        [
            "auth.tokens[0] (2:11)",
            "auth.tokens[2] (2:19)",
            "auth.basic[0] (3:1)",
            "auth.basic[2] (8:1)",
            "auth.basic[2] (10:1)"
        ],
        "{e}"
    );
}

#[test]
fn syntax_errors_are_all_reported_with_the_schema_errors_of_other_lines() {
    let p = Path::new("b.toml");
    let e = Config::parse(p, "listen = \n[plans]\nworkers = \"two\"\n[server\n").unwrap_err();
    let at = places(&e);
    assert_eq!(at.len(), 3, "{e}");
    assert!(at.iter().any(|a| a.ends_with("(1:10)")), "{at:?}");
    assert!(at.iter().any(|a| a == "plans.workers (3:11)"), "{at:?}");
    assert!(at.iter().any(|a| a.starts_with(" (4:")), "{at:?}");
}

#[test]
fn file_environment_and_cross_field_problems_come_together() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.toml");
    std::fs::write(&f, "[journal]\nmax_bach = 3\n[plans]\nclaim_secs = 0\n").unwrap();
    let env = |k: &str| match k {
        "BERTH_PLAN_THREADS" => Some("many".to_owned()),
        "BERTH_LEASE_SECS" => Some("0".to_owned()),
        "BERTH_PG_ISOLATION" => Some("snapshot".to_owned()),
        "BERTH_BASIC_AUTH" => Some("nocolon".to_owned()),
        "BERTH_TLS_CERT" => Some("c.pem".to_owned()),
        _ => None,
    };
    let e = Config::load(Some(&f), env).unwrap_err();
    assert_eq!(
        places(&e),
        [
            "journal (2:1)",
            "BERTH_BASIC_AUTH",
            "BERTH_PLAN_THREADS",
            "BERTH_PG_ISOLATION",
            "invalid plans.claim_secs",
            "invalid cluster.lease_secs",
            "invalid server.tls_key"
        ]
    );
    // One problem is itself, not a list of one.
    let one = Config::load(None, |k| (k == "BERTH_MAX_BATCH").then(|| "x".into())).unwrap_err();
    assert!(matches!(one, ConfigError::Env { .. }), "{one:?}");
    assert_eq!(one.problems().len(), 1);
}

#[test]
fn sqlite_urls_name_their_file() {
    let file = |u: &str| sqlite_file(u).map(|p| p.display().to_string());
    assert_eq!(file("sqlite://./d/b.db").as_deref(), Some("./d/b.db"));
    assert_eq!(
        file("sqlite:///var/lib/berth/b.db").as_deref(),
        Some("/var/lib/berth/b.db")
    );
    assert_eq!(file("sqlite:b.db?mode=rwc").as_deref(), Some("b.db"));
    assert_eq!(file("sqlite::memory:"), None);
    assert_eq!(file("sqlite://x.db?mode=memory&cache=shared"), None);
    assert_eq!(file("postgres://u@h/db"), None);
}

#[test]
fn a_missing_sqlite_directory_is_created_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let at = |url: String, create_dirs: bool| Config {
        database_url: url,
        store: Store { create_dirs },
        ..Config::default()
    };
    let missing = dir.path().join("nowhere/deeper");
    let url = format!("sqlite://{}/b.db", missing.display());
    let e = at(url.clone(), false).missing_sqlite_dir().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "directory {} of database_url {url} does not exist; expected an existing directory: create it, or set [store] create_dirs = true (BERTH_STORE_CREATE_DIRS=1) to have berthd create it",
            missing.display()
        )
    );
    assert_eq!(
        at(url, true).missing_sqlite_dir().unwrap(),
        Some(missing.clone())
    );
    let here = format!("sqlite://{}/b.db", dir.path().display());
    assert_eq!(at(here, false).missing_sqlite_dir().unwrap(), None);
    assert_eq!(
        at("sqlite::memory:".into(), false)
            .missing_sqlite_dir()
            .unwrap(),
        None
    );
    // The default data directory is created without being asked, written either way.
    for url in ["sqlite://./berth-data/berth.db", "sqlite://berth-data/x.db"] {
        let c = at(url.into(), false);
        if !Path::new("berth-data").exists() {
            assert_eq!(
                c.missing_sqlite_dir().unwrap(),
                Some(
                    PathBuf::from(url.trim_start_matches("sqlite://"))
                        .parent()
                        .unwrap()
                        .to_path_buf()
                )
            );
        }
    }
    let c = Config::load(None, |k| {
        (k == "BERTH_STORE_CREATE_DIRS").then(|| "true".into())
    })
    .unwrap();
    assert!(c.store.create_dirs);
    let c = Config::parse(Path::new("b.toml"), "[store]\ncreate_dirs = true\n").unwrap();
    assert!(c.store.create_dirs);
}

/// Tables and some of their keys with a valid value each.
const FIELDS: &[(&str, &[(&str, &str)])] = &[
    (
        "plans",
        &[("workers", "3"), ("threads", "2"), ("claim_secs", "9")],
    ),
    ("journal", &[("max_batch", "8"), ("snapshot_every", "100")]),
    (
        "limits",
        &[
            ("body_bytes", "1024"),
            ("max_in_flight", "4"),
            ("header_timeout_secs", "3"),
        ],
    ),
    (
        "notify",
        &[
            ("require_https", "true"),
            ("allow_private_callbacks", "false"),
        ],
    ),
    ("cluster", &[("lease_secs", "4"), ("node_id", "\"n1\"")]),
];

proptest::proptest! {
    /// Misspelt keys and values of the wrong type, anywhere in a valid file: each one is
    /// reported at its own line, and nothing else is.
    #[test]
    fn every_planted_mistake_is_reported_at_its_line(
        plan in proptest::collection::vec((0usize..5, 0usize..3, 0u8..3), 1..12),
    ) {
        // Entries per table (one per key: TOML refuses duplicates, a different mistake),
        // each table written once.
        let mut tables: std::collections::BTreeMap<usize, Vec<(usize, u8)>> = Default::default();
        for (t, k, fault) in plan {
            let k = k % FIELDS[t].1.len();
            let entries = tables.entry(t).or_default();
            if !entries.iter().any(|e| e.0 == k) {
                entries.push((k, fault));
            }
        }
        let mut text = String::new();
        let mut line = 0;
        let mut bad_lines = Vec::new();
        for (t, entries) in tables {
            let (table, keys) = FIELDS[t];
            text.push_str(&format!("[{table}]\n"));
            line += 1;
            for (k, fault) in entries {
                let (key, value) = keys[k];
                let entry = match fault {
                    0 => format!("{key} = {value}\n"),
                    // A near miss of the key: its first letter doubled.
                    1 => format!("{}{key} = {value}\n", &key[..1]),
                    _ => format!("{key} = [\"wrong\"]\n"),
                };
                text.push_str(&entry);
                line += 1;
                if fault != 0 {
                    bad_lines.push(line);
                }
            }
        }
        let got: Vec<usize> = match Config::parse(Path::new("p.toml"), &text) {
            Ok(_) => Vec::new(),
            Err(e) => e.problems().iter().filter_map(line_of).collect(),
        };
        proptest::prop_assert_eq!(got, bad_lines, "{}", text);
    }
}

#[test]
fn a_cloud_policy_names_its_three_files_and_may_name_workloads() {
    let (c, problems) = Config::parse_all(
        Path::new("b.toml"),
        "[cloud_policy]\npolicy = \"p.json\"\nowners = \"o.yaml\"\ncosts = \"c.yaml\"\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let cp = c.cloud_policy.expect("section");
    assert_eq!(cp.policy, PathBuf::from("p.json"));
    assert_eq!(cp.workloads, None);
    let (_, problems) = Config::parse_all(
        Path::new("b.toml"),
        "[cloud_policy]\npolicy = \"p.json\"\ncosts = \"c.yaml\"\nworkload = \"w.yaml\"\n",
    );
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "invalid config b.toml: cloud_policy (1:1): missing field `owners`",
            "invalid config b.toml: cloud_policy (4:1): unknown field `workload`, expected one of `policy`, `owners`, `costs`, `workloads`",
        ]
    );
}

#[test]
fn admin_credentials_from_file_and_env() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.toml");
    std::fs::write(
        &f,
        "[auth]\nadmin_tokens = [\"a1\"]\nbasic = [{user = \"boss\", password = \"pw\", admin = true}]\n",
    )
    .unwrap();
    let c = Config::load(Some(&f), |k| match k {
        "BERTH_ADMIN_TOKENS" => Some("a2, a3".to_owned()),
        "BERTH_ADMIN_BASIC_AUTH" => Some("root:x".to_owned()),
        _ => None,
    })
    .unwrap();
    assert_eq!(c.auth.admin_tokens, ["a1", "a2", "a3"]);
    let admins: Vec<(&str, bool, bool)> = c
        .auth
        .basic
        .iter()
        .map(|b| (b.user.as_str(), b.admin, b.read_only))
        .collect();
    assert_eq!(admins, [("boss", true, false), ("root", true, false)]);
    assert!(!c.auth_off());
    c.check_auth().unwrap();

    std::fs::write(
        &f,
        "[auth]\nbasic = [{user = \"odd\", password = \"pw\", admin = true, read_only = true}]\n",
    )
    .unwrap();
    let c = Config::load(Some(&f), |_| None).unwrap();
    let e = c.check_auth().unwrap_err();
    assert!(
        e.to_string()
            .contains("user `odd` is both `admin` and `read_only`; expected one of them"),
        "{e}"
    );
}

#[test]
fn openstack_takes_one_complete_way_to_authenticate() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let ok = write(
        "ok.toml",
        "[openstack]\nauth_url = \"http://127.0.0.1:5000/v3\"\nusername = \"berth\"\nproject = \"service\"\n",
    );
    let env = |k: &str| (k == "BERTH_OPENSTACK_PASSWORD").then(|| "s3cret".to_owned());
    let c = Config::load(Some(&ok), env).unwrap();
    let os = c.openstack.expect("section");
    assert_eq!(os.password.as_deref(), Some("s3cret"));
    assert_eq!(
        (os.provider.as_str(), os.refresh_secs, os.interface.as_str()),
        ("openstack", 60, "public")
    );
    let bad = write(
        "bad.toml",
        "[openstack]\nauth_url = \"keystone:5000\"\nusername = \"berth\"\napplication_credential_id = \"x\"\ninterface = \"private\"\nrefresh_secs = 0\n",
    );
    let e = Config::load(Some(&bad), |_| None).unwrap_err();
    let text: Vec<String> = e.problems().iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "[openstack] auth_url `keystone:5000` is not an http(s) URL; expected Keystone's v3 URL such as http://keystone:5000/v3",
            "[openstack] has both a username/password and an application credential; expected one of them",
            "[openstack] interface `private` is unknown; expected one of public, internal, admin",
            "[openstack] refresh_secs is 0; expected at least 1 second",
        ]
    );
    let half = write(
        "half.toml",
        "[openstack]\nauth_url = \"https://k/v3\"\napplication_credential_id = \"x\"\n",
    );
    let e = Config::load(Some(&half), |_| None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "[openstack] application_credential_secret is missing; application credential auth needs its id and secret"
    );
}
