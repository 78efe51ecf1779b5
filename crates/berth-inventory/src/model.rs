//! The candidate model (seed 000's candidate schema plus zones, capacity, flavors and groups).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::InventoryError;

/// Identifier of a candidate: a cloud region id or a service instance id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CandidateId(pub String);

impl CandidateId {
    /// Wraps a string as a candidate id.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CandidateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CandidateId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl From<String> for CandidateId {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl std::borrow::Borrow<str> for CandidateId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// What a candidate is: a cloud region (new inventory) or an existing service instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InventoryType {
    /// A cloud region where a new instance can be created.
    Cloud,
    /// An existing service instance that can be shared.
    Service,
}

impl InventoryType {
    /// The reserved word used in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cloud => "cloud",
            Self::Service => "service",
        }
    }
}

impl fmt::Display for InventoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for InventoryType {
    type Err = InventoryError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cloud" => Ok(Self::Cloud),
            "service" => Ok(Self::Service),
            other => Err(InventoryError::UnknownName {
                kind: "inventory type",
                name: other.to_owned(),
                expected: "cloud, service",
            }),
        }
    }
}

/// A zone category for `zone` constraints (same/different zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneCategory {
    /// Sites that one disaster (hurricane, earthquake, flood plain) may take out together.
    Disaster,
    /// Geographic region; defaults from the candidate's `region` field.
    Region,
    /// A building complex; defaults from the candidate's `complex_name` field.
    Complex,
    /// Country; defaults from the candidate's `country` field.
    Country,
    /// Time zone (e.g. `America/Chicago`).
    Time,
    /// Maintenance window group: sites taken down together.
    Maintenance,
}

impl ZoneCategory {
    /// Every category, in order.
    pub const ALL: [ZoneCategory; 6] = [
        Self::Disaster,
        Self::Region,
        Self::Complex,
        Self::Country,
        Self::Time,
        Self::Maintenance,
    ];

    /// The canonical name used in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disaster => "disaster",
            Self::Region => "region",
            Self::Complex => "complex",
            Self::Country => "country",
            Self::Time => "time",
            Self::Maintenance => "maintenance",
        }
    }
}

impl fmt::Display for ZoneCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ZoneCategory {
    type Err = InventoryError;
    /// Accepts the canonical names and seed 000's long forms (`disaster_zone`, `time_zone`, ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "disaster" | "disaster_zone" => Ok(Self::Disaster),
            "region" => Ok(Self::Region),
            "complex" | "complex_name" => Ok(Self::Complex),
            "country" => Ok(Self::Country),
            "time" | "time_zone" => Ok(Self::Time),
            "maintenance" | "maintenance_zone" => Ok(Self::Maintenance),
            other => Err(InventoryError::UnknownName {
                kind: "zone category",
                name: other.to_owned(),
                expected: "disaster, region, complex, country, time, maintenance",
            }),
        }
    }
}

/// An attribute value: a scalar or a list of scalars.
///
/// Comparison between values is *loose* (see [`AttrValue::loosely_eq`]) because YAML
/// typing makes `2.0`, `"2.0"` and `2` hard to tell apart for authors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttrValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating point number.
    Float(f64),
    /// A string.
    Str(String),
    /// A list of values.
    List(Vec<AttrValue>),
}

impl AttrValue {
    /// Canonical text of a scalar used for loose comparison; `None` for lists.
    ///
    /// Numbers (and strings that parse as finite numbers) become their shortest decimal
    /// form with integral values printed without a fraction; booleans (and the strings
    /// `true`/`false` in any case) become `true`/`false`; other strings stay as they are.
    pub fn canonical(&self) -> Option<String> {
        match self {
            Self::Bool(b) => Some(b.to_string()),
            Self::Int(i) => Some(i.to_string()),
            Self::Float(f) => Some(canonical_float(*f)),
            Self::Str(s) => Some(canonical_str(s)),
            Self::List(_) => None,
        }
    }

    /// Loose equality: scalars compare by [`AttrValue::canonical`]; lists element-wise.
    pub fn loosely_eq(&self, other: &AttrValue) -> bool {
        match (self, other) {
            (Self::List(a), Self::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.loosely_eq(y))
            }
            (Self::List(_), _) | (_, Self::List(_)) => false,
            (a, b) => a.canonical() == b.canonical(),
        }
    }

    /// Whether this (candidate) value matches a wanted value: loose equality, or, when this
    /// value is a list and the wanted value a scalar, membership.
    pub fn matches(&self, wanted: &AttrValue) -> bool {
        if self.loosely_eq(wanted) {
            return true;
        }
        match (self, wanted) {
            (Self::List(items), w) if !matches!(w, Self::List(_)) => {
                items.iter().any(|i| i.loosely_eq(w))
            }
            _ => false,
        }
    }
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x}"),
            Self::Str(s) => f.write_str(s),
            Self::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl From<&str> for AttrValue {
    fn from(s: &str) -> Self {
        Self::Str(s.to_owned())
    }
}

