//! The typed, resolved homing template: what the solver glue consumes.
//!
//! Every value here has passed validation: references name declared demands and locations,
//! thresholds are parsed into `berth_units::Threshold` with the property's unit family, and
//! intrinsic functions (`get_param`, `get_file`) are gone.

use std::fmt;
use std::str::FromStr;

use berth_units::Threshold;
use indexmap::IndexMap;

/// An opaque value passed through to inventory providers or controllers.
pub type Opaque = serde_json::Value;

/// A `homing_template_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// `2016-11-01`.
    V2016_11_01,
    /// `2017-10-10`, the seed specification.
    V2017_10_10,
    /// `2018-02-01`.
    V2018_02_01,
    /// `2020-08-13`: optimization uses the generic `goal`/`operation_function` form.
    V2020_08_13,
}

impl Version {
    /// Every supported version, oldest first.
    pub const ALL: [Version; 4] = [
        Version::V2016_11_01,
        Version::V2017_10_10,
        Version::V2018_02_01,
        Version::V2020_08_13,
    ];

    /// The version as written in templates.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V2016_11_01 => "2016-11-01",
            Version::V2017_10_10 => "2017-10-10",
            Version::V2018_02_01 => "2018-02-01",
            Version::V2020_08_13 => "2020-08-13",
        }
    }

    /// Whether `optimization` takes the generic (2020-08-13) form rather than the seed form.
    pub const fn generic_objective(self) -> bool {
        matches!(self, Version::V2020_08_13)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Version {
    type Err = String;

    /// Parses a version string; the error lists the supported versions.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
                format!(
                    "unsupported homing_template_version `{s}`; expected one of {}",
                    all.join(", ")
                )
            })
    }
}

/// A validated homing template with every intrinsic function resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// The template format version.
    pub version: Version,
    /// Parameter values after instantiation overrides (intrinsics inside them resolved).
    pub parameters: IndexMap<String, Opaque>,
    /// Declared locations by name.
    pub locations: IndexMap<String, Location>,
    /// Declared demands by name.
    pub demands: IndexMap<String, Demand>,
    /// Declared constraints by name.
    pub constraints: IndexMap<String, Constraint>,
    /// Reservations (`reservations`, or HAS's singular `reservation`).
    pub reservations: Reservations,
    /// The objective, if the template has an `optimization` section.
    pub optimization: Option<Objective>,
}

/// A geographic location, given by any combination of its ways of naming one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Location {
    /// The location's name (its key).
    pub name: String,
    /// Latitude/longitude, range-checked.
    pub coordinate: Option<Coordinate>,
    /// An opaque host name an inventory provider can resolve.
    pub host_name: Option<String>,
    /// An 8-character CLLI code.
    pub clli_code: Option<String>,
    /// A placemark address (resolving it is an inventory concern).
    pub placemark: Option<Placemark>,
}

/// A latitude/longitude pair in degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coordinate {
    /// -90 ..= 90.
    pub latitude: f64,
    /// -180 ..= 180.
    pub longitude: f64,
}

/// A region-agnostic address.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Placemark {
    /// Abbreviated country name.
    pub iso_country_code: Option<String>,
    /// Postal code.
    pub postal_code: Option<String>,
    /// State or province.
    pub administrative_area: Option<String>,
    /// More administrative area information.
    pub sub_administrative_area: Option<String>,
    /// City.
    pub locality: Option<String>,
    /// More city-level information.
    pub sub_locality: Option<String>,
    /// Street.
    pub thoroughfare: Option<String>,
    /// Street number and more street-level information.
    pub sub_thoroughfare: Option<String>,
}

/// A demand: one or more requirements, each a way of drawing candidates from an inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct Demand {
    /// The demand's name (its key).
    pub name: String,
    /// The requirements, in order; never empty.
    pub requirements: Vec<Requirement>,
}

/// The kind of inventory a requirement draws candidates from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InventoryType {
    /// Cloud regions (new inventory).
    Cloud,
    /// Existing service instances.
    Service,
    /// Transport (HAS).
    Transport,
    /// VF modules (HAS).
    Vfmodule,
    /// Network slice subnet instances (HAS).
    Nssi,
    /// Network slice instances (HAS).
    Nsi,
    /// Slice profiles (HAS).
    SliceProfiles,
    /// Network slice templates (HAS).
    Nst,
}

