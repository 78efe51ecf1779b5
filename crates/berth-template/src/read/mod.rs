//! Reading a resolved document into the typed model, reporting every problem found.
//!
//! The reader never stops at the first problem: each section, entry and property is checked
//! and all diagnostics are gathered. A typed [`Template`] is produced only if none is an error.

mod constraints;
mod demands;
mod objective;

#[cfg(test)]
pub(crate) use constraints::CONSTRAINT_KEYS;
pub(crate) use constraints::allowed_properties;
pub(crate) use demands::{CANDIDATE_KEYS, REQUIREMENT_KEYS};

use std::collections::{BTreeMap, HashSet};

use berth_doc::{Diagnostics, Kind, Map, Path, Pos, Seg, Value};
use berth_units::{Family, Threshold, Unit};
use indexmap::{IndexMap, IndexSet};

use crate::intrinsic;
use crate::model::{
    Coordinate, Location, Opaque, Placemark, Reservation, Reservations, Template, Version,
};
use crate::suggest::did_you_mean;

/// Top-level keys of a template.
pub(crate) const TOP_KEYS: [&str; 8] = [
    "homing_template_version",
    "parameters",
    "locations",
    "demands",
    "constraints",
    "reservations",
    "reservation",
    "optimization",
];

/// Placemark keys of a location.
pub(crate) const PLACEMARK_KEYS: [&str; 8] = [
    "iso_country_code",
    "postal_code",
    "administrative_area",
    "sub_administrative_area",
    "locality",
    "sub_locality",
    "thoroughfare",
    "sub_thoroughfare",
];

/// Keys of a location.
pub(crate) const LOCATION_KEYS: [&str; 12] = [
    "latitude",
    "longitude",
    "host_name",
    "clli_code",
    "iso_country_code",
    "postal_code",
    "administrative_area",
    "sub_administrative_area",
    "locality",
    "sub_locality",
    "thoroughfare",
    "sub_thoroughfare",
];

/// Keys of a seed-form reservation.
pub(crate) const RESERVATION_KEYS: [&str; 3] = ["type", "demands", "properties"];

/// Reads a whole template: resolves intrinsics, then builds the typed model.
pub(crate) fn read(
    doc: &Value,
    source: Option<&str>,
    overrides: &BTreeMap<String, serde_json::Value>,
    files: &BTreeMap<String, String>,
    diags: &mut Diagnostics,
) -> Option<Template> {
    let root = Path::root();
    let Some(top) = doc.as_map() else {
        diags.error(
            &root,
            doc.pos,
            format!(
                "expected a homing template mapping; found {}",
                describe(doc)
            ),
        );
        return None;
    };
    for (k, _) in top.iter() {
        if !TOP_KEYS.contains(&k.name.as_str()) {
            diags.error(
                &root.key(&k.name),
                k.pos,
                format!(
                    "unknown top-level key `{}`; expected one of {}{}",
                    k.name,
                    TOP_KEYS.join(", "),
                    did_you_mean(&k.name, TOP_KEYS)
                ),
            );
        }
    }
    if let (Some((a, _)), Some((b, _))) = (top.entry("reservations"), top.entry("reservation")) {
        let (first, second) = if a.pos <= b.pos { (a, b) } else { (b, a) };
        diags.error(
            &root.key(&second.name),
            second.pos,
            format!(
                "both `{}` and `{}` given; expected only one",
                first.name, second.name
            ),
        );
    }
    // `parameters` must be a mapping before anything can be resolved against it.
    if let Some(p) = top.get("parameters")
        && !p.is_null()
        && p.as_map().is_none()
    {
        diags.error(
            &root.key("parameters"),
            p.pos,
            format!(
                "expected a mapping of parameter names to values; found {}",
                describe(p)
            ),
        );
    }
    let resolved = intrinsic::resolve(doc, overrides, files, diags);
    let mut r = Reader::new(diags, &resolved.poisoned, source);
    let top = resolved.root.as_map()?;
    let version = r.version(top, doc.pos);
    let parameters: IndexMap<String, Opaque> = resolved
        .parameters
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();

    // Names first, so references are checked even where a declaration has other problems.
    r.location_names = section_names(top.get("locations"));
    r.demand_names = section_names(top.get("demands"));

    let locations = r.locations(top.get("locations"), &root.key("locations"));
    let demands = r.demands(top, &root.key("demands"));
    let constraints = r.constraints(top.get("constraints"), &root.key("constraints"));
    let reservations = match top
        .entry("reservations")
        .or_else(|| top.entry("reservation"))
    {
        Some((k, v)) => r.reservations(v, &root.key(&k.name)),
        None => Reservations::default(),
    };
    // OSDF sends `optimization: {}` for a policy without an objective; HAS reads it as none.
    let optimization = match top.get("optimization") {
        Some(v) if !v.is_null() && !v.as_map().is_some_and(|m| m.is_empty()) => {
            r.optimization(v, &root.key("optimization"), version, &constraints)
        }
        _ => None,
    };
    if r.diags.has_errors() {
        return None;
    }
    Some(Template {
        version: version?,
        parameters,
        locations,
        demands,
        constraints,
        reservations,
        optimization,
    })
}