impl From<i64> for AttrValue {
    fn from(i: i64) -> Self {
        Self::Int(i)
    }
}

impl From<bool> for AttrValue {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<f64> for AttrValue {
    fn from(f: f64) -> Self {
        Self::Float(f)
    }
}

fn canonical_float(f: f64) -> String {
    // 2^53: beyond it integral floats are not exact integers anyway.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT {
        // Truncation is exact here: the value is integral and within i64 range.
        #[allow(clippy::cast_possible_truncation)]
        let i = f as i64;
        i.to_string()
    } else {
        f.to_string()
    }
}

fn canonical_str(s: &str) -> String {
    let t = s.trim();
    if let Ok(i) = t.parse::<i64>() {
        return i.to_string();
    }
    if t.chars().any(|c| c.is_ascii_digit())
        && let Ok(f) = t.parse::<f64>()
        && f.is_finite()
    {
        return canonical_float(f);
    }
    if t.eq_ignore_ascii_case("true") {
        return "true".to_owned();
    }
    if t.eq_ignore_ascii_case("false") {
        return "false".to_owned();
    }
    s.to_owned()
}

/// A geographic coordinate in degrees (WGS 84).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coordinates {
    /// Latitude in degrees, -90..=90.
    pub latitude: f64,
    /// Longitude in degrees, -180..=180.
    pub longitude: f64,
}

impl Coordinates {
    /// Checked constructor: both values finite and within range.
    pub fn new(latitude: f64, longitude: f64) -> Result<Self, InventoryError> {
        if !(-90.0..=90.0).contains(&latitude) || !(-180.0..=180.0).contains(&longitude) {
            return Err(InventoryError::InvalidCoordinates {
                latitude,
                longitude,
            });
        }
        Ok(Self {
            latitude,
            longitude,
        })
    }
}

/// License availability for one software id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LicenseInfo {
    /// Licenses still available for new instances.
    pub available: u64,
}

/// One HPA attribute: a value and an optional unit (`{value: 16, unit: GB}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HpaAttribute {
    /// The value (number, string, boolean or list).
    pub value: AttrValue,
    /// Unit such as `MB`, `GB`; `None` for unitless values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// One HPA capability of a flavor: a feature group (`basicCapabilities`, `sriovNICNetwork`,
/// `cpuPinning`, `hugePages`, ...) with its attributes, like HAS's `hpa-capability`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HpaCapability {
    /// Feature name (`hpa-feature`).
    pub feature: String,
    /// Feature version (`hpa-version`); `v1` by default.
    pub version: String,
    /// CPU architecture (`architecture`); `generic` by default.
    pub architecture: String,
    /// Feature attributes by key (`hpa-feature-attributes`).
    pub attributes: BTreeMap<String, HpaAttribute>,
}

/// A flavor offered at a cloud region, for HPA matching.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flavor {
    /// Flavor id (`flavor-id`); defaults to the name.
    pub id: String,
    /// Flavor name (`flavor-name`), unique within a candidate.
    pub name: String,
    /// Capabilities (`hpa-capabilities`), `basicCapabilities` among them.
    pub capabilities: Vec<HpaCapability>,
}

impl Flavor {
    /// The capability with this feature name, if any.
    pub fn capability(&self, feature: &str) -> Option<&HpaCapability> {
        self.capabilities.iter().find(|c| c.feature == feature)
    }

    /// The attribute `key` of the feature `feature`, if any.
    pub fn attribute(&self, feature: &str, key: &str) -> Option<&HpaAttribute> {
        self.capability(feature)?.attributes.get(key)
    }
}

