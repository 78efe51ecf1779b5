//! The workload file: what each placed workload is (seed 002: the instance type derived from
//! `<service, VNFC, cloud owner>`, priced per `<instance type, cloud region>`) and the
//! resources it reserves, which the private clouds' capacity check needs.

use std::collections::BTreeMap;

use berth_doc::{Diagnostic, Diagnostics, Path, Value};

use crate::error::{CloudPolicyError, DocumentKind};
use crate::load::{check_keys, expect_map, expect_text};
use crate::region::Workload;
use crate::schema::a_type;

const WORKLOAD_KEYS: &[&str] = &["instance_type", "instance_types", "demand"];

/// Workloads by name: a demand (VNF) name or a VNFC name (`content.vnfc` of a policy).
///
/// Invariants: names are unique ignoring ASCII case; demand amounts are integers of at
/// least 0 in the units of the regions' capacity.
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
    ///     demand: {vcpu: 16, ram_mib: 32768}   # reserved, for private clouds' capacity
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
            for (dim, amount) in m.iter() {
                let dp = p.key(dim.name.as_str());
                match amount.as_i64() {
                    Some(n) if n >= 0 => {
                        w.demand.insert(dim.name.clone(), n);
                    }
                    _ => {
                        let found = amount
                            .scalar_text()
                            .map_or_else(|| a_type(amount), |t| format!("`{t}`"));
                        diags.error(
                            &dp,
                            amount.pos,
                            format!("invalid amount {found}; expected an integer of at least 0 in the unit of the regions' capacity"),
                        );
                    }
                }
            }
        }
    }
    Some(w)
}
