//! Coordinates wherever they are written, the `host_locations` and `clli_locations`
//! sections, and candidates' coordinates from their CLLI code.

use std::collections::BTreeMap;

use berth_doc::{Map, Path, Pos, Value};

use super::{Cx, Inventory, is_clli};
use crate::model::Coordinates;

impl Cx {
    pub(super) fn coordinates(
        &mut self,
        m: &Map,
        path: &Path,
        pos: Pos,
        required: bool,
    ) -> Option<Coordinates> {
        let lat = m.get("latitude").and_then(|v| {
            let p = path.key("latitude");
            let x = self.number(v, &p)?;
            if (-90.0..=90.0).contains(&x) {
                Some(x)
            } else {
                self.error(
                    &p,
                    v.pos,
                    format!("latitude {x} out of range; expected -90..=90"),
                );
                None
            }
        });
        let lon = m.get("longitude").and_then(|v| {
            let p = path.key("longitude");
            let x = self.number(v, &p)?;
            if (-180.0..=180.0).contains(&x) {
                Some(x)
            } else {
                self.error(
                    &p,
                    v.pos,
                    format!("longitude {x} out of range; expected -180..=180"),
                );
                None
            }
        });
        let has_lat = m.get("latitude").is_some_and(|v| !v.is_null());
        let has_lon = m.get("longitude").is_some_and(|v| !v.is_null());
        match (has_lat, has_lon) {
            (true, false) => self.error(path, pos, "`latitude` given without `longitude`"),
            (false, true) => self.error(path, pos, "`longitude` given without `latitude`"),
            (false, false) if required => {
                self.error(path, pos, "missing `latitude` and `longitude`");
            }
            _ => {}
        }
        Some(Coordinates {
            latitude: lat?,
            longitude: lon?,
        })
    }

    pub(super) fn locations(
        &mut self,
        v: &Value,
        path: &Path,
        clli: bool,
    ) -> BTreeMap<String, Coordinates> {
        let mut out = BTreeMap::new();
        let what = if clli {
            "locations by clli code"
        } else {
            "locations by host name"
        };
        let Some(m) = self.map(v, path, what) else {
            return out;
        };
        for (k, val) in m.iter() {
            let p = path.key(k.name.as_str());
            if clli && !is_clli(&k.name) {
                self.error(
                    &p,
                    k.pos,
                    format!(
                        "clli code `{}` must be 8 letters or digits, found {} characters",
                        k.name,
                        k.name.chars().count()
                    ),
                );
            }
            let Some(lm) = self.map(val, &p, "a location") else {
                continue;
            };
            self.check_keys(lm, &p, &["latitude", "longitude"]);
            if let Some(c) = self.coordinates(lm, &p, val.pos, true) {
                out.insert(k.name.clone(), c);
            }
        }
        out
    }

    /// Candidates without coordinates take those of their CLLI code, when known.
    pub(super) fn fill_from_clli(&mut self, inv: &mut Inventory) {
        for c in inv.candidates.values_mut() {
            if c.latitude.is_some() {
                continue;
            }
            if let Some(coords) = c
                .physical_location_id
                .as_ref()
                .and_then(|code| inv.clli_locations.get(code))
            {
                c.latitude = Some(coords.latitude);
                c.longitude = Some(coords.longitude);
            }
        }
    }
}