impl InventoryType {
    /// Every inventory type.
    pub const ALL: [InventoryType; 8] = [
        InventoryType::Cloud,
        InventoryType::Service,
        InventoryType::Transport,
        InventoryType::Vfmodule,
        InventoryType::Nssi,
        InventoryType::Nsi,
        InventoryType::SliceProfiles,
        InventoryType::Nst,
    ];

    /// The reserved word as written.
    pub const fn as_str(self) -> &'static str {
        match self {
            InventoryType::Cloud => "cloud",
            InventoryType::Service => "service",
            InventoryType::Transport => "transport",
            InventoryType::Vfmodule => "vfmodule",
            InventoryType::Nssi => "nssi",
            InventoryType::Nsi => "nsi",
            InventoryType::SliceProfiles => "slice_profiles",
            InventoryType::Nst => "nst",
        }
    }

    /// Looks a reserved word up.
    pub fn parse(s: &str) -> Option<InventoryType> {
        InventoryType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl fmt::Display for InventoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One requirement of a demand: the seed's provider-agnostic keys plus those HAS reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Requirement {
    /// Inventory provider, e.g. `aai` (absent only when `candidates` lists them explicitly).
    pub inventory_provider: Option<String>,
    /// Inventory type (absent only when `candidates` lists them explicitly).
    pub inventory_type: Option<InventoryType>,
    /// Attributes candidates must all match.
    pub attributes: IndexMap<String, Opaque>,
    /// HAS: attributes used to filter inventory.
    pub filtering_attributes: IndexMap<String, Opaque>,
    /// HAS: attributes passed through to the solution.
    pub passthrough_attributes: IndexMap<String, Opaque>,
    /// HAS: attribute defaults.
    pub default_attributes: IndexMap<String, Opaque>,
    /// Provider-defined service types (one may be written without a list).
    pub service_type: Vec<String>,
    /// Provider-defined service ids (one may be written without a list).
    pub service_id: Vec<String>,
    /// Cost of a candidate when the provider returns none, unitless.
    pub default_cost: Option<f64>,
    /// The search space is restricted to these candidates.
    pub required_candidates: Vec<Candidate>,
    /// These candidates are removed from the search space.
    pub excluded_candidates: Vec<Candidate>,
    /// The current placement of the demand.
    pub existing_placement: Option<Candidate>,
    /// Explicit candidates (no inventory query).
    pub candidates: Vec<Candidate>,
    /// HAS: the cloud region id (candidate `location_id`) candidates must have.
    pub region: Option<String>,
    /// HAS: the complex (CLLI) id (candidate `physical_location_id`) candidates must have.
    pub complex: Option<String>,
    /// HAS: whether the candidate must be unique to this demand.
    pub unique: Option<bool>,
    /// HAS: conflict identifier.
    pub conflict_identifier: Option<String>,
    /// HAS: customer id.
    pub customer_id: Option<String>,
    /// HAS: service resource id.
    pub service_resource_id: Option<String>,
    /// HAS: flavor.
    pub flavor: Option<String>,
    /// HAS: VLAN key.
    pub vlan_key: Option<String>,
    /// HAS: port key.
    pub port_key: Option<String>,
    /// HAS: service subscription.
    pub service_subscription: Option<String>,
    /// HAS: subdivision.
    pub subdivision: Option<String>,
}

/// A candidate, following the seed's candidate schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Candidate {
    /// Candidate ids: one for the seed form, several for HAS's list form; never empty.
    pub candidate_id: Vec<String>,
    /// `cloud` or `service`.
    pub candidate_type: Option<String>,
    /// Inventory type.
    pub inventory_type: Option<InventoryType>,
    /// Inventory the candidate was drawn from.
    pub inventory_provider: Option<String>,
    /// A specific host (existing inventory only).
    pub host_id: Option<String>,
    /// Unitless cost.
    pub cost: Option<f64>,
    /// Location id of `location_type` (a cloud region id for clouds).
    pub location_id: Option<String>,
    /// Provider-supported location type.
    pub location_type: Option<String>,
    /// Coordinate of `location_id`, range-checked.
    pub coordinate: Option<Coordinate>,
    /// City.
    pub city: Option<String>,
    /// State.
    pub state: Option<String>,
    /// Country.
    pub country: Option<String>,
    /// Geographic region.
    pub region: Option<String>,
    /// Complex name.
    pub complex_name: Option<String>,
    /// Cloud owner, e.g. `att-aic`.
    pub cloud_owner: Option<String>,
    /// Cloud region version.
    pub cloud_region_version: Option<String>,
    /// CLLI code of the cloud region.
    pub physical_location_id: Option<String>,
}

