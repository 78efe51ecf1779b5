//! The candidate model (seed 000's candidate schema plus zones, capacity, flavors and groups).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::InventoryError;
pub use crate::ids::CandidateId;

/// What a candidate is: a cloud region (new inventory), an existing service instance, or
/// one of HAS's network-slicing and transport kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InventoryType {
    /// A cloud region where a new instance can be created.
    Cloud,
    /// An existing service instance that can be shared.
    Service,
    /// A transport link or service.
    Transport,
    /// An existing VF module.
    Vfmodule,
    /// An existing network slice subnet instance.
    Nssi,
    /// An existing network slice instance.
    Nsi,
    /// A slice profile: what a new slice would be built from ("create new").
    SliceProfiles,
    /// A network slice template.
    Nst,
}

impl InventoryType {
    /// Every inventory type, in document order.
    pub const ALL: [InventoryType; 8] = [
        Self::Cloud,
        Self::Service,
        Self::Transport,
        Self::Vfmodule,
        Self::Nssi,
        Self::Nsi,
        Self::SliceProfiles,
        Self::Nst,
    ];

    /// The reserved word used in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cloud => "cloud",
            Self::Service => "service",
            Self::Transport => "transport",
            Self::Vfmodule => "vfmodule",
            Self::Nssi => "nssi",
            Self::Nsi => "nsi",
            Self::SliceProfiles => "slice_profiles",
            Self::Nst => "nst",
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
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| InventoryError::UnknownName {
                kind: "inventory type",
                name: s.to_owned(),
                expected: "cloud, service, transport, vfmodule, nssi, nsi, slice_profiles, nst",
            })
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
        Canon::of(self).map(Canon::into_text)
    }

    /// Loose equality: scalars compare by [`AttrValue::canonical`]; lists element-wise.
    pub fn loosely_eq(&self, other: &AttrValue) -> bool {
        match (self, other) {
            (Self::List(a), Self::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.loosely_eq(y))
            }
            (Self::List(_), _) | (_, Self::List(_)) => false,
            (a, b) => Canon::of(a) == Canon::of(b),
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

/// [`AttrValue::canonical`] without allocating in the common cases: the canonical text of a
/// scalar as an integer (when the text is an `i64`'s decimal form) or as text (which then is
/// never such a form). Two scalars are loosely equal exactly when their `Canon`s are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Canon<'a> {
    /// The canonical text is `i.to_string()`.
    Int(i64),
    /// Any other canonical text.
    Text(Cow<'a, str>),
}

impl Canon<'_> {
    /// The canonical form of a scalar; `None` for a list.
    pub(crate) fn of(v: &AttrValue) -> Option<Canon<'_>> {
        Canon::scalar_or_list(v).ok()
    }

    /// The canonical form of a scalar, or a list's items.
    pub(crate) fn scalar_or_list(v: &AttrValue) -> Result<Canon<'_>, &[AttrValue]> {
        match v {
            AttrValue::Bool(b) => Ok(Canon::of_bool(*b)),
            AttrValue::Int(i) => Ok(Canon::Int(*i)),
            AttrValue::Float(f) => Ok(Canon::of_float(*f)),
            AttrValue::Str(s) => Ok(Canon::of_str(s)),
            AttrValue::List(items) => Err(items),
        }
    }

    /// The canonical text.
    pub(crate) fn into_text(self) -> String {
        match self {
            Canon::Int(i) => i.to_string(),
            Canon::Text(t) => t.into_owned(),
        }
    }

    fn of_bool(b: bool) -> Canon<'static> {
        Canon::Text(Cow::Borrowed(if b { "true" } else { "false" }))
    }

    /// Integral floats below 2^53 as integers, others in their shortest decimal form.
    pub(crate) fn of_float(f: f64) -> Canon<'static> {
        // 2^53: beyond it integral floats are not exact integers anyway.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT {
            // Truncation is exact here: the value is integral and within i64 range.
            #[allow(clippy::cast_possible_truncation)]
            return Canon::Int(f as i64);
        }
        // Rare: huge or fractional or not finite. Huge integral floats print as digits that
        // may be an i64's decimal form.
        let text = f.to_string();
        match text.parse::<i64>() {
            Ok(i) if i.to_string() == text => Canon::Int(i),
            _ => Canon::Text(Cow::Owned(text)),
        }
    }

    /// Trimmed numbers as numbers, `true`/`false` in any case as booleans, other strings as
    /// written.
    pub(crate) fn of_str(s: &str) -> Canon<'_> {
        let t = s.trim();
        if let Ok(i) = t.parse::<i64>() {
            return Canon::Int(i);
        }
        if t.chars().any(|c| c.is_ascii_digit())
            && let Ok(f) = t.parse::<f64>()
            && f.is_finite()
        {
            return Canon::of_float(f);
        }
        if t.eq_ignore_ascii_case("true") {
            return Canon::of_bool(true);
        }
        if t.eq_ignore_ascii_case("false") {
            return Canon::of_bool(false);
        }
        Canon::Text(Cow::Borrowed(s))
    }
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

    /// What one instance of this flavor takes per dimension: the `basicCapabilities`
    /// attributes that name a registered dimension (`numVirtualCpu` is `vcpu`,
    /// `virtualMemSize` `ram_mib`, `diskSize` `disk_gib`), in base units rounded up. The
    /// loader refuses such an attribute it cannot read, so none is left out unseen.
    pub fn size(&self) -> BTreeMap<&'static str, u64> {
        let Some(basic) = self.capability(BASIC_CAPABILITIES) else {
            return BTreeMap::new();
        };
        basic
            .attributes
            .iter()
            .filter_map(|(k, a)| {
                let (d, _) = berth_units::dimension::lookup(k)?;
                let amount = a.amount(k)?.ok()?;
                Some((d.name, amount.value))
            })
            .collect()
    }
}

