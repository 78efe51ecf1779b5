//! The operator's workload deployment cost file (seed step 5b) and the cost of one workload.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use berth_doc::{Diagnostic, Diagnostics, Map, Path, Value};
use serde::Serialize;

use crate::error::{CloudPolicyError, DocumentKind};
use crate::load::{check_keys, expect_map, expect_price, expect_text};
use crate::region::CloudRegion;

/// The period a price is for; the operator picks one and uses it for every owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostPeriod {
    /// Per hour (`hour`, `hr`, `h`).
    Hour,
    /// Per day (`day`, `d`).
    Day,
    /// Per week (`week`, `wk`).
    Week,
    /// Per month (`month`, `mo`).
    Month,
    /// Per year (`year`, `yr`).
    Year,
}

impl CostPeriod {
    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Year => "year",
        }
    }
}

/// The unit of every price in a cost file: a currency per period, written `USD/hour` or
/// `USD per hour`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CostUnit {
    /// ISO 4217 style code: three upper-case letters (`USD`, `EUR`).
    pub currency: String,
    /// The period.
    pub period: CostPeriod,
}

impl fmt::Display for CostUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.currency, self.period.as_str())
    }
}

impl FromStr for CostUnit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let expected =
            "expected `CURRENCY/PERIOD` such as `USD/hour` (period: hour, day, week, month, year)";
        let (currency, period) = s
            .split_once('/')
            .or_else(|| s.split_once(" per "))
            .ok_or_else(|| format!("invalid cost unit `{s}`; {expected}"))?;
        let (currency, period) = (currency.trim(), period.trim());
        if currency.len() != 3 || !currency.chars().all(|c| c.is_ascii_uppercase()) {
            return Err(format!(
                "invalid currency `{currency}` in cost unit `{s}`; expected three upper-case letters such as `USD`"
            ));
        }
        let period = match period.to_ascii_lowercase().as_str() {
            "hour" | "hr" | "h" => CostPeriod::Hour,
            "day" | "d" => CostPeriod::Day,
            "week" | "wk" => CostPeriod::Week,
            "month" | "mo" => CostPeriod::Month,
            "year" | "yr" => CostPeriod::Year,
            _ => {
                return Err(format!(
                    "invalid period `{period}` in cost unit `{s}`; {expected}"
                ));
            }
        };
        Ok(Self {
            currency: currency.to_owned(),
            period,
        })
    }
}

/// Prices per instance type (`dollarCostEvaluationVM-Type`) and per feature group
/// (`dollarCostEvaluationVM-FeatureGroup`; negative = discount).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriceTable {
    /// Price per instance type; at least 0.
    pub instance_types: BTreeMap<String, f64>,
    /// Surcharge (or discount, when negative) per feature group.
    pub feature_groups: BTreeMap<String, f64>,
}

/// The prices of one cloud owner.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OwnerCosts {
    /// Fixed cost of any workload whose instance type has no price; the file's
    /// `default_fixed_cost` when absent.
    pub fixed_cost: Option<f64>,
    /// Owner-wide prices.
    pub prices: PriceTable,
    /// Prices per region, which win over the owner-wide ones.
    pub regions: BTreeMap<String, PriceTable>,
}

/// The operator's workload deployment cost file.
///
/// Invariants: every price is finite; fixed costs and instance type prices are at least 0.
#[derive(Debug, Clone, PartialEq)]
pub struct CostFile {
    /// Unit of every price in the file.
    pub unit: CostUnit,
    /// Fixed cost of workloads on owners not listed.
    pub default_fixed_cost: f64,
    /// Prices per cloud owner.
    pub owners: BTreeMap<String, OwnerCosts>,
    /// Warnings found while loading.
    pub warnings: Vec<Diagnostic>,
}

/// Where the base of a workload's cost came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum CostSource {
    /// The region's price of the instance type.
    RegionInstanceType,
    /// The owner-wide price of the instance type.
    OwnerInstanceType,
    /// The owner's fixed cost.
    OwnerFixed,
    /// The file's `default_fixed_cost` (owner not listed, or listed without a fixed cost).
    DefaultFixed,
}

/// A workload's deployment cost, itemized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostBreakdown {
    /// Instance type price or fixed cost.
    pub base: f64,
    /// Where `base` came from.
    pub source: CostSource,
    /// Priced feature groups and their surcharge (negative = discount); unpriced ones are
    /// left out.
    pub feature_groups: BTreeMap<String, f64>,
    /// `base` plus the feature groups, floored at 0.
    pub total: f64,
}

impl CostFile {
    /// Parses YAML or JSON text, reporting every problem at once.
    pub fn parse(text: &str) -> Result<Self, CloudPolicyError> {
        let doc = berth_doc::parse(text).map_err(|d| invalid(vec![d]))?;
        Self::from_value(&doc)
    }