/// A constraint: a named, typed filter over one or more demands.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// The constraint's name (its key).
    pub name: String,
    /// Its type with typed properties.
    pub kind: ConstraintKind,
    /// The demands it applies to (declared, in order, at least one; two for pairwise types).
    pub demands: Vec<String>,
}

/// A constraint type with its properties.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintKind {
    /// `attribute`: candidates must satisfy every attribute condition.
    Attribute(AttributeProps),
    /// `threshold` (HAS): numeric attribute checks with units.
    Threshold(ThresholdProps),
    /// `distance_between_demands`: pairwise geographic distance.
    DistanceBetweenDemands(DistanceBetweenProps),
    /// `distance_to_location`: each demand's distance to a location.
    DistanceToLocation(DistanceToLocationProps),
    /// `instance_fit`: capacity in an existing service instance, asked of a controller.
    InstanceFit(ControllerProps),
    /// `region_fit`: capacity in a cloud region, asked of a controller.
    RegionFit(ControllerProps),
    /// `vim_fit` (HAS): capacity in a VIM, asked of a controller.
    VimFit(ControllerProps),
    /// `service` (seed `get_param` example): a service-controller check.
    Service(ServiceProps),
    /// `zone`: same or different zones.
    Zone(ZoneProps),
    /// `inventory_group`: candidates from one pre-established inventory group (no properties).
    InventoryGroup,
    /// `license`: license availability.
    License(LicenseProps),
    /// `network_between_demands`: pairwise network requirements.
    NetworkBetweenDemands(NetworkProps),
    /// `network_to_location`: network requirements to a location.
    NetworkToLocation(NetworkToLocationProps),
    /// `capability`: cluster capability given as a Heat template.
    Capability(HeatProps),
    /// `capacity`: capacity given as a Heat template.
    Capacity(HeatProps),
    /// `hpa` (HAS): hardware platform awareness flavor features.
    Hpa(HpaProps),
}

impl ConstraintKind {
    /// Every constraint type name, as written in templates.
    pub const TYPES: [&'static str; 16] = [
        "attribute",
        "threshold",
        "distance_between_demands",
        "distance_to_location",
        "instance_fit",
        "region_fit",
        "vim_fit",
        "service",
        "zone",
        "inventory_group",
        "license",
        "network_between_demands",
        "network_to_location",
        "capability",
        "capacity",
        "hpa",
    ];

    /// The type name as written in templates.
    pub const fn type_name(&self) -> &'static str {
        match self {
            ConstraintKind::Attribute(_) => "attribute",
            ConstraintKind::Threshold(_) => "threshold",
            ConstraintKind::DistanceBetweenDemands(_) => "distance_between_demands",
            ConstraintKind::DistanceToLocation(_) => "distance_to_location",
            ConstraintKind::InstanceFit(_) => "instance_fit",
            ConstraintKind::RegionFit(_) => "region_fit",
            ConstraintKind::VimFit(_) => "vim_fit",
            ConstraintKind::Service(_) => "service",
            ConstraintKind::Zone(_) => "zone",
            ConstraintKind::InventoryGroup => "inventory_group",
            ConstraintKind::License(_) => "license",
            ConstraintKind::NetworkBetweenDemands(_) => "network_between_demands",
            ConstraintKind::NetworkToLocation(_) => "network_to_location",
            ConstraintKind::Capability(_) => "capability",
            ConstraintKind::Capacity(_) => "capacity",
            ConstraintKind::Hpa(_) => "hpa",
        }
    }

    /// Whether the type relates demands pairwise and so needs at least two.
    pub fn is_pairwise(type_name: &str) -> bool {
        matches!(
            type_name,
            "distance_between_demands" | "network_between_demands" | "zone" | "inventory_group"
        )
    }
}