/// A placement candidate: a cloud region or an existing service instance.
///
/// Invariants after loading: `latitude` and `longitude` are both set or both unset and in
/// range; `cost` is finite and non-negative; `capacity` values are non-negative; `zones`
/// holds region/complex/country defaults from the fields of the same name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Unique id: service instance id or cloud region id.
    pub candidate_id: CandidateId,
    /// Type of the candidate.
    pub candidate_type: InventoryType,
    /// Inventory type the candidate is drawn for.
    pub inventory_type: InventoryType,
    /// Provider this candidate belongs to; `None` = served for every provider name.
    pub inventory_provider: Option<String>,
    /// Host id (existing inventory only).
    pub host_id: Option<String>,
    /// Unitless cost.
    pub cost: Option<f64>,
    /// Location id of `location_type` (for clouds, the cloud region id).
    pub location_id: Option<String>,
    /// Provider-defined location type.
    pub location_type: Option<String>,
    /// Latitude in degrees.
    pub latitude: Option<f64>,
    /// Longitude in degrees.
    pub longitude: Option<f64>,
    /// City.
    pub city: Option<String>,
    /// State or province.
    pub state: Option<String>,
    /// Country.
    pub country: Option<String>,
    /// Geographic region.
    pub region: Option<String>,
    /// Complex name.
    pub complex_name: Option<String>,
    /// Cloud owner (`att-aic`, `azure`, `aws`, ...).
    pub cloud_owner: Option<String>,
    /// Provider-defined cloud region version.
    pub cloud_region_version: Option<String>,
    /// CLLI code of the physical location.
    pub physical_location_id: Option<String>,
    /// Other attributes used by demand attribute filters and attribute constraints.
    pub attributes: BTreeMap<String, AttrValue>,
    /// Zone id per category.
    pub zones: BTreeMap<ZoneCategory, String>,
    /// Free capacity per dimension (`vcpu`, `ram_mib`, `disk_gib`, ...).
    pub capacity: BTreeMap<String, i64>,
    /// Flavors offered (cloud candidates).
    pub flavors: Vec<Flavor>,
    /// Inventory group ids this candidate belongs to.
    pub groups: Vec<String>,
    /// Service id (service candidates).
    pub service_id: Option<String>,
    /// Service type (service candidates).
    pub service_type: Option<String>,
    /// Topology vertex this candidate stands for.
    pub topology_node: Option<String>,
}

impl Candidate {
    /// A candidate with only an id and a type; every other field empty.
    pub fn new(candidate_id: impl Into<CandidateId>, inventory_type: InventoryType) -> Self {
        Self {
            candidate_id: candidate_id.into(),
            candidate_type: inventory_type,
            inventory_type,
            inventory_provider: None,
            host_id: None,
            cost: None,
            location_id: None,
            location_type: None,
            latitude: None,
            longitude: None,
            city: None,
            state: None,
            country: None,
            region: None,
            complex_name: None,
            cloud_owner: None,
            cloud_region_version: None,
            physical_location_id: None,
            attributes: BTreeMap::new(),
            zones: BTreeMap::new(),
            capacity: BTreeMap::new(),
            flavors: Vec::new(),
            groups: Vec::new(),
            service_id: None,
            service_type: None,
            topology_node: None,
        }
    }

    /// Coordinates when both latitude and longitude are set and valid.
    pub fn coordinates(&self) -> Option<Coordinates> {
        Coordinates::new(self.latitude?, self.longitude?).ok()
    }

    /// Fills the region, complex and country zones from the fields of the same name
    /// where no explicit zone was given.
    pub fn apply_zone_defaults(&mut self) {
        let defaults = [
            (ZoneCategory::Region, &self.region),
            (ZoneCategory::Complex, &self.complex_name),
            (ZoneCategory::Country, &self.country),
        ];
        for (category, field) in defaults {
            if let Some(v) = field {
                self.zones.entry(category).or_insert_with(|| v.clone());
            }
        }
    }

    /// The zone of a category, if known.
    pub fn zone(&self, category: ZoneCategory) -> Option<&str> {
        self.zones.get(&category).map(String::as_str)
    }

    /// An attribute by name: the `attributes` map first, then the typed string fields of
    /// the same name (`cloud_owner`, `city`, ...; A&AI's hyphenated spellings such as
    /// `cloud-owner` are accepted too), then `cost`.
    pub fn attribute(&self, key: &str) -> Option<Cow<'_, AttrValue>> {
        if let Some(v) = self.attributes.get(key) {
            return Some(Cow::Borrowed(v));
        }
        let field = match key.replace('-', "_").as_str() {
            "cost" => return self.cost.map(|c| Cow::Owned(AttrValue::Float(c))),
            "candidate_type" => Some(self.candidate_type.as_str().to_owned()),
            "inventory_type" => Some(self.inventory_type.as_str().to_owned()),
            "inventory_provider" => self.inventory_provider.clone(),
            "host_id" => self.host_id.clone(),
            "location_id" => self.location_id.clone(),
            "location_type" => self.location_type.clone(),
            "city" => self.city.clone(),
            "state" => self.state.clone(),
            "country" => self.country.clone(),
            "region" => self.region.clone(),
            "complex_name" => self.complex_name.clone(),
            "cloud_owner" => self.cloud_owner.clone(),
            "cloud_region_version" => self.cloud_region_version.clone(),
            "physical_location_id" => self.physical_location_id.clone(),
            "service_id" => self.service_id.clone(),
            "service_type" => self.service_type.clone(),
            "topology_node" => self.topology_node.clone(),
            _ => None,
        };
        field.map(|s| Cow::Owned(AttrValue::Str(s)))
    }

    /// Whether the candidate is served for the provider name `provider`.
    pub fn served_by(&self, provider: &str) -> bool {
        self.inventory_provider
            .as_deref()
            .is_none_or(|p| p == provider)
    }
}