fn section_names(v: Option<&Value>) -> IndexSet<String> {
    v.and_then(Value::as_map)
        .map(|m| m.iter().map(|(k, _)| k.name.clone()).collect())
        .unwrap_or_default()
}

/// "a string `abc`", "a list", ... for messages.
pub(crate) fn describe(v: &Value) -> String {
    match &v.kind {
        Kind::Null => "nothing (null)".to_owned(),
        Kind::Str(s) => {
            let short: String = s.chars().take(40).collect();
            let ellipsis = if short.len() < s.len() { "..." } else { "" };
            format!("a string `{short}{ellipsis}`")
        }
        Kind::Bool(b) => format!("a boolean `{b}`"),
        Kind::Int(i) => format!("an integer `{i}`"),
        Kind::Float(f) => format!("a number `{f}`"),
        Kind::Seq(_) => "a list".to_owned(),
        Kind::Map(_) => "a mapping".to_owned(),
    }
}

/// Walks the resolved document, building typed values and gathering diagnostics.
pub(crate) struct Reader<'a> {
    pub(crate) diags: &'a mut Diagnostics,
    poisoned: &'a HashSet<Path>,
    source_lines: Vec<&'a str>,
    pub(crate) demand_names: IndexSet<String>,
    pub(crate) location_names: IndexSet<String>,
    /// Regular expressions already compiled successfully (pattern, case-insensitive).
    pub(crate) valid_patterns: HashSet<(String, bool)>,
}

impl<'a> Reader<'a> {
    fn new(
        diags: &'a mut Diagnostics,
        poisoned: &'a HashSet<Path>,
        source: Option<&'a str>,
    ) -> Self {
        Reader {
            diags,
            poisoned,
            source_lines: source.map(|s| s.lines().collect()).unwrap_or_default(),
            demand_names: IndexSet::new(),
            location_names: IndexSet::new(),
            valid_patterns: HashSet::new(),
        }
    }

    pub(crate) fn error(&mut self, path: &Path, pos: Pos, msg: impl Into<String>) {
        self.diags.error(path, pos, msg);
    }

    pub(crate) fn warning(&mut self, path: &Path, pos: Pos, msg: impl Into<String>) {
        self.diags.warning(path, pos, msg);
    }

    /// Whether `path` or one of its ancestors failed intrinsic resolution.
    fn is_poisoned(&self, path: &Path) -> bool {
        if self.poisoned.is_empty() {
            return false;
        }
        // Look each ancestor up rather than scanning the set: many failures stay cheap.
        let mut prefix = Path::root();
        if self.poisoned.contains(&prefix) {
            return true;
        }
        for seg in path.segments() {
            prefix = match seg {
                Seg::Key(k) => prefix.key(k.as_str()),
                Seg::Index(i) => prefix.index(*i),
            };
            if self.poisoned.contains(&prefix) {
                return true;
            }
        }
        false
    }