/// Properties of an `attribute` constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeProps {
    /// Attribute name -> conditions that must all hold (a plain value is one `Eq`).
    pub evaluate: IndexMap<String, Vec<AttributeOp>>,
}

/// One evaluation operator of an `attribute` constraint.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeOp {
    /// `eq` (or a plain value): equal to any object.
    Eq(Opaque),
    /// `ne`: not equal.
    Ne(Opaque),
    /// `lt`: less than a number.
    Lt(f64),
    /// `gt`: greater than a number.
    Gt(f64),
    /// `lte`: at most a number.
    Lte(f64),
    /// `gte`: at least a number.
    Gte(f64),
    /// `any`: equal to one of the objects.
    Any(Vec<Opaque>),
    /// `all`: contains all of the objects.
    All(Vec<Opaque>),
    /// `regex`: matches a pattern (checked to compile).
    Regex(Pattern),
}

impl AttributeOp {
    /// Operator names as written.
    pub const NAMES: [&'static str; 9] =
        ["eq", "ne", "lt", "gt", "lte", "gte", "any", "all", "regex"];
}

/// A regular expression, `/pattern/flags` or bare, known to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The pattern without delimiters.
    pub pattern: String,
    /// `i` flag: match case-insensitively.
    pub case_insensitive: bool,
}

impl Pattern {
    /// Compiles the pattern with the same size limit validation used.
    pub fn compile(&self) -> Result<regex::Regex, regex::Error> {
        regex::RegexBuilder::new(&self.pattern)
            .case_insensitive(self.case_insensitive)
            .size_limit(PATTERN_SIZE_LIMIT)
            .build()
    }
}

/// Compiled-size limit for user patterns (1 MiB) so a template cannot exhaust memory.
pub const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// A comparison operator of HAS `threshold` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `lt`.
    Lt,
    /// `gt`.
    Gt,
    /// `lte`.
    Lte,
    /// `gte`.
    Gte,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [CompareOp; 6] = [
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Gt,
        CompareOp::Lte,
        CompareOp::Gte,
    ];

    /// The name as written.
    pub const fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Lt => "lt",
            CompareOp::Gt => "gt",
            CompareOp::Lte => "lte",
            CompareOp::Gte => "gte",
        }
    }
}

/// Properties of a HAS `threshold` constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdProps {
    /// Checks that must all hold.
    pub evaluate: Vec<ThresholdCheck>,
}

/// One `{attribute, operator, threshold, unit}` check.
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdCheck {
    /// Candidate attribute compared.
    pub attribute: String,
    /// Comparison.
    pub operator: CompareOp,
    /// The number compared against, in `unit`.
    pub value: f64,
    /// The unit as written, if any.
    pub unit: Option<String>,
    /// The check as a typed threshold when the unit is a known one (and the operator is not `ne`).
    pub bound: Option<Threshold>,
}

/// Properties of `distance_between_demands`.
#[derive(Debug, Clone, PartialEq)]
pub struct DistanceBetweenProps {
    /// Distance threshold (distance family, default km).
    pub distance: Threshold,
}

/// Properties of `distance_to_location`.
#[derive(Debug, Clone, PartialEq)]
pub struct DistanceToLocationProps {
    /// Distance threshold (distance family, default km).
    pub distance: Threshold,
    /// A declared location.
    pub location: String,
}

/// Properties of controller-backed constraints (`instance_fit`, `region_fit`, `vim_fit`).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerProps {
    /// Service controller name, e.g. `sdn-c`.
    pub controller: String,
    /// Opaque request sent to the controller.
    pub request: Option<Opaque>,
}

/// Properties of the seed's `service` constraint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServiceProps {
    /// Service controller name.
    pub controller: Option<String>,
    /// Where the service provider is reached.
    pub provider_url: Option<String>,
    /// Opaque request.
    pub request: Option<Opaque>,
    /// Unitless cost.
    pub cost: Option<f64>,
}

