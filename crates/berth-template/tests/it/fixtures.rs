//! Every fixture under `tests/fixtures/` loads without errors.

use std::path::PathBuf;

use berth_template::{LoadOptions, analyze};

pub(crate) fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Options a fixture needs (files for `get_file`).
pub(crate) fn options(name: &str) -> LoadOptions {
    match name {
        "seed_get_file.yaml" => LoadOptions::default()
            .file(
                "stack_template.yaml",
                "heat_template_version: 2016-10-14\nresources: {}\n",
            )
            .file("http://hostname/environment.yaml", "parameters: {}\n"),
        _ => LoadOptions::default(),
    }
}

pub(crate) fn valid_fixtures() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir())
        .expect("fixtures directory")
        .map(|e| e.expect("fixture entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name()
                    .expect("file name")
                    .to_string_lossy()
                    .into_owned(),
                std::fs::read_to_string(&p).expect("fixture text"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_loads_without_errors() {
    let fixtures = valid_fixtures();
    assert!(
        fixtures.len() >= 25,
        "expected the seed and HAS fixtures, found {}",
        fixtures.len()
    );
    let mut report = String::new();
    for (name, text) in &fixtures {
        let a = analyze(text, &options(name));
        for d in &a.diagnostics {
            report.push_str(&format!("{name}: {} {d}\n", d.severity));
        }
        if a.has_errors() || a.template.is_none() {
            report.push_str(&format!("{name}: FAILED\n"));
        }
    }
    assert!(!report.contains("FAILED"), "{report}");
    println!("{report}");
}

/// A compact rendering of a loaded template, for the model snapshot.
fn summary(t: &berth_template::Template) -> String {
    use std::fmt::Write;
    let mut out = format!("  version {}\n", t.version);
    for (k, v) in &t.parameters {
        let _ = writeln!(out, "  parameter {k} = {v}");
    }
    for l in t.locations.values() {
        let _ = writeln!(
            out,
            "  location {}: coordinate={:?} host={:?} clli={:?} placemark={}",
            l.name,
            l.coordinate.map(|c| (c.latitude, c.longitude)),
            l.host_name,
            l.clli_code,
            l.placemark.is_some()
        );
    }
    for d in t.demands.values() {
        for r in &d.requirements {
            let _ = writeln!(
                out,
                "  demand {}: {:?}/{:?} attributes={} service_type={:?} service_id={:?} candidates(req/excl/expl)={}/{}/{} existing={:?}",
                d.name,
                r.inventory_provider,
                r.inventory_type.map(|t| t.as_str()),
                r.attributes.len() + r.filtering_attributes.len(),
                r.service_type,
                r.service_id,
                r.required_candidates.len(),
                r.excluded_candidates.len(),
                r.candidates.len(),
                r.existing_placement.as_ref().map(|c| (
                    c.candidate_id.clone(),
                    c.cost,
                    c.coordinate.map(|x| (x.latitude, x.longitude))
                ))
            );
        }
    }
    for c in t.constraints.values() {
        let _ = writeln!(out, "  constraint {} {:?}: {:?}", c.name, c.demands, c.kind);
    }
    for r in t.reservations.items.values() {
        let _ = writeln!(
            out,
            "  reservation {}: {:?} {:?} controller={:?} request={:?}",
            r.name, r.kind, r.demands, r.controller, r.request
        );
    }
    if let Some(o) = &t.optimization {
        let _ = writeln!(out, "  objective {:?}: {:?}", o.goal, o.expr);
    }
    out
}

#[test]
fn fixture_models_snapshot() {
    let mut out = String::new();
    for (name, text) in valid_fixtures() {
        let t = berth_template::load(&text, &options(&name)).unwrap();
        out.push_str(&format!("{name}\n{}", summary(&t)));
    }
    expect_test::expect_file!["fixture_models.snap"].assert_eq(&out);
}

#[test]
fn bundled_example_templates_are_clean() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/templates");
    let schema = jsonschema::draft202012::new(&berth_template::json_schema()).unwrap();
    let mut seen = 0;
    for name in ["vcpe.yaml", "distance_pair.yaml", "diverse_pair.yaml"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let diags = berth_template::validate(&text, &LoadOptions::default());
        assert!(diags.is_empty(), "{name}: {diags:#?}");
        let t = berth_template::load(&text, &LoadOptions::default()).unwrap();
        assert!(
            t.optimization.is_some()
                && t.demands.len() == 2
                && t.locations.contains_key("customer_loc"),
            "{name}"
        );
        assert!(
            schema.is_valid(&berth_doc::parse(&text).unwrap().to_json()),
            "{name}"
        );
        seen += 1;
    }
    assert_eq!(seen, 3);
}
