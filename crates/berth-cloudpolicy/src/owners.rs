//! The owner capability file: which intents each cloud owner's plugin realizes, and how.

use std::collections::{BTreeMap, BTreeSet};

use berth_doc::{Diagnostic, Diagnostics, Path, Value};

use crate::error::{CloudPolicyError, DocumentKind};
use crate::load::{check_keys, expect_map, expect_text};

/// Realization of high availability when the file just says `true` (seed: OpenStack
/// host-based anti-affinity using server groups).
pub const DEFAULT_HA_REALIZATION: &str = "host anti-affinity server group";
/// Flavor template of Guaranteed QoS when none is given (seed's `flavor-xyz-no-oversubscription`).
pub const DEFAULT_GUARANTEED_FLAVOR: &str = "{flavor}-no-oversubscription";
/// Flavor template of Burstable QoS when none is given (seed's
/// `flavor-xyz-25-percent-oversubscription`).
pub const DEFAULT_BURSTABLE_FLAVOR: &str = "{flavor}-{percent}-percent-oversubscription";

/// A flavor name template with `{flavor}` (the base instance type) and, for Burstable QoS,
/// `{percent}` placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlavorTemplate(String);

impl FlavorTemplate {
    /// Checks the placeholders: only `{flavor}`, plus `{percent}` when `allow_percent`.
    pub fn new(text: &str, allow_percent: bool) -> Result<Self, String> {
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                return Err(format!("unclosed `{{` in flavor template `{text}`"));
            };
            let name = &after[..close];
            let ok = name == "flavor" || (allow_percent && name == "percent");
            if !ok {
                let expected = if allow_percent {
                    "`{flavor}` or `{percent}`"
                } else {
                    "`{flavor}`"
                };
                return Err(format!(
                    "unknown placeholder `{{{name}}}` in flavor template `{text}`; expected {expected}"
                ));
            }
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("unmatched `}}` in flavor template `{text}`"));
        }
        Ok(Self(text.to_owned()))
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The realized flavor name; `None` when the template needs a base flavor and there is
    /// none.
    pub fn render(&self, flavor: Option<&str>, percent: Option<u32>) -> Option<String> {
        let mut out = self.0.clone();
        if out.contains("{flavor}") {
            out = out.replace("{flavor}", flavor?);
        }
        if let Some(p) = percent {
            out = out.replace("{percent}", &p.to_string());
        }
        Some(out)
    }
}

/// Burstable QoS support of an owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BurstableSupport {
    /// The pre-defined oversubscription percentages the owner offers (seed: "only certain
    /// pre-defined over-subscription values are allowed").
    pub percentages: BTreeSet<u32>,
    /// How the realized flavor is named.
    pub flavor: FlavorTemplate,
}

/// What one cloud owner's plugin can realize. `None` = the intent is not supported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnerSupport {
    /// High availability and how it is realized (`availability set`, ...).
    pub high_availability: Option<String>,
    /// Guaranteed QoS and its flavor template.
    pub guaranteed_qos: Option<FlavorTemplate>,
    /// Burstable QoS with its allowed percentages and flavor template.
    pub burstable_qos: Option<BurstableSupport>,
}

/// The owner capability file: support per cloud owner.
///
/// Invariants: percentages are unique and in 1..=1000; flavor templates use only known
/// placeholders. An owner not listed supports no intent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnerCatalog {
    /// Support per cloud owner.
    pub owners: BTreeMap<String, OwnerSupport>,
    /// Warnings found while loading.
    pub warnings: Vec<Diagnostic>,
}

const OWNER_KEYS: &[&str] = &["high_availability", "guaranteed_qos", "burstable_qos"];

impl OwnerCatalog {
    /// Parses YAML or JSON text, reporting every problem at once.
    ///
    /// ```yaml
    /// owners:
    ///   azure:
    ///     high_availability: availability set   # or true / false
    ///     guaranteed_qos: true                  # or {flavor: "{flavor}-no-oversubscription"}
    ///     burstable_qos: {percentages: [25], flavor: "{flavor}-{percent}-percent-oversubscription"}
    /// ```
    pub fn parse(text: &str) -> Result<Self, CloudPolicyError> {
        let doc = berth_doc::parse(text).map_err(|d| invalid(vec![d]))?;
        Self::from_value(&doc)
    }

