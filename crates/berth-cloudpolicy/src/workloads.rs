//! The workload file: what each placed workload is (seed 002: the instance type derived from
//! `<service, VNFC, cloud owner>`, priced per `<instance type, cloud region>`) and the
//! resources it reserves, which the private clouds' capacity check needs.

use std::collections::BTreeMap;

use berth_doc::{Diagnostic, Diagnostics, Kind, Path, Value};
use berth_units::dimension::{self, Raw, Round};

use crate::error::{CloudPolicyError, DocumentKind};
use crate::load::{check_keys, expect_map, expect_text};
use crate::region::Workload;
use crate::schema::a_type;

const WORKLOAD_KEYS: &[&str] = &["instance_type", "instance_types", "demand"];

/// Workloads by name: a demand (VNF) name or a VNFC name (`content.vnfc` of a policy).
///
/// Invariants: names are unique ignoring ASCII case; demand keys are read through the
/// dimension registry (`vcpus`, `cores` are `vcpu`; `ram: 32 GB` is 32768 `ram_mib`), as
/// inventory capacity is, and amounts are whole base units (rounded up).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkloadCatalog {
    /// Workloads by name, as written.
    pub workloads: BTreeMap<String, Workload>,
    /// Warnings found while loading.
    pub warnings: Vec<Diagnostic>,
}

impl WorkloadCatalog {
    /// Parses YAML or JSON text, reporting every problem at once.
    ///
    /// ```yaml
    /// workloads:
    ///   vgw:                                   # a demand or VNFC name
    ///     instance_type: flavor-xyz            # the base instance type
    ///     instance_types: {azure: Standard_D4s_v3}   # per cloud owner, where it differs
    ///     demand: {vcpu: 16, ram: 32 GB}       # reserved, for private clouds' capacity
    /// ```
    pub fn parse(text: &str) -> Result<Self, CloudPolicyError> {
        let doc = berth_doc::parse(text).map_err(|d| invalid(vec![d]))?;
        Self::from_value(&doc)
    }

    /// Builds the catalog from a parsed document.
    pub fn from_value(doc: &Value) -> Result<Self, CloudPolicyError> {
        let mut diags = Diagnostics::new();
        let mut workloads: BTreeMap<String, Workload> = BTreeMap::new();
        let root = Path::root();
        if let Some(map) = expect_map(doc, &root, &mut diags) {
            check_keys(map, &["workloads"], &root, &mut diags);
            match map.get("workloads") {
                None => diags.error(&root, doc.pos, "missing required field `workloads`"),
                Some(v) => {
                    let path = root.key("workloads");
                    if let Some(list) = expect_map(v, &path, &mut diags) {
                        for (key, value) in list.iter() {
                            let p = path.key(key.name.as_str());
                            if let Some(other) =
                                workloads.keys().find(|k| k.eq_ignore_ascii_case(&key.name))
                            {
                                diags.error(
                                    &p,
                                    key.pos,
                                    format!("workload `{}` is also named `{other}`; expected names unique ignoring case", key.name),
                                );
                                continue;
                            }
                            if let Some(w) = read_workload(value, &p, &mut diags) {
                                workloads.insert(key.name.clone(), w);
                            }
                        }
                    }
                }
            }
        }
        if diags.has_errors() {
            return Err(invalid(diags.into_vec()));
        }
        Ok(Self {
            workloads,
            warnings: diags.into_vec(),
        })
    }

    /// The workload of demand `demand`: its own entry, else the entry of the policy's VNFC
    /// (ASCII case-insensitive, as policies name them).
    pub fn lookup(&self, demand: &str, vnfc: Option<&str>) -> Option<&Workload> {
        let find = |name: &str| {
            self.workloads
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, w)| w)
        };
        find(demand).or_else(|| vnfc.and_then(find))
    }
}

fn invalid(diagnostics: Vec<Diagnostic>) -> CloudPolicyError {
    CloudPolicyError::Invalid {
        document: DocumentKind::Workloads,
        diagnostics,
    }
}

/// One reserved amount through the dimension registry (`vcpus`, `Memory: 32 GB`, HAS's
/// `{quantity, unit}`), rounded up to whole base units: a reservation needs at least it.
fn read_amount(
    key: &str,
    v: &Value,
    path: &Path,
    diags: &mut Diagnostics,
) -> Option<dimension::Amount> {
    let number;
    let unit;
    let raw = match &v.kind {
        Kind::Int(_) | Kind::Float(_) => {
            number = v.scalar_text().unwrap_or_default();
            Raw::Number(&number)
        }
        Kind::Str(s) => Raw::Text(s),
        Kind::Map(m) => {
            let q = m.get("quantity").and_then(Value::scalar_text);
            unit = m.get("unit").and_then(Value::as_str).map(str::to_owned);
            match q {
                Some(q) => {
                    number = q;
                    Raw::Quantity {
                        quantity: &number,
                        unit: unit.as_deref(),
                    }
                }
                None => {
                    diags.error(
                        path,
                        v.pos,
                        format!(
                            "`{key}` has no `quantity`; expected {}",
                            dimension::expected(key)
                        ),
                    );
                    return None;
                }
            }
        }
        _ => {
            diags.error(
                path,
                v.pos,
                format!(
                    "`{key}` is {}; expected {}",
                    a_type(v),
                    dimension::expected(key)
                ),
            );
            return None;
        }
    };
    match dimension::amount(key, raw, Round::Up) {
        Ok(a) => Some(a),
        Err(e) => {
            diags.error(path, v.pos, e.to_string());
            None
        }
    }
}

fn read_workload(value: &Value, path: &Path, diags: &mut Diagnostics) -> Option<Workload> {
    let map = expect_map(value, path, diags)?;
    check_keys(map, WORKLOAD_KEYS, path, diags);
    let mut w = Workload::default();
    if let Some(v) = map.get("instance_type") {
        w.instance_type = expect_text(v, &path.key("instance_type"), diags).map(str::to_owned);
    }
    if let Some(v) = map.get("instance_types") {
        let p = path.key("instance_types");
        if let Some(m) = expect_map(v, &p, diags) {
            for (owner, t) in m.iter() {
                if let Some(t) = expect_text(t, &p.key(owner.name.as_str()), diags) {
                    w.instance_types.insert(owner.name.clone(), t.to_owned());
                }
            }
        }
    }
    if let Some(v) = map.get("demand") {
        let p = path.key("demand");
        if let Some(m) = expect_map(v, &p, diags) {
            let mut first: BTreeMap<String, String> = BTreeMap::new();
            for (dim, amount) in m.iter() {
                let dp = p.key(dim.name.as_str());
                let Some(a) = read_amount(&dim.name, amount, &dp, diags) else {
                    continue;
                };
                if let Some(other) = first.get(&a.dimension) {
                    let e = berth_units::DimensionError::Duplicate {
                        first: other.clone(),
                        second: dim.name.clone(),
                        dimension: a.dimension.clone(),
                    };
                    diags.error(&dp, dim.pos, e.to_string());
                    continue;
                }
                first.insert(a.dimension.clone(), dim.name.clone());
                w.demand
                    .insert(a.dimension, i64::try_from(a.value).unwrap_or(i64::MAX));
            }
        }
    }
    Some(w)
}
