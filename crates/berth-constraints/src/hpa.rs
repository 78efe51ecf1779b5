//! HPA flavor matching: mandatory features must match, optional ones add their score.

use berth_inventory::{AttrValue, Candidate, Flavor, HpaCapability};
use berth_template::{HpaAttribute, HpaFeature, HpaFlavor, HpaOperator};

/// The flavors chosen for one candidate: per requirement set (VDU) the best flavor, and the
/// summed score of the optional features they match.
#[derive(Debug, Clone, PartialEq)]
pub struct HpaMatch {
    /// Flavor label -> chosen flavor name, in requirement order. The label is the
    /// `attribute_name` of the set's `flavor_directives` (HAS's `flavor_map` key), else its id.
    pub flavors: Vec<(String, String)>,
    /// Sum of the optional features' scores.
    pub score: f64,
    /// HAS's `directives` for the recommendation: per set `{id, type, directives}` with each
    /// `flavor_directives` attribute set to the chosen flavor (and `flavorId` to its id).
    pub directives: Vec<serde_json::Value>,
}

/// The flavor label of a requirement set: its first `flavor_directives` attribute name.
fn label(req: &HpaFlavor) -> String {
    req.directives
        .iter()
        .filter(|d| d.get("type").and_then(|t| t.as_str()) == Some("flavor_directives"))
        .filter_map(|d| {
            d.get("attributes")?
                .as_array()?
                .first()?
                .get("attribute_name")?
                .as_str()
        })
        .next()
        .map_or_else(|| req.id.clone(), str::to_owned)
}

/// The set's directives with the chosen flavor filled in, plus its features' typed
/// directives, as HAS returns them.
fn directives(req: &HpaFlavor, label: &str, flavor: &Flavor) -> serde_json::Value {
    let mut ds = req.directives.clone();
    for d in &mut ds {
        if d.get("type").and_then(|t| t.as_str()) != Some("flavor_directives") {
            continue;
        }
        let Some(attrs) = d.get_mut("attributes").and_then(|a| a.as_array_mut()) else {
            continue;
        };
        if !attrs
            .iter()
            .any(|a| a.get("attribute_name").and_then(|n| n.as_str()) == Some("flavorId"))
        {
            attrs.push(serde_json::json!({"attribute_name": "flavorId", "attribute_value": ""}));
        }
        for a in attrs.iter_mut() {
            let value = match a.get("attribute_name").and_then(|n| n.as_str()) {
                Some("flavorId") => flavor.id.clone(),
                Some(n) if n == label => flavor.name.clone(),
                _ => String::new(),
            };
            if let Some(m) = a.as_object_mut() {
                m.insert(
                    "attribute_value".to_owned(),
                    serde_json::Value::String(value),
                );
            }
        }
    }
    // HAS appends the features' own directives (those with a type) not already listed.
    for d in req.flavor_properties.iter().flat_map(|f| &f.directives) {
        let typed = d
            .get("type")
            .and_then(|t| t.as_str())
            .is_some_and(|t| !t.is_empty());
        if typed && !ds.contains(d) {
            ds.push(d.clone());
        }
    }
    serde_json::json!({"id": req.id, "type": req.type_name, "directives": ds})
}

/// Memory-like units to MB; unknown or empty units compare as written.
fn unit_factor(unit: Option<&str>) -> f64 {
    match unit.map(|u| u.trim().to_ascii_uppercase()).as_deref() {
        Some("B") => 1.0 / (1024.0 * 1024.0),
        Some("KB" | "KIB") => 1.0 / 1024.0,
        Some("GB" | "GIB") => 1024.0,
        Some("TB" | "TIB") => 1024.0 * 1024.0,
        _ => 1.0,
    }
}