    /// Reports that `v` at `path` is not `expected` (unless already reported).
    pub(crate) fn type_error(&mut self, path: &Path, v: &Value, expected: &str) {
        if !self.is_poisoned(path) {
            self.error(
                path,
                v.pos,
                format!("expected {expected}; found {}", describe(v)),
            );
        }
    }

    /// The mapping `v`, or an error. Null reads as an empty mapping when `null_ok`.
    pub(crate) fn map<'v>(&mut self, v: &'v Value, path: &Path, expected: &str) -> Option<&'v Map> {
        match &v.kind {
            Kind::Map(m) => Some(m),
            _ => {
                self.type_error(path, v, expected);
                None
            }
        }
    }

    /// Reports keys of `m` that are not in `allowed`.
    pub(crate) fn check_keys(&mut self, m: &Map, path: &Path, allowed: &[&str], what: &str) {
        for (k, _) in m.iter() {
            if !allowed.contains(&k.name.as_str()) {
                let expected = if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    format!("one of {}", allowed.join(", "))
                };
                self.error(
                    &path.key(&k.name),
                    k.pos,
                    format!(
                        "unknown key `{}` in {what}; expected {expected}{}",
                        k.name,
                        did_you_mean(&k.name, allowed.iter().copied())
                    ),
                );
            }
        }
    }

    /// The value of required key `key`, or an error at the mapping.
    pub(crate) fn required<'v>(
        &mut self,
        m: &'v Map,
        key: &str,
        path: &Path,
        pos: Pos,
        what: &str,
    ) -> Option<&'v Value> {
        match m.get(key) {
            Some(v) if !v.is_null() => Some(v),
            Some(v) => {
                let v = v.clone();
                self.type_error(&path.key(key), &v, &format!("a value for `{key}`"));
                None
            }
            None => {
                if !self.is_poisoned(path) {
                    self.error(path, pos, format!("missing `{key}`; {what} requires it"));
                }
                None
            }
        }
    }

    /// A scalar as text (`1.1` -> "1.1"); null, lists and mappings are errors.
    pub(crate) fn text(&mut self, v: &Value, path: &Path) -> Option<String> {
        match &v.kind {
            Kind::Str(s) => Some(s.clone()),
            Kind::Int(_) | Kind::Float(_) | Kind::Bool(_) => v.scalar_text(),
            _ => {
                self.type_error(path, v, "a string");
                None
            }
        }
    }

    /// An optional scalar text under `key`.
    pub(crate) fn opt_text(&mut self, m: &Map, key: &str, path: &Path) -> Option<String> {
        match m.get(key) {
            Some(v) if !v.is_null() => self.text(v, &path.key(key)),
            _ => None,
        }
    }

    /// A name: a non-empty string.
    pub(crate) fn name(&mut self, v: &Value, path: &Path, what: &str) -> Option<String> {
        match &v.kind {
            Kind::Str(s) if !s.is_empty() => Some(s.clone()),
            _ => {
                self.type_error(path, v, what);
                None
            }
        }
    }

    /// A finite number; numeric strings (`"100"`, as in the seed's candidate example) are accepted.
    pub(crate) fn number(&mut self, v: &Value, path: &Path) -> Option<f64> {
        let n = match &v.kind {
            Kind::Int(_) | Kind::Float(_) => v.as_f64(),
            Kind::Str(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n.is_finite() => Some(n),
            _ => {
                self.type_error(path, v, "a finite number");
                None
            }
        }
    }

    /// A boolean; the strings `true`/`false` (any case) are accepted, as HAS writes them.
    pub(crate) fn boolean(&mut self, v: &Value, path: &Path) -> Option<bool> {
        match &v.kind {
            Kind::Bool(b) => Some(*b),
            Kind::Str(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Kind::Str(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => {
                self.type_error(path, v, "a boolean");
                None
            }
        }
    }

    /// One string or a list of strings (the seed's "may appear without list markers").
    pub(crate) fn text_list(&mut self, v: &Value, path: &Path) -> Vec<String> {
        match &v.kind {
            Kind::Seq(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| self.text(item, &path.index(i)))
                .collect(),
            Kind::Null => Vec::new(),
            _ => self.text(v, path).into_iter().collect(),
        }
    }

    /// A mapping of opaque values.
    pub(crate) fn opaque_map(&mut self, v: &Value, path: &Path) -> IndexMap<String, Opaque> {
        match &v.kind {
            Kind::Map(m) => m
                .iter()
                .map(|(k, v)| (k.name.clone(), v.to_json()))
                .collect(),
            Kind::Null => IndexMap::new(),
            _ => {
                self.type_error(path, v, "a mapping of names to values");
                IndexMap::new()
            }
        }
    }

    /// A threshold property: a string `[op] number [unit]` / `a-b unit`, or a bare number.
    pub(crate) fn threshold(
        &mut self,
        v: &Value,
        path: &Path,
        family: Family,
        default_unit: Unit,
    ) -> Option<Threshold> {
        let result = match &v.kind {
            Kind::Str(s) => Threshold::parse(s, family, default_unit).map_err(|e| {
                let pos = self.offset_pos(v.pos, s, e.offset);
                (pos, e.message())
            }),
            Kind::Int(_) | Kind::Float(_) => {
                let n = v.as_f64().unwrap_or(f64::NAN);
                Threshold::from_number(n, default_unit).map_err(|e| (v.pos, e.message()))
            }
            _ => {
                self.type_error(
                    path,
                    v,
                    &format!("a {family} threshold such as `< 250 {default_unit}`"),
                );
                return None;
            }
        };
        match result {
            Ok(t) => Some(t),
            Err((pos, msg)) => {
                self.error(path, pos, format!("invalid {family} threshold: {msg}"));
                None
            }
        }
    }

    /// The position of byte `offset` inside scalar `text` that starts at `pos`, when the
    /// source shows the scalar there on one line (plain or quoted); else `pos`.
    fn offset_pos(&self, pos: Pos, text: &str, offset: usize) -> Pos {
        let Some(line) = pos
            .line
            .checked_sub(1)
            .and_then(|l| self.source_lines.get(l as usize))
        else {
            return pos;
        };
        let rest: String = line
            .chars()
            .skip(pos.column.saturating_sub(1) as usize)
            .collect();
        let shift = if rest.starts_with(text) {
            0
        } else if (rest.starts_with('"') || rest.starts_with('\'')) && rest[1..].starts_with(text) {
            1
        } else {
            return pos;
        };
        let chars = text.get(..offset).map_or(0, |p| p.chars().count());
        let add = u32::try_from(shift + chars).unwrap_or(0);
        Pos {
            line: pos.line,
            column: pos.column.saturating_add(add),
        }
    }

    /// A reference to a declared demand.
    pub(crate) fn demand_ref(&mut self, v: &Value, path: &Path) -> Option<String> {
        let name = self.name(v, path, "a demand name")?;
        if self.demand_names.contains(&name) {
            return Some(name);
        }
        let hint = did_you_mean(&name, self.demand_names.iter().map(String::as_str));
        self.error(
            path,
            v.pos,
            format!("undefined demand `{name}`; expected a demand declared in `demands`{hint}"),
        );
        None
    }

    /// A reference to a declared location.
    pub(crate) fn location_ref(&mut self, v: &Value, path: &Path) -> Option<String> {
        let name = self.name(v, path, "a location name")?;
        if self.location_names.contains(&name) {
            return Some(name);
        }
        let hint = did_you_mean(&name, self.location_names.iter().map(String::as_str));
        self.error(
            path,
            v.pos,
            format!(
                "undefined location `{name}`; expected a location declared in `locations`{hint}"
            ),
        );
        None
    }

    /// `demands` of a constraint or reservation: one name or a list, each declared.
    pub(crate) fn demand_list(&mut self, v: &Value, path: &Path) -> Vec<String> {
        let mut out = Vec::new();
        match &v.kind {
            Kind::Seq(items) => {
                if items.is_empty() {
                    self.error(
                        path,
                        v.pos,
                        "expected at least one demand; found an empty list",
                    );
                }
                for (i, item) in items.iter().enumerate() {
                    let p = path.index(i);
                    if let Some(name) = self.demand_ref(item, &p) {
                        if out.contains(&name) {
                            self.warning(
                                &p,
                                item.pos,
                                format!("demand `{name}` is listed more than once"),
                            );
                        } else {
                            out.push(name);
                        }
                    }
                }
            }
            Kind::Str(_) => out.extend(self.demand_ref(v, path)),
            _ => self.type_error(path, v, "a demand name or a list of demand names"),
        }
        out
    }

    fn version(&mut self, top: &Map, pos: Pos) -> Option<Version> {
        let path = Path::root().key("homing_template_version");
        let all: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
        let Some(v) = top.get("homing_template_version") else {
            self.error(
                &Path::root(),
                pos,
                format!(
                    "missing `homing_template_version`; expected one of {}",
                    all.join(", ")
                ),
            );
            return None;
        };
        // A YAML date is read as its string by berth-doc; anything else must be a string too.
        let Some(s) = v.as_str() else {
            self.type_error(
                &path,
                v,
                &format!("a version string, one of {}", all.join(", ")),
            );
            return None;
        };
        match s.parse::<Version>() {
            Ok(version) => Some(version),
            Err(msg) => {
                self.error(&path, v.pos, msg);
                None
            }
        }
    }

    fn locations(&mut self, v: Option<&Value>, path: &Path) -> IndexMap<String, Location> {
        let mut out = IndexMap::new();
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return out;
        };
        let Some(m) = self.map(v, path, "a mapping of location names to locations") else {
            return out;
        };
        for (k, lv) in m.iter() {
            let lpath = path.key(&k.name);
            if let Some(loc) = self.location(&k.name, lv, &lpath) {
                out.insert(k.name.clone(), loc);
            }
        }
        out
    }

    fn location(&mut self, name: &str, v: &Value, path: &Path) -> Option<Location> {
        let m = self.map(
            v,
            path,
            "a location mapping (latitude/longitude, host_name, clli_code or a placemark)",
        )?;
        self.check_keys(m, path, &LOCATION_KEYS, "a location");
        if m.is_empty() {
            self.error(
                path,
                v.pos,
                "empty location; expected latitude/longitude, host_name, clli_code or placemark keys",
            );
        }
        let coordinate = self.coordinate(m, path, v.pos, "location");
        let host_name = self.opt_text(m, "host_name", path);
        let clli_code = self.opt_text(m, "clli_code", path);
        if let (Some(code), Some(cv)) = (&clli_code, m.get("clli_code")) {
            check_clli(self, code, cv, &path.key("clli_code"));
        }
        let mut placemark = Placemark::default();
        let mut any_placemark = false;
        for key in PLACEMARK_KEYS {
            let value = self.opt_text(m, key, path);
            any_placemark |= value.is_some();
            let slot = match key {
                "iso_country_code" => &mut placemark.iso_country_code,
                "postal_code" => &mut placemark.postal_code,
                "administrative_area" => &mut placemark.administrative_area,
                "sub_administrative_area" => &mut placemark.sub_administrative_area,
                "locality" => &mut placemark.locality,
                "sub_locality" => &mut placemark.sub_locality,
                "thoroughfare" => &mut placemark.thoroughfare,
                _ => &mut placemark.sub_thoroughfare,
            };
            *slot = value;
        }
        Some(Location {
            name: name.to_owned(),
            coordinate,
            host_name,
            clli_code,
            placemark: any_placemark.then_some(placemark),
        })
    }

    /// `latitude`/`longitude` of a location or candidate: both or neither, range-checked.
    pub(crate) fn coordinate(
        &mut self,
        m: &Map,
        path: &Path,
        pos: Pos,
        what: &str,
    ) -> Option<Coordinate> {
        let lat = m.get("latitude").filter(|v| !v.is_null());
        let lon = m.get("longitude").filter(|v| !v.is_null());
        match (lat, lon) {
            (None, None) => None,
            (Some(_), None) => {
                self.error(
                    path,
                    pos,
                    format!("{what} has `latitude` but no `longitude`; expected both"),
                );
                None
            }
            (None, Some(_)) => {
                self.error(
                    path,
                    pos,
                    format!("{what} has `longitude` but no `latitude`; expected both"),
                );
                None
            }
            (Some(la), Some(lo)) => {
                let latitude = self.ranged(la, &path.key("latitude"), 90.0, "latitude");
                let longitude = self.ranged(lo, &path.key("longitude"), 180.0, "longitude");
                Some(Coordinate {
                    latitude: latitude?,
                    longitude: longitude?,
                })
            }
        }
    }

    fn ranged(&mut self, v: &Value, path: &Path, limit: f64, what: &str) -> Option<f64> {
        let n = self.number(v, path)?;
        if n.abs() > limit {
            self.error(
                path,
                v.pos,
                format!("{what} {n} out of range; expected -{limit} to {limit} degrees"),
            );
            return None;
        }
        Some(n)
    }

    fn reservations(&mut self, v: &Value, path: &Path) -> Reservations {
        let mut out = Reservations::default();
        if v.is_null() {
            return out;
        }
        let Some(m) = self.map(v, path, "a mapping of reservations") else {
            return out;
        };
        // HAS form: `service_model` and `service_candidates` instead of named reservations.
        let has_form = m.get("service_candidates").is_some() || m.get("service_model").is_some();
        if has_form {
            self.check_keys(
                m,
                path,
                &["service_model", "service_candidates"],
                "reservations",
            );
            out.service_model = m.get("service_model").map(Value::to_json);
            if let Some(sc) = m.get("service_candidates") {
                let scp = path.key("service_candidates");
                if let Some(items) = self.map(sc, &scp, "a mapping of reservations") {
                    for (k, rv) in items.iter() {
                        if let Some(res) = self.reservation(&k.name, rv, &scp.key(&k.name)) {
                            out.items.insert(k.name.clone(), res);
                        }
                    }
                }
            }
            return out;
        }
        for (k, rv) in m.iter() {
            if let Some(res) = self.reservation(&k.name, rv, &path.key(&k.name)) {
                out.items.insert(k.name.clone(), res);
            }
        }
        out
    }

    fn reservation(&mut self, name: &str, v: &Value, path: &Path) -> Option<Reservation> {
        let m = self.map(
            v,
            path,
            "a reservation mapping with type, demands and properties",
        )?;
        self.check_keys(m, path, &RESERVATION_KEYS, "a reservation");
        let kind = self.opt_text(m, "type", path);
        let demands = match self.required(m, "demands", path, v.pos, "a reservation") {
            Some(d) => self.demand_list(d, &path.key("demands")),
            None => Vec::new(),
        };
        let mut res = Reservation {
            name: name.to_owned(),
            kind,
            demands,
            controller: None,
            request: None,
            properties: IndexMap::new(),
        };
        if let Some(pv) = m.get("properties").filter(|p| !p.is_null()) {
            let ppath = path.key("properties");
            if let Some(props) = self.map(pv, &ppath, "a mapping of reservation properties") {
                for (k, item) in props.iter() {
                    match k.name.as_str() {
                        "controller" => res.controller = self.text(item, &ppath.key("controller")),
                        "request" => res.request = Some(self.request(item, &ppath.key("request"))),
                        _ => {
                            res.properties.insert(k.name.clone(), item.to_json());
                        }
                    }
                }
            }
        }
        Some(res)
    }

    /// An opaque controller request; a non-mapping is kept but warned about.
    pub(crate) fn request(&mut self, v: &Value, path: &Path) -> Opaque {
        if v.as_map().is_none() && !self.is_poisoned(path) {
            self.warning(
                path,
                v.pos,
                format!(
                    "expected a mapping of key/value pairs; found {}, passed to the controller as is",
                    describe(v)
                ),
            );
        }
        v.to_json()
    }
}

/// CLLI codes are 8 letters or digits.
fn check_clli(r: &mut Reader<'_>, code: &str, v: &Value, path: &Path) {
    let n = code.chars().count();
    if n != 8 {
        r.error(
            path,
            v.pos,
            format!("clli_code `{code}` has {n} characters; expected 8"),
        );
    } else if !code.chars().all(|c| c.is_ascii_alphanumeric()) {
        r.error(path, v.pos, format!("clli_code `{code}` has characters other than letters and digits; expected 8 letters or digits"));
    }
}
