//! A candidate's `capacity` and `flavors`, read through the dimension registry
//! (`berth_units::dimension`): canonical keys, amounts in base units, one key per dimension.

use std::collections::BTreeMap;

use berth_doc::{Kind, Map, Path, Pos, Value};
use berth_units::DimensionError;
use berth_units::dimension::{self, Raw, Round};

use super::{CapacityKey, Cx};
use crate::model::{BASIC_CAPABILITIES, Flavor, HpaAttribute, HpaCapability};

impl Cx {
    /// A capacity map through the dimension registry: keys normalised (`vcpus`, `VCPU`,
    /// `cores` are `vcpu`), amounts read in their units and rounded down to whole base units
    /// (a warning when that drops a fraction), two keys of one dimension refused. Keys naming
    /// no registered dimension are kept as written and remembered with their position.
    pub(super) fn capacity(&mut self, v: &Value, path: &Path) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        let Some(m) = self.map(v, path, "capacity by dimension") else {
            return out;
        };
        let mut first: BTreeMap<String, (String, Pos)> = BTreeMap::new();
        for (k, val) in m.iter() {
            let p = path.key(k.name.as_str());
            let number;
            let raw = match &val.kind {
                Kind::Int(_) | Kind::Float(_) => {
                    number = val.scalar_text().unwrap_or_default();
                    Raw::Number(&number)
                }
                Kind::Str(s) => Raw::Text(s),
                Kind::Map(qm) => match self.quantity(qm, &p, val.pos) {
                    Some((q, u)) => {
                        number = q;
                        Raw::Quantity {
                            quantity: &number,
                            unit: u,
                        }
                    }
                    None => continue,
                },
                _ => {
                    self.error(
                        &p,
                        val.pos,
                        format!(
                            "`{}` is {}; expected {}",
                            k.name,
                            val.type_name(),
                            dimension::expected(&k.name)
                        ),
                    );
                    continue;
                }
            };
            let a = match dimension::amount(&k.name, raw, Round::Down) {
                Ok(a) => a,
                Err(e) => {
                    self.error(&p, val.pos, e.to_string());
                    continue;
                }
            };
            if let Some((other, at)) = first.get(&a.dimension) {
                let e = DimensionError::Duplicate {
                    first: other.clone(),
                    second: k.name.clone(),
                    dimension: a.dimension.clone(),
                };
                self.error(
                    &p,
                    k.pos,
                    format!("{e} (`{other}` is at {}:{})", at.line, at.column),
                );
                continue;
            }
            first.insert(a.dimension.clone(), (k.name.clone(), k.pos));
            let known = dimension::by_name(&a.dimension);
            if !a.exact {
                let unit = known.map_or("unit", dimension::Dimension::unit);
                self.diags.warning(
                    &p,
                    val.pos,
                    format!(
                        "capacity `{}` is {raw}, not a whole number of {unit}; counted as {} {unit}",
                        k.name, a.value
                    ),
                );
            }
            if known.is_none() {
                self.custom_capacity.push(CapacityKey {
                    key: k.name.clone(),
                    path: p.clone(),
                    pos: k.pos,
                });
            }
            // `amount` keeps values at most i64::MAX.
            out.insert(a.dimension, i64::try_from(a.value).unwrap_or(i64::MAX));
        }
        out
    }

    /// The `{quantity, unit}` shape (HAS/multicloud) as texts, or `None` after reporting.
    fn quantity<'m>(
        &mut self,
        m: &'m Map,
        path: &Path,
        pos: Pos,
    ) -> Option<(String, Option<&'m str>)> {
        self.check_keys(m, path, &["quantity", "unit"]);
        let q = match m.get("quantity") {
            None => {
                self.error(path, pos, "missing `quantity`");
                return None;
            }
            Some(q) => match &q.kind {
                Kind::Int(_) | Kind::Float(_) | Kind::Str(_) => q.scalar_text()?,
                _ => {
                    self.error(
                        &path.key("quantity"),
                        q.pos,
                        format!("expected a number, found {}", q.type_name()),
                    );
                    return None;
                }
            },
        };
        let unit = match m.get("unit").map(|u| (&u.kind, u)) {
            None | Some((Kind::Null, _)) => None,
            Some((Kind::Str(s), _)) => Some(s.as_str()),
            Some((_, u)) => {
                self.error(
                    &path.key("unit"),
                    u.pos,
                    format!("expected a unit such as GB, found {}", u.type_name()),
                );
                return None;
            }
        };
        Some((q, unit))
    }

    pub(super) fn flavors(&mut self, v: &Value, path: &Path) -> Vec<Flavor> {
        let Some(items) = v.as_seq() else {
            self.error(
                path,
                v.pos,
                format!("expected a list of flavors, found {}", v.type_name()),
            );
            return Vec::new();
        };
        let mut out: Vec<Flavor> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Some(m) = self.map(item, &p, "a flavor") else {
                continue;
            };
            self.check_keys(m, &p, &["id", "name", "capabilities"]);
            let Some(name) = self.opt_text(m, "name", &p) else {
                self.error(&p, item.pos, "missing flavor `name`");
                continue;
            };
            if out.iter().any(|f| f.name == name) {
                self.error(
                    &p.key("name"),
                    m.get("name").map_or(item.pos, |n| n.pos),
                    format!("duplicate flavor name `{name}`; expected unique names per candidate"),
                );
                continue;
            }
            let id = self.opt_text(m, "id", &p).unwrap_or_else(|| name.clone());
            let capabilities = match m.get("capabilities") {
                Some(cv) => self.capabilities(cv, &p.key("capabilities")),
                None => Vec::new(),
            };
            out.push(Flavor {
                id,
                name,
                capabilities,
            });
        }
        out
    }

    fn capabilities(&mut self, v: &Value, path: &Path) -> Vec<HpaCapability> {
        let Some(items) = v.as_seq() else {
            self.error(
                path,
                v.pos,
                format!("expected a list of capabilities, found {}", v.type_name()),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Some(m) = self.map(item, &p, "a capability") else {
                continue;
            };
            self.check_keys(m, &p, &["feature", "version", "architecture", "attributes"]);
            let Some(feature) = self.opt_text(m, "feature", &p) else {
                self.error(&p, item.pos, "missing capability `feature`");
                continue;
            };
            let version = self
                .opt_text(m, "version", &p)
                .unwrap_or_else(|| "v1".to_owned());
            let architecture = self
                .opt_text(m, "architecture", &p)
                .unwrap_or_else(|| "generic".to_owned());
            let mut attributes = BTreeMap::new();
            if let Some(av) = m.get("attributes") {
                let ap = p.key("attributes");
                if let Some(am) = self.map(av, &ap, "capability attributes") {
                    let mut sizes: BTreeMap<&'static str, (String, Pos)> = BTreeMap::new();
                    for (k, val) in am.iter() {
                        let kp = ap.key(k.name.as_str());
                        let Some(a) = self.hpa_attribute(val, &kp) else {
                            continue;
                        };
                        if feature == BASIC_CAPABILITIES {
                            self.flavor_size(&k.name, &a, (&kp, k.pos, val.pos), &mut sizes);
                        }
                        attributes.insert(k.name.clone(), a);
                    }
                }
            }
            out.push(HpaCapability {
                feature,
                version,
                architecture,
                attributes,
            });
        }
        out
    }

    /// A `basicCapabilities` attribute naming a dimension is a flavor size
    /// ([`Flavor::size`]): it must read as an amount, and once per dimension.
    fn flavor_size(
        &mut self,
        key: &str,
        a: &HpaAttribute,
        (path, key_pos, value_pos): (&Path, Pos, Pos),
        sizes: &mut BTreeMap<&'static str, (String, Pos)>,
    ) {
        let Some((d, _)) = dimension::lookup(key) else {
            return;
        };
        match a.amount(key) {
            None => self.error(
                path,
                value_pos,
                format!(
                    "`{key}` is {}; expected {}",
                    a.value,
                    dimension::expected(key)
                ),
            ),
            Some(Err(e)) => self.error(path, value_pos, e.to_string()),
            Some(Ok(_)) => {}
        }
        if let Some((other, at)) = sizes.get(d.name) {
            let e = DimensionError::Duplicate {
                first: other.clone(),
                second: key.to_owned(),
                dimension: d.name.to_owned(),
            };
            self.error(
                path,
                key_pos,
                format!("{e} (`{other}` is at {}:{})", at.line, at.column),
            );
        } else {
            sizes.insert(d.name, (key.to_owned(), key_pos));
        }
    }

    fn hpa_attribute(&mut self, v: &Value, path: &Path) -> Option<HpaAttribute> {
        let Some(m) = v.as_map() else {
            let value = self.attr_value(v, path, false)?;
            return Some(HpaAttribute { value, unit: None });
        };
        self.check_keys(m, path, &["value", "unit"]);
        let unit = self.opt_text(m, "unit", path);
        let Some(val) = m.get("value") else {
            self.error(path, v.pos, "missing `value`");
            return None;
        };
        let value = self.attr_value(val, &path.key("value"), false)?;
        Some(HpaAttribute { value, unit })
    }
}