fn items(text: &str) -> Vec<String> {
    text.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(|s| s.trim().trim_matches(['\'', '"']).to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn texts(v: &AttrValue) -> Vec<String> {
    match v {
        AttrValue::List(xs) => xs.iter().flat_map(texts).collect(),
        other => vec![other.canonical().unwrap_or_default()],
    }
}

fn attribute_matches(want: &HpaAttribute, cap: &HpaCapability) -> bool {
    let Some(have) = cap.attributes.get(&want.key) else {
        return false;
    };
    let unit = want.unit.as_deref().filter(|u| !u.is_empty());
    let num = |v: &AttrValue| crate::attribute::number(v);
    match want.operator {
        HpaOperator::All | HpaOperator::Any => {
            let got: Vec<String> = texts(&have.value);
            let wanted = items(&want.value);
            let has = |w: &String| {
                got.iter()
                    .any(|g| AttrValue::Str(g.clone()).loosely_eq(&AttrValue::Str(w.clone())))
            };
            if want.operator == HpaOperator::All {
                wanted.iter().all(has)
            } else {
                wanted.iter().any(has)
            }
        }
        op => {
            let w = want
                .value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite());
            if let (Some(w), Some(h)) = (w, num(&have.value)) {
                let (w, h) = (w * unit_factor(unit), h * unit_factor(have.unit.as_deref()));
                let ord = berth_units::compare_base(h, w);
                return match op {
                    HpaOperator::Eq => ord.is_eq(),
                    HpaOperator::Ne => ord.is_ne(),
                    HpaOperator::Lt => ord.is_lt(),
                    HpaOperator::Lte => ord.is_le(),
                    HpaOperator::Gt => ord.is_gt(),
                    HpaOperator::Gte => ord.is_ge(),
                    HpaOperator::All | HpaOperator::Any => false,
                };
            }
            let eq = have.value.matches(&AttrValue::Str(want.value.clone()));
            match op {
                HpaOperator::Eq => eq,
                HpaOperator::Ne => !eq,
                _ => false,
            }
        }
    }
}

fn feature_matches(f: &HpaFeature, cap: &HpaCapability) -> bool {
    let arch_ok = f.architecture.eq_ignore_ascii_case(&cap.architecture)
        || f.architecture.eq_ignore_ascii_case("generic")
        || cap.architecture.eq_ignore_ascii_case("generic");
    f.feature.eq_ignore_ascii_case(&cap.feature)
        && f.version.eq_ignore_ascii_case(&cap.version)
        && arch_ok
        && f.attributes.iter().all(|a| attribute_matches(a, cap))
}

/// The score of `flavor` for one requirement set, or `None` if a mandatory feature is unmet.
pub fn flavor_score(req: &HpaFlavor, flavor: &Flavor) -> Option<f64> {
    let mut score = 0.0;
    for f in &req.flavor_properties {
        let matched = flavor.capabilities.iter().any(|c| feature_matches(f, c));
        match (matched, f.mandatory) {
            (false, true) => return None,
            (true, false) => score += f.score.unwrap_or(0.0),
            _ => {}
        }
    }
    Some(score)
}

/// The best flavor of `candidate` for every requirement set (highest score, first on ties),
/// or `None` if some set has no flavor meeting its mandatory features.
pub fn match_candidate(reqs: &[HpaFlavor], candidate: &Candidate) -> Option<HpaMatch> {
    let mut out = HpaMatch {
        flavors: Vec::new(),
        score: 0.0,
        directives: Vec::new(),
    };
    for req in reqs {
        let mut best: Option<(f64, &Flavor)> = None;
        for fl in &candidate.flavors {
            if let Some(s) = flavor_score(req, fl)
                && best.is_none_or(|(b, _)| s > b)
            {
                best = Some((s, fl));
            }
        }
        let (s, fl) = best?;
        let label = label(req);
        out.score += s;
        out.directives.push(directives(req, &label, fl));
        out.flavors.push((label, fl.name.clone()));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_inventory::{HpaAttribute as InvAttr, InventoryType};
    use std::collections::BTreeMap;

    fn cap(feature: &str, attrs: &[(&str, AttrValue, Option<&str>)]) -> HpaCapability {
        HpaCapability {
            feature: feature.into(),
            version: "v1".into(),
            architecture: "generic".into(),
            attributes: attrs
                .iter()
                .map(|(k, v, u)| {
                    (
                        k.to_string(),
                        InvAttr {
                            value: v.clone(),
                            unit: u.map(str::to_owned),
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
        }
    }

    fn want(key: &str, value: &str, op: HpaOperator, unit: Option<&str>) -> HpaAttribute {
        HpaAttribute {
            key: key.into(),
            value: value.into(),
            operator: op,
            unit: unit.map(str::to_owned),
        }
    }

    fn feature(
        name: &str,
        mandatory: bool,
        score: Option<f64>,
        attrs: Vec<HpaAttribute>,
    ) -> HpaFeature {
        HpaFeature {
            feature: name.into(),
            version: "v1".into(),
            architecture: "generic".into(),
            mandatory,
            score,
            directives: vec![],
            attributes: attrs,
        }
    }

    #[test]
    fn mandatory_and_optional_features() {
        let small = Flavor {
            id: "s".into(),
            name: "small".into(),
            capabilities: vec![cap(
                "basicCapabilities",
                &[
                    ("numVirtualCpu", AttrValue::Int(4), None),
                    ("virtualMemSize", AttrValue::Int(8192), Some("MB")),
                ],
            )],
        };
        let sriov = Flavor {
            id: "x".into(),
            name: "sriov".into(),
            capabilities: vec![
                cap(
                    "basicCapabilities",
                    &[
                        ("numVirtualCpu", AttrValue::Int(4), None),
                        ("virtualMemSize", AttrValue::Int(16), Some("GB")),
                    ],
                ),
                cap(
                    "sriovNICNetwork",
                    &[
                        ("pciVendorId", AttrValue::Str("8086".into()), None),
                        ("tags", AttrValue::List(vec!["a".into(), "b".into()]), None),
                    ],
                ),
            ],
        };
        let req = HpaFlavor {
            id: "vdu1".into(),
            type_name: "tosca.nodes.nfv.Vdu.Compute".into(),
            directives: vec![],
            flavor_properties: vec![
                feature(
                    "basicCapabilities",
                    true,
                    None,
                    vec![
                        want("numVirtualCpu", "4", HpaOperator::Eq, None),
                        want("virtualMemSize", "8", HpaOperator::Gte, Some("GB")),
                    ],
                ),
                feature(
                    "sriovNICNetwork",
                    false,
                    Some(100.0),
                    vec![
                        want("pciVendorId", "8086", HpaOperator::Eq, None),
                        want("tags", "[a, b]", HpaOperator::All, None),
                    ],
                ),
            ],
        };
        assert_eq!(flavor_score(&req, &small), Some(0.0));
        assert_eq!(flavor_score(&req, &sriov), Some(100.0));
        let mut c = Candidate::new("c", InventoryType::Cloud);
        c.flavors = vec![small.clone(), sriov];
        let m = match_candidate(std::slice::from_ref(&req), &c).unwrap();
        assert_eq!(m.flavors, vec![("vdu1".to_owned(), "sriov".to_owned())]);
        assert_eq!(m.score, 100.0);
        // HAS's directives: the flavor label filled in, the flavor id added, and the
        // features' typed directives appended once.
        let mut labeled = req.clone();
        labeled.directives = vec![serde_json::json!({"type": "flavor_directives",
            "attributes": [{"attribute_name": "label_a", "attribute_value": ""}]})];
        let sriov_directive = serde_json::json!({"type": "sriovNICNetwork_directives",
            "attributes": [{"attribute_name": "A", "attribute_value": "1"}]});
        labeled.flavor_properties[1].directives =
            vec![sriov_directive.clone(), serde_json::json!({"type": ""})];
        labeled.flavor_properties[0].directives = vec![sriov_directive.clone()];
        let m = match_candidate(std::slice::from_ref(&labeled), &c).unwrap();
        assert_eq!(m.flavors, vec![("label_a".to_owned(), "sriov".to_owned())]);
        assert_eq!(
            m.directives,
            vec![
                serde_json::json!({"id": "vdu1", "type": "tosca.nodes.nfv.Vdu.Compute", "directives": [
                    {"type": "flavor_directives", "attributes": [
                        {"attribute_name": "label_a", "attribute_value": "sriov"},
                        {"attribute_name": "flavorId", "attribute_value": "x"}]},
                    sriov_directive
                ]})
            ]
        );
        let mut strict = req.clone();
        strict.flavor_properties[0].attributes[0] =
            want("numVirtualCpu", "8", HpaOperator::Gte, None);
        assert_eq!(match_candidate(&[strict], &c), None);
    }
}
