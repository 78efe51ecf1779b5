//! The cloud selection policy document: typed model and loading.

use std::collections::BTreeSet;
use std::fmt;

use berth_doc::{Diagnostic, Diagnostics, Map, Path, Value};
use serde::Serialize;

use crate::error::{CloudPolicyError, DocumentKind};
use crate::schema;

/// Field names of `cloud-deployment-intent`, as the seed spells them.
pub mod field {
    /// Allowed cloud types (VIM types).
    pub const CLOUD_TYPE: &str = "Cloud Type (Cloud Provider)";
    /// Allowed `<cloud owner>_<cloud region>` VIM ids.
    pub const VIM_ID: &str = "Cloud Owner & Cloud Region (VIM id)";
    /// Infrastructure high availability intent.
    pub const HIGH_AVAILABILITY: &str = "Infrastructure High Availability for VNF";
    /// Resource isolation intent (`Burstable QoS` or `Guaranteed QoS`).
    pub const ISOLATION: &str = "Infrastructure Resource Isolation for VNF";
    /// Oversubscription percentage of Burstable QoS.
    pub const OVERSUBSCRIPTION: &str =
        "Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage";
    /// `Burstable QoS`.
    pub const BURSTABLE: &str = "Burstable QoS";
    /// `Guaranteed QoS`.
    pub const GUARANTEED: &str = "Guaranteed QoS";
}

const TOP_KEYS: &[&str] = &[
    "service",
    "policyName",
    "policyDescription",
    "templateVersion",
    "version",
    "priority",
    "riskType",
    "riskLevel",
    "guard",
    "content",
    "resources",
    "applicableResources",
    "identity",
    "policyScope",
    "policyType",
];

/// Resource isolation asked for by a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "qos")]
pub enum ResourceIsolation {
    /// Guaranteed QoS: no oversubscription (`flavor-xyz-no-oversubscription`).
    Guaranteed,
    /// Burstable QoS: the workload may burst this many percent above its reservation
    /// (`flavor-xyz-25-percent-oversubscription`).
    Burstable {
        /// Oversubscription percentage, 1..=1000.
        oversubscription_percent: u32,
    },
}

impl fmt::Display for ResourceIsolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Guaranteed => f.write_str(field::GUARANTEED),
            Self::Burstable {
                oversubscription_percent,
            } => write!(
                f,
                "{} with {oversubscription_percent}% oversubscription",
                field::BURSTABLE
            ),
        }
    }
}

/// `content.cloud-deployment-intent`: what the workload needs from the cloud.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeploymentIntent {
    /// Allowed cloud types (`VMware VIO`, `Azure`, ...); `None` allows any.
    pub cloud_types: Option<BTreeSet<String>>,
    /// Allowed VIM ids `<cloud owner>_<cloud region>`; `None` allows any.
    pub vim_ids: Option<BTreeSet<String>>,
    /// Infrastructure high availability for the VNF (host anti-affinity and the like).
    pub high_availability: bool,
    /// Resource isolation; `None` when the policy does not ask for any.
    pub isolation: Option<ResourceIsolation>,
}

/// `content`: the policy proper.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyContent {
    /// The VNFC the policy is for (`vgw`, `vdns`); informational in the OOF path.
    pub vnfc: Option<String>,
    /// Whether the workload deployment cost enters the net value.
    pub cloud_cost_evaluation: bool,
    /// The deployment intent.
    pub intent: DeploymentIntent,
}

/// A validated cloud selection policy (seed 002).
///
/// Invariants: the document satisfied [`crate::POLICY_SCHEMA`]; a Burstable isolation
/// always carries its oversubscription percentage and no other isolation carries one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CloudSelectionPolicy {
    /// `service`, e.g. `cloudSelectionPolicy`.
    pub service: String,
    /// `policyName`.
    pub policy_name: String,
    /// `policyDescription`.
    pub policy_description: Option<String>,
    /// `templateVersion`.
    pub template_version: Option<String>,
    /// `version`.
    pub version: Option<String>,
    /// `priority` (a string in the seed, e.g. `"3"`).
    pub priority: Option<String>,
    /// `riskType`.
    pub risk_type: Option<String>,
    /// `riskLevel`.
    pub risk_level: Option<String>,
    /// `guard` (a string in the seed, e.g. `"False"`).
    pub guard: Option<String>,
    /// `content`.
    pub content: PolicyContent,
    /// `resources`: the demands (VNFs) the policy applies to.
    pub resources: Vec<String>,
    /// `applicableResources`, e.g. `any`.
    pub applicable_resources: Option<String>,
    /// `identity`.
    pub identity: Option<String>,
    /// `policyScope`, in document order (duplicates are kept and warned about).
    pub policy_scope: Vec<String>,
    /// `policyType`.
    pub policy_type: Option<String>,
    /// Warnings found while loading (the document had no errors).
    pub warnings: Vec<Diagnostic>,
}