/// The HPA feature holding a flavor's sizes.
pub const BASIC_CAPABILITIES: &str = "basicCapabilities";

impl HpaAttribute {
    /// This attribute read as an amount of dimension `key` (rounded up, as an instance
    /// needs it); `None` when the value is no number or text at all.
    pub fn amount(
        &self,
        key: &str,
    ) -> Option<Result<berth_units::dimension::Amount, berth_units::DimensionError>> {
        use berth_units::dimension::{Raw, Round, amount};
        let text = match &self.value {
            AttrValue::Int(_) | AttrValue::Float(_) | AttrValue::Str(_) => self.value.to_string(),
            AttrValue::Bool(_) | AttrValue::List(_) => return None,
        };
        let raw = match (&self.value, self.unit.as_deref()) {
            (_, Some(unit)) => Raw::Quantity {
                quantity: &text,
                unit: Some(unit),
            },
            (AttrValue::Str(_), None) => Raw::Text(&text),
            _ => Raw::Number(&text),
        };
        Some(amount(key, raw, Round::Up))
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
    /// Free capacity per dimension, in its base unit; keys are the dimension registry's
    /// canonical names (`vcpu`, `ram_mib` in MiB, `disk_gib` in GiB, `instances`,
    /// `addresses`; see `berth_units::dimension`) or, for other dimensions, the key as written.
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
        AttrLookup::new(key).get(self).map(AttrRef::into_cow)
    }

    /// Whether [`Candidate::apply_zone_defaults`] would change anything.
    pub(crate) fn lacks_zone_defaults(&self) -> bool {
        [
            (ZoneCategory::Region, &self.region),
            (ZoneCategory::Complex, &self.complex_name),
            (ZoneCategory::Country, &self.country),
        ]
        .into_iter()
        .any(|(category, field)| field.is_some() && !self.zones.contains_key(&category))
    }

    /// Whether the candidate is served for the provider name `provider`.
    pub fn served_by(&self, provider: &str) -> bool {
        self.inventory_provider
            .as_deref()
            .is_none_or(|p| p == provider)
    }
}

/// A typed field an attribute name falls back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Field {
    Cost,
    CandidateType,
    InventoryType,
    InventoryProvider,
    HostId,
    LocationId,
    LocationType,
    City,
    State,
    Country,
    Region,
    ComplexName,
    CloudOwner,
    CloudRegionVersion,
    PhysicalLocationId,
    ServiceId,
    ServiceType,
    TopologyNode,
}

impl Field {
    /// Every field, in declaration order (`ALL[f as usize] == f`).
    pub(crate) const ALL: [Field; 18] = [
        Field::Cost,
        Field::CandidateType,
        Field::InventoryType,
        Field::InventoryProvider,
        Field::HostId,
        Field::LocationId,
        Field::LocationType,
        Field::City,
        Field::State,
        Field::Country,
        Field::Region,
        Field::ComplexName,
        Field::CloudOwner,
        Field::CloudRegionVersion,
        Field::PhysicalLocationId,
        Field::ServiceId,
        Field::ServiceType,
        Field::TopologyNode,
    ];

    /// The field an attribute name falls back to; A&AI's hyphens count as underscores.
    fn named(key: &str) -> Option<Field> {
        Some(match key.replace('-', "_").as_str() {
            "cost" => Field::Cost,
            "candidate_type" => Field::CandidateType,
            "inventory_type" => Field::InventoryType,
            "inventory_provider" => Field::InventoryProvider,
            "host_id" => Field::HostId,
            "location_id" => Field::LocationId,
            "location_type" => Field::LocationType,
            "city" => Field::City,
            "state" => Field::State,
            "country" => Field::Country,
            "region" => Field::Region,
            "complex_name" => Field::ComplexName,
            "cloud_owner" => Field::CloudOwner,
            "cloud_region_version" => Field::CloudRegionVersion,
            "physical_location_id" => Field::PhysicalLocationId,
            "service_id" => Field::ServiceId,
            "service_type" => Field::ServiceType,
            "topology_node" => Field::TopologyNode,
            _ => return None,
        })
    }

