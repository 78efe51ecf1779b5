//! Property tests: robustness on arbitrary input, generated valid templates, injected faults,
//! and YAML/JSON round-trips.

use berth_template::{LoadOptions, analyze, load, load_json, validate};
use proptest::prelude::*;

/// A generated constraint: kind index, demand picks, a number and an operator index.
#[derive(Debug, Clone)]
struct GenConstraint {
    kind: usize,
    a: usize,
    b: usize,
    number: u32,
    op: usize,
    unit: usize,
}

#[derive(Debug, Clone)]
struct Spec {
    demands: usize,
    locations: usize,
    constraints: Vec<GenConstraint>,
    objective: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    let constraint = (
        0usize..8,
        0usize..64,
        0usize..64,
        0u32..100_000,
        0usize..6,
        0usize..3,
    )
        .prop_map(|(kind, a, b, number, op, unit)| GenConstraint {
            kind,
            a,
            b,
            number,
            op,
            unit,
        });
    (
        2usize..8,
        1usize..4,
        prop::collection::vec(constraint, 0..12),
        any::<bool>(),
    )
        .prop_map(|(demands, locations, constraints, objective)| Spec {
            demands,
            locations,
            constraints,
            objective,
        })
}

const OPS: [&str; 6] = ["<", "<=", ">", ">=", "=", ""];

/// Renders a valid template; `inject` puts an undefined demand into constraint 0.
fn render(s: &Spec, inject: bool) -> String {
    let mut t = String::from("homing_template_version: 2017-10-10\nlocations:\n");
    for l in 0..s.locations {
        t.push_str(&format!(
            "  loc{l}: {{latitude: {}, longitude: {}}}\n",
            l as f64 * 1.5,
            -(l as f64) * 2.25
        ));
    }
    t.push_str("demands:\n");
    for d in 0..s.demands {
        t.push_str(&format!(
            "  d{d}:\n    - inventory_provider: aai\n      inventory_type: cloud\n"
        ));
    }
    if !s.constraints.is_empty() {
        t.push_str("constraints:\n");
    }
    for (i, c) in s.constraints.iter().enumerate() {
        let a = c.a % s.demands;
        let mut b = c.b % s.demands;
        if b == a {
            b = (a + 1) % s.demands;
        }
        let demands = if inject && i == 0 {
            format!("[d{a}, d{b}, undeclared_demand]")
        } else {
            format!("[d{a}, d{b}]")
        };
        let loc = format!("loc{}", c.a % s.locations);
        let num = f64::from(c.number) / 10.0;
        let op = OPS[c.op];
        let (ty, props) = match c.kind {
            0 => (
                "distance_between_demands",
                format!("{{distance: '{op} {num} {}'}}", ["km", "mi", "m"][c.unit]),
            ),
            1 => (
                "distance_to_location",
                format!("{{distance: {num}, location: {loc}}}"),
            ),
            2 => (
                "zone",
                format!(
                    "{{qualifier: {}, category: {}}}",
                    ["same", "different", "same"][c.unit],
                    ["disaster", "time_zone", "country"][c.unit]
                ),
            ),
            3 => (
                "attribute",
                format!(
                    "{{evaluate: {{cpu: {{gte: {num}}}, flavor: {{any: [a, b]}}, name: x{}}}}}",
                    c.number
                ),
            ),
            4 => (
                "network_to_location",
                format!(
                    "{{latency: '{op}{num} {}', location: {loc}}}",
                    ["ms", "sec", "min"][c.unit]
                ),
            ),
            5 => (
                "instance_fit",
                "{controller: sdn-c, request: {size: 1}}".to_owned(),
            ),
            6 => (
                "threshold",
                format!(
                    "{{evaluate: [{{attribute: latency, operator: lte, threshold: {num}, unit: ms}}]}}"
                ),
            ),
            _ => ("license", format!("{{id: id{}, key: k}}", c.number)),
        };
        t.push_str(&format!(
            "  c{i}:\n    type: {ty}\n    demands: {demands}\n    properties: {props}\n"
        ));
    }
    if s.objective {
        t.push_str("optimization:\n  minimize:\n    sum:\n");
        for d in 0..s.demands {
            t.push_str(&format!(
                "      - {{product: [{d}, {{distance_between: [loc0, d{d}]}}]}}\n"
            ));
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn generated_templates_validate_cleanly(s in spec()) {
        let text = render(&s, false);
        let diags = validate(&text, &LoadOptions::default());
        prop_assert!(diags.is_empty(), "{text}\n{diags:#?}");
        let t = load(&text, &LoadOptions::default()).unwrap();
        prop_assert_eq!(t.demands.len(), s.demands);
        prop_assert_eq!(t.constraints.len(), s.constraints.len());
    }

    #[test]
    fn injected_undefined_demand_is_the_only_error(s in spec().prop_filter("needs a constraint", |s| !s.constraints.is_empty())) {
        let text = render(&s, true);
        let diags = validate(&text, &LoadOptions::default());
        prop_assert_eq!(diags.len(), 1, "{:#?}", diags);
        prop_assert_eq!(&diags[0].path, "constraints.c0.demands[2]");
        prop_assert!(diags[0].message.starts_with("undefined demand `undeclared_demand`"), "{}", diags[0].message);
        prop_assert!(diags[0].line > 0);
    }

    #[test]
    fn yaml_and_json_forms_load_to_the_same_template(s in spec()) {
        let text = render(&s, false);
        let from_yaml = load(&text, &LoadOptions::default()).unwrap();
        let json = berth_doc::parse(&text).unwrap().to_json();
        let from_json = load_json(&json, &LoadOptions::default()).unwrap();
        prop_assert_eq!(&from_yaml, &from_json);
        // And through JSON text.
        let from_text = load(&json.to_string(), &LoadOptions::default()).unwrap();
        prop_assert_eq!(from_yaml, from_text);
    }

    #[test]
    fn arbitrary_yamlish_input_never_panics(text in "([a-z_]{1,12}|:|-|\\{|\\}|\\[|\\]|,| |\\n|  |get_param|get_file|demands|constraints|type|zone|homing_template_version: 2017-10-10\\n|[0-9.<>=]{1,4}|&a|\\*a|'|\")*") {
        let a = analyze(&text, &LoadOptions::default());
        prop_assert_eq!(a.template.is_some(), !a.has_errors());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let a = analyze(&text, &LoadOptions::default());
        prop_assert_eq!(a.template.is_some(), !a.has_errors());
        prop_assert!(a.diagnostics.iter().all(|d| !d.message.is_empty()));
    }
}