impl CloudSelectionPolicy {
    /// Parses and validates YAML or JSON text, reporting every problem at once.
    pub fn parse(text: &str) -> Result<Self, CloudPolicyError> {
        let doc = berth_doc::parse(text).map_err(|d| CloudPolicyError::Invalid {
            document: DocumentKind::Policy,
            diagnostics: vec![d],
        })?;
        Self::from_value(&doc)
    }

    /// Validates a parsed document against the fixed schema and builds the model.
    pub fn from_value(doc: &Value) -> Result<Self, CloudPolicyError> {
        let mut diags = Diagnostics::new();
        schema::check(doc, &mut diags)?;
        if diags.has_errors() {
            return Err(CloudPolicyError::Invalid {
                document: DocumentKind::Policy,
                diagnostics: diags.into_vec(),
            });
        }
        let root = doc.as_map();
        let text = |k: &str| {
            root.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let list = |k: &str| string_list(root.and_then(|m| m.get(k)));
        if let Some(map) = root {
            warn_unknown(map, &mut diags);
            warn_duplicate_scope(map, &mut diags);
        }
        let content = root.and_then(|m| m.get("content")).and_then(Value::as_map);
        let policy = CloudSelectionPolicy {
            service: text("service").unwrap_or_default(),
            policy_name: text("policyName").unwrap_or_default(),
            policy_description: text("policyDescription"),
            template_version: text("templateVersion"),
            version: text("version"),
            priority: text("priority"),
            risk_type: text("riskType"),
            risk_level: text("riskLevel"),
            guard: text("guard"),
            content: content.map(read_content).unwrap_or_default(),
            resources: list("resources"),
            applicable_resources: text("applicableResources"),
            identity: text("identity"),
            policy_scope: list("policyScope"),
            policy_type: text("policyType"),
            warnings: diags.into_vec(),
        };
        Ok(policy)
    }

    /// Whether the policy applies to a demand (VNF) or VNFC name: listed in `resources`, or
    /// equal to `content.vnfc` (ASCII case-insensitive; the seed writes both `vDNS` and `vdns`).
    pub fn applies_to(&self, name: &str) -> bool {
        self.resources.iter().any(|r| r.eq_ignore_ascii_case(name))
            || self
                .content
                .vnfc
                .as_deref()
                .is_some_and(|v| v.eq_ignore_ascii_case(name))
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn read_content(map: &Map) -> PolicyContent {
    let intent = map.get("cloud-deployment-intent").and_then(Value::as_map);
    PolicyContent {
        vnfc: map.get("vnfc").and_then(Value::as_str).map(str::to_owned),
        cloud_cost_evaluation: map
            .get("cloud-cost-evaluation")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        intent: intent.map(read_intent).unwrap_or_default(),
    }
}

fn read_intent(map: &Map) -> DeploymentIntent {
    let set = |k: &str| {
        map.get(k)
            .map(|v| string_list(Some(v)).into_iter().collect::<BTreeSet<_>>())
    };
    // The schema has checked the percentage: an integer in 1..=1000, present iff Burstable.
    let percent = map
        .get(field::OVERSUBSCRIPTION)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
        .and_then(|p| u32::try_from(p).ok());
    let isolation = match map.get(field::ISOLATION).and_then(Value::as_str) {
        Some(field::GUARANTEED) => Some(ResourceIsolation::Guaranteed),
        Some(field::BURSTABLE) => percent.map(|p| ResourceIsolation::Burstable {
            oversubscription_percent: p,
        }),
        _ => None,
    };
    DeploymentIntent {
        cloud_types: set(field::CLOUD_TYPE),
        vim_ids: set(field::VIM_ID),
        high_availability: map
            .get(field::HIGH_AVAILABILITY)
            .and_then(Value::as_bool)
            .unwrap_or(false),
        isolation,
    }
}

fn warn_unknown(map: &Map, diags: &mut Diagnostics) {
    for (key, _) in map.iter() {
        if !TOP_KEYS.contains(&key.name.as_str()) {
            diags.warning(
                &Path::root().key(key.name.as_str()),
                key.pos,
                format!("unknown field `{}` is ignored", key.name),
            );
        }
    }
}

fn warn_duplicate_scope(map: &Map, diags: &mut Diagnostics) {
    let items = map
        .get("policyScope")
        .and_then(Value::as_seq)
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(s) = item.as_str()
            && !seen.insert(s)
        {
            diags.warning(
                &Path::root().key("policyScope").index(i),
                item.pos,
                format!("scope `{s}` is listed twice"),
            );
        }
    }
}