    /// The field's value on `c`, if set.
    pub(crate) fn get(self, c: &Candidate) -> Option<AttrRef<'_>> {
        let s = match self {
            Field::Cost => return c.cost.map(AttrRef::Float),
            Field::CandidateType => Some(c.candidate_type.as_str()),
            Field::InventoryType => Some(c.inventory_type.as_str()),
            Field::InventoryProvider => c.inventory_provider.as_deref(),
            Field::HostId => c.host_id.as_deref(),
            Field::LocationId => c.location_id.as_deref(),
            Field::LocationType => c.location_type.as_deref(),
            Field::City => c.city.as_deref(),
            Field::State => c.state.as_deref(),
            Field::Country => c.country.as_deref(),
            Field::Region => c.region.as_deref(),
            Field::ComplexName => c.complex_name.as_deref(),
            Field::CloudOwner => c.cloud_owner.as_deref(),
            Field::CloudRegionVersion => c.cloud_region_version.as_deref(),
            Field::PhysicalLocationId => c.physical_location_id.as_deref(),
            Field::ServiceId => c.service_id.as_deref(),
            Field::ServiceType => c.service_type.as_deref(),
            Field::TopologyNode => c.topology_node.as_deref(),
        };
        s.map(AttrRef::Str)
    }
}

/// [`Candidate::attribute`] with the key resolved once: the `attributes` map key and the
/// typed field it falls back to (A&AI's hyphens already mapped to underscores).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttrLookup<'a> {
    key: &'a str,
    field: Option<Field>,
}

/// An attribute value borrowed from a candidate.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AttrRef<'c> {
    /// From the `attributes` map.
    Value(&'c AttrValue),
    /// A typed string field.
    Str(&'c str),
    /// `cost`.
    Float(f64),
}

impl<'c> AttrRef<'c> {
    /// The value as an owned [`AttrValue`] (what [`Candidate::attribute`] returns).
    pub(crate) fn into_cow(self) -> Cow<'c, AttrValue> {
        match self {
            AttrRef::Value(v) => Cow::Borrowed(v),
            AttrRef::Str(s) => Cow::Owned(AttrValue::Str(s.to_owned())),
            AttrRef::Float(f) => Cow::Owned(AttrValue::Float(f)),
        }
    }
}

impl<'a> AttrLookup<'a> {
    /// Resolves `key` to the map key and its fallback field.
    pub(crate) fn new(key: &'a str) -> Self {
        Self {
            key,
            field: Field::named(key),
        }
    }

    /// The `attributes` map key.
    pub(crate) fn key(&self) -> &'a str {
        self.key
    }

    /// The typed field read when the map lacks the key.
    pub(crate) fn field(&self) -> Option<Field> {
        self.field
    }

    /// The attribute of `c`: the `attributes` map first, then the typed field.
    pub(crate) fn get<'c>(&self, c: &'c Candidate) -> Option<AttrRef<'c>> {
        match c.attributes.get(self.key) {
            Some(v) => Some(AttrRef::Value(v)),
            None => self.field.and_then(|f| f.get(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_listed_in_declaration_order() {
        for (i, f) in Field::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
    }

    #[test]
    fn every_typed_field_is_an_attribute_under_both_spellings() {
        let mut c = Candidate::new("x", InventoryType::Service);
        c.cost = Some(2.0);
        c.cloud_owner = Some("aws".into());
        c.physical_location_id = Some("DLLSTX55".into());
        c.attributes.insert("city".into(), AttrValue::Int(7));
        let get = |k: &str| c.attribute(k).map(Cow::into_owned);
        assert_eq!(get("cost"), Some(AttrValue::Float(2.0)));
        assert_eq!(get("cloud-owner"), Some("aws".into()));
        assert_eq!(get("physical_location_id"), Some("DLLSTX55".into()));
        assert_eq!(get("candidate-type"), Some("service".into()));
        // The attributes map wins over the typed field of the same name.
        assert_eq!(get("city"), Some(AttrValue::Int(7)));
        assert_eq!(get("state"), None);
        assert_eq!(get("nonsense"), None);
    }

    #[test]
    fn every_inventory_type_round_trips_and_unknown_names_list_them_all() {
        for t in InventoryType::ALL {
            assert_eq!(t.as_str().parse::<InventoryType>().ok(), Some(t));
            assert_eq!(
                serde_json::to_value(t).ok(),
                Some(serde_json::Value::String(t.as_str().to_owned()))
            );
        }
        let err = "slices".parse::<InventoryType>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown inventory type `slices`; expected one of cloud, service, transport, vfmodule, nssi, nsi, slice_profiles, nst"
        );
    }
}
