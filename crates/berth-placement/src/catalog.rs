//! The placement side file: extra flavors, the volume dimension and license charges.

use std::collections::BTreeMap;

use berth_doc::{Diagnostics, Path, Value};

use crate::error::PlacementError;

/// Flavors beyond the topology's table, the dimension volumes consume, license charges.
///
/// Document (YAML or JSON), every key optional:
/// ```yaml
/// flavors:                       # demand vectors by dimension name (missing dimensions = 0)
///   m1.tiny: {vcpu: 1, ram_mib: 512, disk_gib: 1}
/// volume_dimension: disk_gib     # default: disk_gib
/// licenses:                      # "catalog/product": charge per host by machine type
///   ibm/websphere: {x86-small: 100, x86-large: 180, default: 250}
/// ```
/// A license is charged once per host (leaf) that runs at least one instance of the product,
/// at the host's machine-type rate (`default` when the type is not listed, 0 without default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    /// Flavor name -> (dimension name -> amount). Checked against the topology's dimensions
    /// when an instance is built.
    pub flavors: BTreeMap<String, BTreeMap<String, i64>>,
    /// The dimension a volume's size (GiB) is charged to; `None` = `disk_gib`.
    pub volume_dimension: Option<String>,
    /// `catalog/product` -> machine type (or `default`) -> charge per host.
    pub licenses: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Catalog {
    /// Parses a catalog document, reporting every problem.
    ///
    /// # Errors
    /// [`PlacementError::Catalog`] with all diagnostics.
    pub fn parse(text: &str) -> Result<Catalog, PlacementError> {
        let doc = berth_doc::parse(text).map_err(|d| PlacementError::Catalog {
            diagnostics: vec![d],
        })?;
        let mut diags = Diagnostics::new();
        let mut out = Catalog::default();
        let root = Path::root();
        let Some(top) = doc.as_map() else {
            diags.error(
                &root,
                doc.pos,
                format!("catalog is a {}; expected a mapping", doc.type_name()),
            );
            return Err(PlacementError::Catalog {
                diagnostics: diags.into_vec(),
            });
        };
        for (k, v) in top.iter() {
            let p = root.key(k.name.clone());
            match k.name.as_str() {
                "flavors" => {
                    for (name, vec) in entries(v, &p, &mut diags) {
                        let fp = p.key(name.clone());
                        let mut demand = BTreeMap::new();
                        for (dim, amount) in entries(vec, &fp, &mut diags) {
                            match amount.as_i64() {
                                Some(a) if a >= 0 => {
                                    demand.insert(dim, a);
                                }
                                _ => diags.error(
                                    &fp.key(dim),
                                    amount.pos,
                                    "demand is not a non-negative integer; expected an amount in base units",
                                ),
                            }
                        }
                        out.flavors.insert(name, demand);
                    }
                }
                "volume_dimension" => match v.as_str() {
                    Some(s) => out.volume_dimension = Some(s.to_owned()),
                    None => diags.error(
                        &p,
                        v.pos,
                        "`volume_dimension` is not a string; expected a dimension name",
                    ),
                },
                "licenses" => {
                    for (name, rates) in entries(v, &p, &mut diags) {
                        let lp = p.key(name.clone());
                        let mut table = BTreeMap::new();
                        for (machine, charge) in entries(rates, &lp, &mut diags) {
                            match charge.as_f64() {
                                Some(c) if c.is_finite() && c >= 0.0 => {
                                    table.insert(machine, c);
                                }
                                _ => diags.error(
                                    &lp.key(machine),
                                    charge.pos,
                                    "charge is not a non-negative number; expected a charge per host",
                                ),
                            }
                        }
                        out.licenses.insert(name, table);
                    }
                }
                other => diags.error(
                    &p,
                    k.pos,
                    format!(
                        "unknown key `{other}`; expected one of flavors, volume_dimension, licenses"
                    ),
                ),
            }
        }
        if diags.has_errors() {
            return Err(PlacementError::Catalog {
                diagnostics: diags.into_vec(),
            });
        }
        Ok(out)
    }

    /// The charge of a license on a machine type.
    #[must_use]
    pub fn charge(&self, license: &str, machine_type: Option<&str>) -> f64 {
        let Some(table) = self.licenses.get(license) else {
            return 0.0;
        };
        machine_type
            .and_then(|m| table.get(m))
            .or_else(|| table.get("default"))
            .copied()
            .unwrap_or(0.0)
    }
}

fn entries<'v>(v: &'v Value, p: &Path, diags: &mut Diagnostics) -> Vec<(String, &'v Value)> {
    match v.as_map() {
        Some(m) => m.iter().map(|(k, v)| (k.name.clone(), v)).collect(),
        None => {
            diags.error(
                p,
                v.pos,
                format!("value is a {}; expected a mapping", v.type_name()),
            );
            Vec::new()
        }
    }
}