/// `same` or `different`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZoneQualifier {
    /// All demands in one zone (affinity).
    Same,
    /// Each demand in a different zone (diversity).
    Different,
}

/// Zone granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZoneCategory {
    /// `disaster` / `disaster_zone`.
    Disaster,
    /// `region` / `region_zone`.
    Region,
    /// `complex` / `complex_zone`.
    Complex,
    /// `country` / `country_zone`.
    Country,
    /// `time` / `time_zone`.
    Time,
    /// `maintenance` / `maintenance_zone`.
    Maintenance,
}

impl ZoneCategory {
    /// Every category.
    pub const ALL: [ZoneCategory; 6] = [
        ZoneCategory::Disaster,
        ZoneCategory::Region,
        ZoneCategory::Complex,
        ZoneCategory::Country,
        ZoneCategory::Time,
        ZoneCategory::Maintenance,
    ];

    /// The short name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ZoneCategory::Disaster => "disaster",
            ZoneCategory::Region => "region",
            ZoneCategory::Complex => "complex",
            ZoneCategory::Country => "country",
            ZoneCategory::Time => "time",
            ZoneCategory::Maintenance => "maintenance",
        }
    }

    /// Parses the short name or its `_zone` spelling.
    pub fn parse(s: &str) -> Option<ZoneCategory> {
        let short = s.strip_suffix("_zone").unwrap_or(s);
        ZoneCategory::ALL.into_iter().find(|c| c.as_str() == short)
    }
}

/// Properties of `zone`.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneProps {
    /// Same or different.
    pub qualifier: ZoneQualifier,
    /// Granularity.
    pub category: ZoneCategory,
    /// HAS: an optional declared location.
    pub location: Option<String>,
}

/// Properties of `license`.
#[derive(Debug, Clone, PartialEq)]
pub struct LicenseProps {
    /// License identifier.
    pub id: String,
    /// Opaque license key.
    pub key: String,
}

/// Network requirements; at least one is present.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NetworkProps {
    /// Bandwidth (throughput family, default Mbps).
    pub bandwidth: Option<Threshold>,
    /// Network-path distance (distance family, default km).
    pub distance: Option<Threshold>,
    /// Latency (time family, default ms).
    pub latency: Option<Threshold>,
}

/// Properties of `network_to_location`.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkToLocationProps {
    /// The requirements.
    pub network: NetworkProps,
    /// A declared location.
    pub location: String,
}

/// Properties of `capability`/`capacity`: a Heat template and optional environment.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatProps {
    /// Always `heat` today (the only specification kind).
    pub specification: String,
    /// A URI or the template text (a mapping is kept as JSON text).
    pub template: String,
    /// A URI or the environment text.
    pub environment: Option<String>,
}

/// Properties of a HAS `hpa` constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct HpaProps {
    /// Flavor requirement sets; at least one.
    pub evaluate: Vec<HpaFlavor>,
}

/// One HPA flavor requirement set (`id`, `type`, `directives`, `flavorProperties`).
#[derive(Debug, Clone, PartialEq)]
pub struct HpaFlavor {
    /// Identifier (e.g. the VDU name).
    pub id: String,
    /// Node type, e.g. `tosca.nodes.nfv.Vdu.Compute`.
    pub type_name: String,
    /// Opaque directives returned with the solution.
    pub directives: Vec<Opaque>,
    /// Required or scored flavor features; at least one.
    pub flavor_properties: Vec<HpaFeature>,
}

/// One HPA flavor feature.
#[derive(Debug, Clone, PartialEq)]
pub struct HpaFeature {
    /// `hpa-feature`, e.g. `basicCapabilities`.
    pub feature: String,
    /// `hpa-version`.
    pub version: String,
    /// `architecture`, e.g. `generic`.
    pub architecture: String,
    /// `mandatory`; when false a `score` is required.
    pub mandatory: bool,
    /// `score` of an optional feature.
    pub score: Option<f64>,
    /// `directives`.
    pub directives: Vec<Opaque>,
    /// `hpa-feature-attributes`.
    pub attributes: Vec<HpaAttribute>,
}