    /// Builds the catalog from a parsed document.
    pub fn from_value(doc: &Value) -> Result<Self, CloudPolicyError> {
        let mut diags = Diagnostics::new();
        let mut owners = BTreeMap::new();
        let root = Path::root();
        if let Some(map) = expect_map(doc, &root, &mut diags) {
            check_keys(map, &["owners"], &root, &mut diags);
            match map.get("owners") {
                None => diags.error(&root, doc.pos, "missing required field `owners`"),
                Some(v) => {
                    let path = root.key("owners");
                    if let Some(list) = expect_map(v, &path, &mut diags) {
                        for (key, value) in list.iter() {
                            let p = path.key(key.name.as_str());
                            if let Some(support) = read_owner(value, &p, &mut diags) {
                                owners.insert(key.name.clone(), support);
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
            owners,
            warnings: diags.into_vec(),
        })
    }

    /// The support of an owner; `None` (an unknown owner) supports nothing.
    pub fn support(&self, cloud_owner: &str) -> Option<&OwnerSupport> {
        self.owners.get(cloud_owner)
    }
}

fn invalid(diagnostics: Vec<Diagnostic>) -> CloudPolicyError {
    CloudPolicyError::Invalid {
        document: DocumentKind::Owners,
        diagnostics,
    }
}

fn read_owner(value: &Value, path: &Path, diags: &mut Diagnostics) -> Option<OwnerSupport> {
    let map = expect_map(value, path, diags)?;
    check_keys(map, OWNER_KEYS, path, diags);
    let mut support = OwnerSupport::default();
    if let Some(v) = map.get("high_availability") {
        let p = path.key("high_availability");
        support.high_availability = match v.as_bool() {
            Some(true) => Some(DEFAULT_HA_REALIZATION.to_owned()),
            Some(false) => None,
            None => expect_text(v, &p, diags).map(str::to_owned),
        };
    }
    if let Some(v) = map.get("guaranteed_qos") {
        let p = path.key("guaranteed_qos");
        support.guaranteed_qos = match v.as_bool() {
            Some(true) => template(None, DEFAULT_GUARANTEED_FLAVOR, false, &p, diags),
            Some(false) => None,
            None => expect_map(v, &p, diags).and_then(|m| {
                check_keys(m, &["flavor"], &p, diags);
                template(m.get("flavor"), DEFAULT_GUARANTEED_FLAVOR, false, &p, diags)
            }),
        };
    }
    if let Some(v) = map.get("burstable_qos") {
        let p = path.key("burstable_qos");
        support.burstable_qos = match v.as_bool() {
            Some(false) => None,
            Some(true) => {
                diags.error(
                    &p,
                    v.pos,
                    "expected a mapping with `percentages`; Burstable QoS needs its pre-defined oversubscription percentages",
                );
                None
            }
            None => expect_map(v, &p, diags).and_then(|m| {
                check_keys(m, &["percentages", "flavor"], &p, diags);
                let flavor = template(m.get("flavor"), DEFAULT_BURSTABLE_FLAVOR, true, &p, diags);
                let percentages = percentages(m.get("percentages"), v, &p, diags);
                Some(BurstableSupport {
                    percentages: percentages?,
                    flavor: flavor?,
                })
            }),
        };
    }
    Some(support)
}

fn template(
    value: Option<&Value>,
    default: &str,
    allow_percent: bool,
    parent: &Path,
    diags: &mut Diagnostics,
) -> Option<FlavorTemplate> {
    let Some(v) = value else {
        return FlavorTemplate::new(default, allow_percent).ok();
    };
    let p = parent.key("flavor");
    let text = expect_text(v, &p, diags)?;
    match FlavorTemplate::new(text, allow_percent) {
        Ok(t) => Some(t),
        Err(msg) => {
            diags.error(&p, v.pos, msg);
            None
        }
    }
}

fn percentages(
    value: Option<&Value>,
    parent_value: &Value,
    parent: &Path,
    diags: &mut Diagnostics,
) -> Option<BTreeSet<u32>> {
    let Some(v) = value else {
        diags.error(
            parent,
            parent_value.pos,
            "missing required field `percentages`",
        );
        return None;
    };
    let p = parent.key("percentages");
    let Some(items) = v.as_seq() else {
        diags.error(
            &p,
            v.pos,
            format!("expected a list; found {}", crate::schema::a_type(v)),
        );
        return None;
    };
    if items.is_empty() {
        diags.error(
            &p,
            v.pos,
            "expected at least 1 item(s); found an empty list",
        );
        return None;
    }
    let mut out = BTreeSet::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let ip = p.index(i);
        match item.as_i64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if (1..=1000).contains(&n) => {
                if !out.insert(n) {
                    diags.error(
                        &ip,
                        item.pos,
                        format!("duplicate percentage {n}; expected unique items"),
                    );
                    ok = false;
                }
            }
            _ => {
                let found = item
                    .scalar_text()
                    .unwrap_or_else(|| item.type_name().to_owned());
                diags.error(
                    &ip,
                    item.pos,
                    format!("invalid percentage `{found}`; expected an integer in 1..=1000"),
                );
                ok = false;
            }
        }
    }
    ok.then_some(out)
}