    /// Builds the cost file from a parsed document.
    pub fn from_value(doc: &Value) -> Result<Self, CloudPolicyError> {
        let mut diags = Diagnostics::new();
        let root = Path::root();
        let mut unit = None;
        let mut default_fixed_cost = None;
        let mut owners = BTreeMap::new();
        if let Some(map) = expect_map(doc, &root, &mut diags) {
            check_keys(
                map,
                &["unit", "default_fixed_cost", "owners"],
                &root,
                &mut diags,
            );
            match map.get("unit") {
                None => diags.error(&root, doc.pos, "missing required field `unit`"),
                Some(v) => {
                    let p = root.key("unit");
                    if let Some(text) = expect_text(v, &p, &mut diags) {
                        match text.parse::<CostUnit>() {
                            Ok(u) => unit = Some(u),
                            Err(msg) => diags.error(&p, v.pos, msg),
                        }
                    }
                }
            }
            match map.get("default_fixed_cost") {
                None => diags.error(
                    &root,
                    doc.pos,
                    "missing required field `default_fixed_cost`",
                ),
                Some(v) => {
                    default_fixed_cost =
                        expect_price(v, false, &root.key("default_fixed_cost"), &mut diags);
                }
            }
            if let Some(v) = map.get("owners") {
                let path = root.key("owners");
                if let Some(list) = expect_map(v, &path, &mut diags) {
                    for (key, value) in list.iter() {
                        let p = path.key(key.name.as_str());
                        if let Some(o) = read_owner(value, &p, &mut diags) {
                            owners.insert(key.name.clone(), o);
                        }
                    }
                }
            }
        }
        match (unit, default_fixed_cost) {
            (Some(unit), Some(default_fixed_cost)) if !diags.has_errors() => Ok(Self {
                unit,
                default_fixed_cost,
                owners,
                warnings: diags.into_vec(),
            }),
            _ => Err(invalid(diags.into_vec())),
        }
    }

    /// The cost of a workload of `instance_type` with `feature_groups` in `region`, itemized.
    ///
    /// Base: the region's price of the instance type, else the owner-wide price, else the
    /// owner's fixed cost, else `default_fixed_cost`. Each feature group adds the region's
    /// price, else the owner-wide price, else nothing. The total never goes below 0.
    pub fn breakdown(
        &self,
        region: &CloudRegion,
        instance_type: Option<&str>,
        feature_groups: &[impl AsRef<str>],
    ) -> CostBreakdown {
        let owner = self.owners.get(&region.cloud_owner);
        let regional = owner.and_then(|o| o.regions.get(&region.region_id));
        let wide = owner.map(|o| &o.prices);
        let typed = instance_type.and_then(|t| {
            regional
                .and_then(|r| r.instance_types.get(t))
                .map(|p| (*p, CostSource::RegionInstanceType))
                .or_else(|| {
                    wide.and_then(|w| w.instance_types.get(t))
                        .map(|p| (*p, CostSource::OwnerInstanceType))
                })
        });
        let (base, source) = typed
            .or_else(|| {
                owner
                    .and_then(|o| o.fixed_cost)
                    .map(|c| (c, CostSource::OwnerFixed))
            })
            .unwrap_or((self.default_fixed_cost, CostSource::DefaultFixed));
        let mut groups = BTreeMap::new();
        for g in feature_groups {
            let g = g.as_ref();
            let price = regional
                .and_then(|r| r.feature_groups.get(g))
                .or_else(|| wide.and_then(|w| w.feature_groups.get(g)));
            if let Some(p) = price {
                groups.insert(g.to_owned(), *p);
            }
        }
        let total = (base + groups.values().sum::<f64>()).max(0.0);
        CostBreakdown {
            base,
            source,
            feature_groups: groups,
            total,
        }
    }
}

/// The workload deployment cost of `instance_type` with `feature_groups` in `region`, in
/// the file's unit (see [`CostFile::breakdown`] for the rule).
pub fn deployment_cost(
    costs: &CostFile,
    region: &CloudRegion,
    instance_type: Option<&str>,
    feature_groups: &[impl AsRef<str>],
) -> f64 {
    costs.breakdown(region, instance_type, feature_groups).total
}

fn invalid(diagnostics: Vec<Diagnostic>) -> CloudPolicyError {
    CloudPolicyError::Invalid {
        document: DocumentKind::Costs,
        diagnostics,
    }
}

fn read_owner(value: &Value, path: &Path, diags: &mut Diagnostics) -> Option<OwnerCosts> {
    let map = expect_map(value, path, diags)?;
    check_keys(
        map,
        &["fixed_cost", "instance_types", "feature_groups", "regions"],
        path,
        diags,
    );
    let fixed_cost = map
        .get("fixed_cost")
        .and_then(|v| expect_price(v, false, &path.key("fixed_cost"), diags));
    let prices = read_prices(map, path, diags);
    let mut regions = BTreeMap::new();
    if let Some(v) = map.get("regions") {
        let rp = path.key("regions");
        if let Some(list) = expect_map(v, &rp, diags) {
            for (key, value) in list.iter() {
                let p = rp.key(key.name.as_str());
                if let Some(m) = expect_map(value, &p, diags) {
                    check_keys(m, &["instance_types", "feature_groups"], &p, diags);
                    regions.insert(key.name.clone(), read_prices(m, &p, diags));
                }
            }
        }
    }
    Some(OwnerCosts {
        fixed_cost,
        prices,
        regions,
    })
}

fn read_prices(map: &Map, path: &Path, diags: &mut Diagnostics) -> PriceTable {
    let table = |field: &str, signed: bool, diags: &mut Diagnostics| {
        let mut out = BTreeMap::new();
        if let Some(v) = map.get(field) {
            let p = path.key(field);
            if let Some(m) = expect_map(v, &p, diags) {
                for (key, value) in m.iter() {
                    if let Some(x) = expect_price(value, signed, &p.key(key.name.as_str()), diags) {
                        out.insert(key.name.clone(), x);
                    }
                }
            }
        }
        out
    };
    PriceTable {
        instance_types: table("instance_types", false, diags),
        feature_groups: table("feature_groups", true, diags),
    }
}