/// One `hpa-feature-attributes` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HpaAttribute {
    /// `hpa-attribute-key`.
    pub key: String,
    /// `hpa-attribute-value` as text.
    pub value: String,
    /// `operator`.
    pub operator: HpaOperator,
    /// `unit`, e.g. `GB` (empty string means none).
    pub unit: Option<String>,
}

/// Operators of HPA attribute matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HpaOperator {
    /// `=`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Lte,
    /// `>`.
    Gt,
    /// `>=`.
    Gte,
    /// `ALL`: the flavor has all listed values.
    All,
    /// `ANY`: the flavor has one of the listed values.
    Any,
}

impl HpaOperator {
    /// Parses `=`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `ALL`, `ANY` (words in any case).
    pub fn parse(s: &str) -> Option<HpaOperator> {
        Some(match s {
            "=" | "==" => HpaOperator::Eq,
            "!=" => HpaOperator::Ne,
            "<" => HpaOperator::Lt,
            "<=" => HpaOperator::Lte,
            ">" => HpaOperator::Gt,
            ">=" => HpaOperator::Gte,
            _ if s.eq_ignore_ascii_case("all") => HpaOperator::All,
            _ if s.eq_ignore_ascii_case("any") => HpaOperator::Any,
            _ => return None,
        })
    }
}

/// The reservations of a template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reservations {
    /// HAS: the service model the reservations belong to.
    pub service_model: Option<Opaque>,
    /// Reservations by name (seed form, or HAS's `service_candidates`).
    pub items: IndexMap<String, Reservation>,
}

/// One reservation, made through a service controller.
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    /// The reservation's name (its key).
    pub name: String,
    /// Its type, e.g. `instance_reservation`.
    pub kind: Option<String>,
    /// Declared demands whose chosen candidates are reserved.
    pub demands: Vec<String>,
    /// Service controller, e.g. `sdn-c`.
    pub controller: Option<String>,
    /// Opaque request.
    pub request: Option<Opaque>,
    /// Other properties, passed through.
    pub properties: IndexMap<String, Opaque>,
}

/// Whether the objective is minimized or maximized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Goal {
    /// Smaller is better.
    Minimize,
    /// Larger is better.
    Maximize,
}

/// The objective: a goal and one expression, whichever template form it was written in.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    /// Minimize or maximize.
    pub goal: Goal,
    /// The expression.
    pub expr: Expr,
}

/// An objective expression. Invariant: a `Sum` never directly contains a `Sum`, a `Product`
/// never directly contains a `Product` (nesting is flattened when lowering).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number (weights).
    Const(f64),
    /// Sum of the terms.
    Sum(Vec<Expr>),
    /// Product of the factors (a weight times a function, typically).
    Product(Vec<Expr>),
    /// Smallest of the terms (2020-08-13 `min`).
    Min(Vec<Expr>),
    /// Largest of the terms (2020-08-13 `max`).
    Max(Vec<Expr>),
    /// `(expr - start) / (end - start)`.
    Normalize {
        /// The normalized expression.
        expr: Box<Expr>,
        /// Value mapped to 0.
        start: f64,
        /// Value mapped to 1 (differs from `start`).
        end: f64,
    },
    /// A function of the candidates chosen.
    Function(ObjFunction),
}

/// Functions an objective can use.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjFunction {
    /// Geographic distance between two endpoints (at least one a demand).
    DistanceBetween {
        /// First endpoint.
        a: Endpoint,
        /// Second endpoint.
        b: Endpoint,
    },
    /// Network latency between two endpoints (at least one a demand).
    LatencyBetween {
        /// First endpoint.
        a: Endpoint,
        /// Second endpoint.
        b: Endpoint,
    },
    /// Cost of the candidate chosen for a demand.
    Cost(String),
    /// HPA score of the candidate chosen for a demand.
    HpaScore(String),
    /// Cloud (AIC) version of the candidate chosen for a demand.
    AicVersion(String),
    /// A numeric attribute of the candidate chosen for a demand.
    Attribute {
        /// The demand.
        demand: String,
        /// The attribute name.
        name: String,
    },
}

/// One end of a distance or latency function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A declared location.
    Location(String),
    /// The candidate chosen for a declared demand.
    Demand(String),
}
