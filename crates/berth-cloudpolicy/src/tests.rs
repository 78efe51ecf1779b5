//! Unit tests: policy validation, operator files, capability, cost, net value.

use std::collections::{BTreeMap, BTreeSet};

use expect_test::{Expect, expect};
use proptest::prelude::*;

use crate::*;

const INSTANCE1: &str =
    include_str!("../../../examples/cloud-policy/instance1-vcpe-burstable.json");
const INSTANCE2: &str =
    include_str!("../../../examples/cloud-policy/instance2-vcpe-guaranteed.json");
const INSTANCE3: &str =
    include_str!("../../../examples/cloud-policy/instance3-vdns-ha-burstable.json");
const INSTANCE4: &str =
    include_str!("../../../examples/cloud-policy/instance4-vdns-ha-guaranteed.json");
const OWNERS: &str = include_str!("../../../examples/cloud-policy/owners.yaml");
const COSTS: &str = include_str!("../../../examples/cloud-policy/costs.yaml");
const WORKLOADS: &str = include_str!("../../../examples/cloud-policy/workloads.yaml");

fn policy(text: &str) -> CloudSelectionPolicy {
    match CloudSelectionPolicy::parse(text) {
        Ok(p) => p,
        Err(e) => panic!("policy should load: {e:?}"),
    }
}

fn owners() -> OwnerCatalog {
    match OwnerCatalog::parse(OWNERS) {
        Ok(o) => o,
        Err(e) => panic!("owners should load: {e:?}"),
    }
}

fn costs() -> CostFile {
    match CostFile::parse(COSTS) {
        Ok(c) => c,
        Err(e) => panic!("costs should load: {e:?}"),
    }
}

/// Renders the diagnostics of a failed load, one per line.
fn render(result: Result<impl std::fmt::Debug, CloudPolicyError>) -> String {
    match result {
        Ok(v) => format!("unexpectedly valid: {v:?}"),
        Err(CloudPolicyError::Invalid {
            document,
            diagnostics,
        }) => {
            let mut out = format!("invalid {document}\n");
            for d in diagnostics {
                out.push_str(&format!("{}: {d}\n", d.severity));
            }
            out
        }
        Err(other) => format!("other error: {other}"),
    }
}

fn check_diags(result: Result<impl std::fmt::Debug, CloudPolicyError>, expect: Expect) {
    expect.assert_eq(&render(result));
}

fn region(owner: &str, id: &str, cloud_type: &str) -> CloudRegion {
    CloudRegion {
        cloud_type: Some(cloud_type.to_owned()),
        is_public: true,
        ..CloudRegion::new(owner, id)
    }
}

fn xyz() -> Workload {
    Workload {
        instance_type: Some("flavor-xyz".to_owned()),
        demand: BTreeMap::from([("vcpu".to_owned(), 16), ("ram_mib".to_owned(), 32768)]),
        ..Workload::default()
    }
}

// ---------------------------------------------------------------- policy documents

#[test]
fn seed_instance1_vcpe_burstable_validates() {
    let p = policy(INSTANCE1);
    assert_eq!(p.service, "cloudSelectionPolicy");
    assert_eq!(
        p.policy_name,
        "oofMulti-cloudCasablanca.cloudSelectionPolicy_vCPE_VNF"
    );
    assert_eq!(p.guard.as_deref(), Some("False"));
    assert_eq!(p.content.vnfc.as_deref(), Some("vgw"));
    assert!(p.content.cloud_cost_evaluation);
    let intent = &p.content.intent;
    assert_eq!(
        intent.cloud_types,
        Some(BTreeSet::from(["VMware VIO".to_owned()]))
    );
    assert!(!intent.high_availability);
    assert_eq!(
        intent.isolation,
        Some(ResourceIsolation::Burstable {
            oversubscription_percent: 25
        })
    );
    assert_eq!(p.resources, ["vgw"]);
    assert_eq!(p.policy_scope.len(), 6);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert!(p.applies_to("vgw") && p.applies_to("VGW") && !p.applies_to("vdns"));
}

#[test]
fn seed_instance2_vcpe_guaranteed_validates() {
    let p = policy(INSTANCE2);
    let intent = &p.content.intent;
    assert_eq!(intent.cloud_types, None);
    assert!(!intent.high_availability);
    assert_eq!(intent.isolation, Some(ResourceIsolation::Guaranteed));
}

#[test]
fn seed_instance3_vdns_ha_burstable_validates_with_a_scope_warning() {
    let p = policy(INSTANCE3);
    let intent = &p.content.intent;
    assert_eq!(
        intent.cloud_types,
        Some(BTreeSet::from([
            "Azure".to_owned(),
            "VMware VIO".to_owned()
        ]))
    );
    assert!(intent.high_availability);
    assert_eq!(
        intent.isolation,
        Some(ResourceIsolation::Burstable {
            oversubscription_percent: 25
        })
    );
    // The seed lists `vDNS` twice in policyScope: kept, but warned about.
    let warnings: Vec<String> = p.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        ["policyScope[3] (33:5): scope `vDNS` is listed twice"]
    );
    assert!(p.applies_to("vDNS") && p.applies_to("vdns"));
}

#[test]
fn seed_instance4_vdns_ha_guaranteed_validates() {
    let p = policy(INSTANCE4);
    let intent = &p.content.intent;
    assert!(intent.high_availability);
    assert_eq!(intent.isolation, Some(ResourceIsolation::Guaranteed));
    assert_eq!(p.warnings.len(), 1);
}

#[test]
fn broken_policy_reports_every_problem_with_path_and_position() {
    // The seed's own mistakes (a Python set for the cloud type list, `int` written as a
    // string) plus a misspelt intent, a bad enum value and wrong scalar types.
    check_diags(
        CloudSelectionPolicy::parse(
            r#"service: 7
content:
  vnfc: vgw
  cloud-cost-evaluation: "yes"
  cloud-deployment-intent:
    Cloud Type (Cloud Provider): {VMware VIO}
    Cloud Owner & Cloud Region (VIM id): [att_dfw1, att_dfw1]
    Infrastructure HA for VNF: true
    Infrastructure Resource Isolation for VNF: Burstable
    Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage: "25"
resources: vgw
"#,
        ),
        expect![[r#"
            invalid cloud selection policy
            error: (1:1): missing required field `policyName`
            error: service (1:10): expected a string; found an integer
            error: content.cloud-cost-evaluation (4:26): expected a boolean; found a string
            error: content.cloud-deployment-intent."Cloud Type (Cloud Provider)" (6:34): expected a list; found a mapping (a Python-style set); write `[VMware VIO]`
            error: content.cloud-deployment-intent."Cloud Owner & Cloud Region (VIM id)"[1] (7:53): duplicate item `att_dfw1`; expected unique items
            error: content.cloud-deployment-intent."Infrastructure HA for VNF" (8:5): unknown field `Infrastructure HA for VNF`; expected one of `Cloud Type (Cloud Provider)`, `Cloud Owner & Cloud Region (VIM id)`, `Infrastructure High Availability for VNF`, `Infrastructure Resource Isolation for VNF`, `Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage`
            error: content.cloud-deployment-intent."Infrastructure Resource Isolation for VNF" (9:48): expected one of `Burstable QoS`, `Guaranteed QoS`; found `Burstable`
            error: content.cloud-deployment-intent."Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage" (10:92): expected an integer; found a string
            error: resources (11:12): expected a list; found a string
        "#]],
    );
}

#[test]
fn oversubscription_percentage_needs_burstable_qos() {
    check_diags(
        CloudSelectionPolicy::parse(
            r#"{"service": "s", "policyName": "p", "content": {"cloud-cost-evaluation": false,
  "cloud-deployment-intent": {
    "Infrastructure Resource Isolation for VNF": "Guaranteed QoS",
    "Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage": 25}}}"#,
        ),
        expect![[r#"
            invalid cloud selection policy
            error: content.cloud-deployment-intent."Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage" (4:5): an oversubscription percentage applies only to `Infrastructure Resource Isolation for VNF: Burstable QoS`
        "#]],
    );
}

#[test]
fn burstable_qos_needs_a_positive_bounded_percentage() {
    check_diags(
        CloudSelectionPolicy::parse(
            "service: s\npolicyName: p\ncontent:\n  cloud-cost-evaluation: false\n  cloud-deployment-intent:\n    Infrastructure Resource Isolation for VNF: Burstable QoS\n",
        ),
        expect![[r#"
            invalid cloud selection policy
            error: content.cloud-deployment-intent (6:5): missing required field `Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage`
        "#]],
    );
    check_diags(
        CloudSelectionPolicy::parse(
            "service: s\npolicyName: p\ncontent:\n  cloud-cost-evaluation: false\n  cloud-deployment-intent:\n    Infrastructure Resource Isolation for VNF: Burstable QoS\n    Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage: 0\n    Cloud Type (Cloud Provider): []\n",
        ),
        expect![[r#"
            invalid cloud selection policy
            error: content.cloud-deployment-intent."Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage" (7:92): expected a number greater than 0; found `0`
            error: content.cloud-deployment-intent."Cloud Type (Cloud Provider)" (8:34): expected at least 1 item(s); found an empty list
        "#]],
    );
}

#[test]
fn unknown_top_level_fields_are_warnings_and_syntax_errors_one_diagnostic() {
    let p = policy(
        "service: s\npolicyName: p\ncolor: blue\ncontent: {cloud-cost-evaluation: true, cloud-deployment-intent: {}}\n",
    );
    let warnings: Vec<String> = p.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, ["color (3:1): unknown field `color` is ignored"]);
    assert_eq!(p.content.intent, DeploymentIntent::default());

    check_diags(
        CloudSelectionPolicy::parse("{\"service\": \"s\",, }"),
        expect![[r#"
            invalid cloud selection policy
            error: (1:17): invalid YAML: while parsing a node, did not find expected node content
        "#]],
    );
    check_diags(
        CloudSelectionPolicy::parse("- a list\n"),
        expect![[r#"
            invalid cloud selection policy
            error: (1:1): expected a mapping; found a list
        "#]],
    );
}

#[test]
fn the_fixed_schema_compiles_and_is_published() {
    let schema = match policy_schema() {
        Ok(s) => s,
        Err(e) => panic!("schema should compile: {e}"),
    };
    assert_eq!(schema["type"], "object");
    let props =
        &schema["properties"]["content"]["properties"]["cloud-deployment-intent"]["properties"];
    assert_eq!(props[field::CLOUD_TYPE]["type"], "array");
    assert_eq!(props[field::OVERSUBSCRIPTION]["type"], "integer");
}

// ---------------------------------------------------------------- operator files

#[test]
fn example_owner_file_loads() {
    let o = owners();
    let vmware = &o.owners["vmware-dc"];
    assert_eq!(
        vmware.high_availability.as_deref(),
        Some("host anti-affinity server group")
    );
    let burst = vmware.burstable_qos.as_ref().map(|b| b.percentages.clone());
    assert_eq!(burst, Some(BTreeSet::from([25, 50])));
    let azure = &o.owners["azure"];
    assert_eq!(azure.high_availability.as_deref(), Some("availability set"));
    assert_eq!(
        azure.guaranteed_qos.as_ref().map(FlavorTemplate::as_str),
        Some(DEFAULT_GUARANTEED_FLAVOR)
    );
    assert!(o.owners["titanium-edge"].high_availability.is_none());
    assert!(o.support("nobody").is_none());
}

#[test]
fn broken_owner_file_reports_every_problem() {
    check_diags(
        OwnerCatalog::parse(
            r#"owners:
  a:
    high_availability: 3
    guaranteed_qos: {flavor: "{flavor}-{percent}"}
    burstable_qos: true
  b:
    burstable_qos: {percentages: [25, 25, 0, x], flavor: "{flavr}"}
    spot: true
extra: 1
"#,
        ),
        expect![[r#"
            invalid owner capability file
            error: owners.a.high_availability (3:24): expected a string; found an integer
            error: owners.a.guaranteed_qos.flavor (4:30): unknown placeholder `{percent}` in flavor template `{flavor}-{percent}`; expected `{flavor}`
            error: owners.a.burstable_qos (5:20): expected a mapping with `percentages`; Burstable QoS needs its pre-defined oversubscription percentages
            error: owners.b.burstable_qos.percentages[1] (7:39): duplicate percentage 25; expected unique items
            error: owners.b.burstable_qos.percentages[2] (7:43): invalid percentage `0`; expected an integer in 1..=1000
            error: owners.b.burstable_qos.percentages[3] (7:46): invalid percentage `x`; expected an integer in 1..=1000
            error: owners.b.burstable_qos.flavor (7:58): unknown placeholder `{flavr}` in flavor template `{flavr}`; expected `{flavor}` or `{percent}`
            error: owners.b.spot (8:5): unknown field `spot`; expected one of `high_availability`, `guaranteed_qos`, `burstable_qos`
            error: extra (9:1): unknown field `extra`; expected one of `owners`
        "#]],
    );
}

#[test]
fn example_cost_file_loads() {
    let c = costs();
    assert_eq!(c.unit.to_string(), "USD/hour");
    assert_eq!(c.default_fixed_cost, 20.0);
    assert_eq!(c.owners["vmware-dc"].fixed_cost, Some(12.0));
    assert_eq!(
        c.owners["azure"].regions["eastus"].instance_types["flavor-xyz"],
        44.0
    );
}

#[test]
fn cost_units_parse_in_both_spellings() {
    let parse = |s: &str| s.parse::<CostUnit>().map(|u| u.to_string());
    assert_eq!(parse("USD/hour"), Ok("USD/hour".to_owned()));
    assert_eq!(parse("EUR per month"), Ok("EUR/month".to_owned()));
    assert_eq!(parse("USD/h"), Ok("USD/hour".to_owned()));
    assert!(parse("usd/hour").is_err_and(|e| e.contains("three upper-case letters")));
    assert!(parse("USD/fortnight").is_err_and(|e| e.contains("invalid period `fortnight`")));
    assert!(parse("USD").is_err_and(|e| e.contains("expected `CURRENCY/PERIOD`")));
}

#[test]
fn broken_cost_file_reports_every_problem() {
    check_diags(
        CostFile::parse(
            r#"unit: dollars
owners:
  a:
    fixed_cost: -1
    instance_types: {m1: .nan, m2: "cheap"}
    feature_groups: {burstable-qos-25: -4}
    regions:
      r1: {instance_types: {m1: -3}, spot: {}}
  b: 5
"#,
        ),
        expect![[r#"
            invalid cost file
            error: (1:1): missing required field `default_fixed_cost`
            error: unit (1:7): invalid cost unit `dollars`; expected `CURRENCY/PERIOD` such as `USD/hour` (period: hour, day, week, month, year)
            error: owners.a.fixed_cost (4:17): invalid price -1; expected a finite number of at least 0
            error: owners.a.instance_types.m1 (5:26): invalid price NaN; expected a finite number of at least 0
            error: owners.a.instance_types.m2 (5:36): expected a number; found a string
            error: owners.a.regions.r1.instance_types.m1 (8:33): invalid price -3; expected a finite number of at least 0
            error: owners.a.regions.r1.spot (8:38): unknown field `spot`; expected one of `instance_types`, `feature_groups`
            error: owners.b (9:6): expected a mapping; found an integer
        "#]],
    );
}

#[test]
fn deployment_cost_follows_step_5b() {
    let c = costs();
    let none: [&str; 0] = [];
    // Fixed cost per owner for a plugin without per-type pricing.
    let vmware = region("vmware-dc", "dfw1", "VMware VIO");
    assert_eq!(
        deployment_cost(&c, &vmware, Some("flavor-xyz"), &none),
        12.0
    );
    // Unknown owner: the file's default.
    let other = region("gcp", "us1", "GCP");
    let b = c.breakdown(&other, Some("flavor-xyz"), &none);
    assert_eq!((b.total, b.source), (20.0, CostSource::DefaultFixed));
    // Owner-wide instance type price plus feature groups (HA surcharge, burstable discount).
    let west = region("azure", "westus", "Azure");
    let b = c.breakdown(
        &west,
        Some("flavor-xyz"),
        &["high-availability", "burstable-qos-25", "unpriced"],
    );
    assert_eq!(b.source, CostSource::OwnerInstanceType);
    assert_eq!(b.total, 40.0 + 8.0 - 6.0);
    assert_eq!(b.feature_groups.len(), 2);
    // The region's price wins.
    let east = region("azure", "eastus", "Azure");
    let b = c.breakdown(&east, Some("flavor-xyz"), &none);
    assert_eq!((b.total, b.source), (44.0, CostSource::RegionInstanceType));
    // An unpriced instance type falls back to the owner's fixed cost.
    let b = c.breakdown(&east, Some("flavor-abc"), &["burstable-qos-25"]);
    assert_eq!((b.total, b.source), (24.0, CostSource::OwnerFixed));
}

#[test]
fn discounts_never_make_a_cost_negative() {
    let c = match CostFile::parse(
        "unit: USD/month\ndefault_fixed_cost: 0\nowners: {a: {fixed_cost: 3, feature_groups: {big-discount: -10}}}\n",
    ) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let r = region("a", "r", "OpenStack");
    assert_eq!(deployment_cost(&c, &r, None, &["big-discount"]), 0.0);
}

// ---------------------------------------------------------------- capability

#[test]
fn burstable_qos_maps_to_the_oversubscribed_flavor() {
    let p = policy(INSTANCE1);
    let r = region("vmware-dc", "dfw1", "VMware VIO");
    let realized = capability(&p, &owners(), &r, &xyz());
    let Ok(realized) = realized else {
        panic!("should pass: {realized:?}")
    };
    assert_eq!(
        realized.flavor.as_deref(),
        Some("flavor-xyz-25-percent-oversubscription")
    );
    assert_eq!(realized.high_availability, None);
    assert_eq!(realized.capacity, CapacityCheck::PublicCloud);
    assert_eq!(realized.feature_groups(), ["burstable-qos-25"]);
}

#[test]
fn guaranteed_qos_maps_to_the_no_oversubscription_flavor() {
    let p = policy(INSTANCE2);
    let r = region("titanium-edge", "edge1", "Wind River Titanium");
    let realized = capability(&p, &owners(), &r, &xyz()).map(|r| r.flavor);
    assert_eq!(
        realized,
        Ok(Some("flavor-xyz-no-oversubscription".to_owned()))
    );
}

#[test]
fn ha_and_isolation_are_both_realized() {
    let p = policy(INSTANCE3);
    let r = region("azure", "eastus", "Azure");
    let realized = capability(&p, &owners(), &r, &xyz());
    let Ok(realized) = realized else {
        panic!("should pass: {realized:?}")
    };
    assert_eq!(
        realized.high_availability.as_deref(),
        Some("availability set")
    );
    assert_eq!(
        realized.feature_groups(),
        ["high-availability", "burstable-qos-25"]
    );
}

#[test]
fn regions_are_dropped_for_each_reason() {
    let o = owners();
    let w = xyz();
    let reason = |p: &CloudSelectionPolicy, r: &CloudRegion| match capability(p, &o, r, &w) {
        Ok(_) => "passed".to_owned(),
        Err(rej) => rej.to_string(),
    };
    // Instance 1 allows only VMware VIO.
    assert_eq!(
        reason(&policy(INSTANCE1), &region("azure", "eastus", "Azure")),
        "cloud type `Azure` is not allowed; expected one of `VMware VIO`"
    );
    // Instance 4 wants HA, which titanium-edge cannot realize.
    let rej = capability(
        &policy(INSTANCE4),
        &o,
        &region("titanium-edge", "e1", "x"),
        &w,
    );
    assert_eq!(
        rej,
        Err(Rejection::IntentUnsupported {
            cloud_owner: "titanium-edge".to_owned(),
            intent: Intent::HighAvailability
        })
    );
    assert!(rej.is_err_and(|r| r.is_owner_wide()));
    // Burstable QoS at a percentage the owner does not offer.
    let fifty = INSTANCE3.replace("Percentage\": 25", "Percentage\": 50");
    assert_eq!(
        reason(&policy(&fifty), &region("azure", "eastus", "Azure")),
        "cloud owner `azure` does not offer 50% oversubscription; expected one of 25%"
    );
    assert_eq!(
        reason(&policy(&fifty), &region("vmware-dc", "dfw1", "VMware VIO")),
        "passed"
    );
    // An owner nobody described supports no intent ...
    assert_eq!(
        reason(&policy(INSTANCE2), &region("gcp", "us1", "GCP")),
        "cloud owner `gcp` does not support `Guaranteed QoS`"
    );
    // ... but passes a policy that asks for none.
    let plain = policy(
        "service: s\npolicyName: p\ncontent: {cloud-cost-evaluation: true, cloud-deployment-intent: {}}\n",
    );
    assert_eq!(reason(&plain, &region("gcp", "us1", "GCP")), "passed");
    // VIM id allow-list.
    let vim = policy(
        "service: s\npolicyName: p\ncontent:\n  cloud-cost-evaluation: true\n  cloud-deployment-intent:\n    Cloud Owner & Cloud Region (VIM id): [gcp_us2]\n",
    );
    assert_eq!(
        reason(&vim, &region("gcp", "us1", "GCP")),
        "VIM `gcp_us1` is not allowed; expected one of `gcp_us2`"
    );
    assert_eq!(reason(&vim, &region("gcp", "us2", "GCP")), "passed");
    // The realized flavor must be offered where the region lists its flavors.
    let mut listed = region("vmware-dc", "dfw1", "VMware VIO");
    listed.flavors = BTreeSet::from(["flavor-xyz-no-oversubscription".to_owned()]);
    assert_eq!(
        reason(&policy(INSTANCE1), &listed),
        "flavor `flavor-xyz-25-percent-oversubscription` is not offered in this region"
    );
}

#[test]
fn private_clouds_check_capacity_per_tenant() {
    let p = policy(INSTANCE2);
    let o = owners();
    let mut r = region("titanium-edge", "edge1", "Wind River Titanium");
    r.is_public = false;
    assert_eq!(
        capability(&p, &o, &r, &xyz()),
        Err(Rejection::NoTenant {
            vim_id: "titanium-edge_edge1".to_owned()
        })
    );
    r.tenant = Some("vcpe-project".to_owned());
    r.capacity = BTreeMap::from([("vcpu".to_owned(), 8), ("ram_mib".to_owned(), 65536)]);
    let rej = capability(&p, &o, &r, &xyz()).map_err(|e| e.to_string());
    assert_eq!(
        rej,
        Err("tenant `vcpe-project` lacks capacity: vcpu needs 16, 8 free".to_owned())
    );
    r.capacity.insert("vcpu".to_owned(), 16);
    assert_eq!(
        capability(&p, &o, &r, &xyz()).map(|x| x.capacity),
        Ok(CapacityCheck::Tenant {
            tenant: "vcpe-project".to_owned()
        })
    );
}

#[test]
fn a_private_cloud_is_not_passed_when_the_workload_demand_is_unknown() {
    let mut r = region("titanium-edge", "edge1", "Wind River Titanium");
    r.is_public = false;
    r.tenant = Some("vcpe-project".to_owned());
    let unknown = Workload {
        instance_type: Some("flavor-xyz".to_owned()),
        ..Workload::default()
    };
    let got = capability(&policy(INSTANCE2), &owners(), &r, &unknown);
    assert_eq!(
        got,
        Err(Rejection::UnknownDemand {
            vim_id: "titanium-edge_edge1".to_owned()
        })
    );
    expect![[r#"private region `titanium-edge_edge1` cannot be checked for capacity: the workload's demand is unknown; expected the resources it reserves (such as vcpu, ram_mib)"#]]
        .assert_eq(&got.unwrap_err().to_string());
    // Public clouds need no demand.
    r.is_public = true;
    assert_eq!(capacity_check(&r, &unknown), Ok(CapacityCheck::PublicCloud));
}

// ---------------------------------------------------------------- workload file

#[test]
fn the_workload_file_is_found_by_demand_or_vnfc() {
    let w = match WorkloadCatalog::parse(WORKLOADS) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    assert!(w.warnings.is_empty());
    let vgw = w.lookup("VGW", None).expect("by demand, ignoring case");
    assert_eq!(vgw, &xyz());
    assert_eq!(
        w.lookup("vgw_1", Some("vgw")),
        Some(vgw),
        "by the policy's VNFC"
    );
    assert_eq!(w.lookup("vgw_1", None), None);
    let vdns = w.lookup("vdns", None).expect("vdns");
    assert_eq!(vdns.instance_type_for("azure"), Some("Standard_F4s_v2"));
    assert_eq!(vdns.instance_type_for("vmware-dc"), Some("flavor-dns"));
}

#[test]
fn workload_demands_are_read_through_the_dimension_registry() {
    let w = match WorkloadCatalog::parse(
        "workloads:\n  a: {demand: {vcpus: 16, Memory: {quantity: 32, unit: GiB}, disk: 1.5}}\n",
    ) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    let d = &w.workloads["a"].demand;
    assert_eq!(
        d,
        &BTreeMap::from([
            ("disk_gib".to_owned(), 2),
            ("ram_mib".to_owned(), 32768),
            ("vcpu".to_owned(), 16),
        ])
    );
    let e = WorkloadCatalog::parse("workloads:\n  a: {demand: {vcpu: 4, cores: 8}}\n")
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert!(
        e.as_ref()
            .is_err_and(|m| m.contains("`vcpu`") && m.contains("`cores`")),
        "{e:?}"
    );
}

#[test]
fn workload_file_problems_are_all_reported() {
    check_diags(
        WorkloadCatalog::parse(
            "workloads:\n  a: {instance_type: '', demand: {vcpu: -1, ram_mib: lots}, color: red}\n  A: {}\n  b: [x]\nextra: 1\n",
        ),
        expect![[r#"
            invalid workload file
            error: workloads.a.instance_type (2:22): expected a non-empty string
            error: workloads.a.demand.vcpu (2:41): `vcpu` is -1; expected a non-negative integer amount
            error: workloads.a.demand.ram_mib (2:54): `ram_mib` is "lots"; expected a non-negative amount: a number (MiB), `16 GB`, or {quantity: 16, unit: GB}
            error: workloads.a.color (2:61): unknown field `color`; expected one of `instance_type`, `instance_types`, `demand`
            error: workloads.A (3:3): workload `A` is also named `a`; expected names unique ignoring case
            error: workloads.b (4:6): expected a mapping; found a list
            error: extra (5:1): unknown field `extra`; expected one of `workloads`
        "#]],
    );
}

/// Seed step 5b: the instance type is priced per `<instance type, cloud region>` where the
/// owner's plugin prices it (region price first, then owner-wide), the fixed cost otherwise;
/// the owner's own instance type is the one priced and mapped to a flavor.
#[test]
fn instance_types_are_priced_per_region_and_mapped_per_owner() {
    let p = policy(INSTANCE2);
    let (o, c) = (owners(), costs());
    let ev = Evaluation {
        policy: &p,
        owners: &o,
        costs: &c,
        workload: &xyz(),
        weights: Weights::default(),
        scaling: Scaling::default(),
    };
    let regions: Vec<RegionOption> = ["eastus", "westus"]
        .iter()
        .map(|id| RegionOption {
            region: region("azure", id, "Azure"),
            distance_km: 0.0,
        })
        .collect();
    let s = evaluate(&ev, &regions);
    let by = |i: usize| {
        let x = s.ranked.iter().find(|x| x.index == i).expect("kept");
        let cost = x.cost.as_ref().expect("costed");
        (x.realized.flavor.clone(), cost.base, cost.source.clone())
    };
    let flavor = Some("flavor-xyz-no-oversubscription".to_owned());
    assert_eq!(
        by(0),
        (flavor.clone(), 44.0, CostSource::RegionInstanceType)
    );
    assert_eq!(by(1), (flavor, 40.0, CostSource::OwnerInstanceType));
    let own = Workload {
        instance_types: BTreeMap::from([("azure".to_owned(), "Standard_D4".to_owned())]),
        ..xyz()
    };
    let s = evaluate(
        &Evaluation {
            workload: &own,
            ..ev
        },
        &regions,
    );
    let x = &s.ranked[0];
    assert_eq!(
        x.realized.flavor.as_deref(),
        Some("Standard_D4-no-oversubscription")
    );
    assert_eq!(
        x.cost.as_ref().map(|c| (c.base, c.source.clone())),
        Some((30.0, CostSource::OwnerFixed))
    );
}

// ---------------------------------------------------------------- net value and ranking

fn fixed_cost_file(costs: &[(&str, f64)]) -> CostFile {
    let owners: Vec<String> = costs
        .iter()
        .map(|(o, c)| format!("  {o}: {{fixed_cost: {c}}}\n"))
        .collect();
    let text = format!(
        "unit: USD/hour\ndefault_fixed_cost: 0\nowners:\n{}",
        owners.concat()
    );
    match CostFile::parse(&text) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

/// The seed's worked example (step 6a, `wd = 1, wc = 2`). The stored seed keeps only
/// candidate 3's line; candidates 1 and 2 are from the same ONAP wiki page revision
/// ("Candidate 1: $100, 100 kilometers => value: 300", "Candidate 2: $150, 80 kilometers
/// => value: 380").
#[test]
fn seed_worked_example_picks_candidate_3() {
    let costs = fixed_cost_file(&[("owner1", 100.0), ("owner2", 150.0), ("owner3", 50.0)]);
    let regions: Vec<RegionOption> = [("owner1", 100.0), ("owner2", 80.0), ("owner3", 190.0)]
        .into_iter()
        .map(|(o, d)| RegionOption {
            region: region(o, "r", "OpenStack"),
            distance_km: d,
        })
        .collect();
    let p = policy(
        "service: s\npolicyName: p\ncontent: {cloud-cost-evaluation: true, cloud-deployment-intent: {}}\n",
    );
    let o = owners();
    let ev = Evaluation {
        policy: &p,
        owners: &o,
        costs: &costs,
        workload: &Workload::default(),
        weights: Weights::default(),
        scaling: Scaling::default(),
    };
    let selection = evaluate(&ev, &regions);
    assert!(selection.dropped.is_empty());
    let values: BTreeMap<usize, f64> = selection
        .ranked
        .iter()
        .map(|s| (s.index, s.net_value))
        .collect();
    assert_eq!(values, BTreeMap::from([(0, 300.0), (1, 380.0), (2, 290.0)]));
    assert_eq!(
        selection.best().map(|s| s.index),
        Some(2),
        "pick candidate 3"
    );
    assert_eq!(
        selection.ranked.iter().map(|s| s.index).collect::<Vec<_>>(),
        [2, 0, 1]
    );
    // The same numbers from net_value directly.
    let (w, n) = (Weights::default(), Normalization::default());
    assert_eq!(net_value(100.0, 100.0, &w, &n), 300.0);
    assert_eq!(net_value(150.0, 80.0, &w, &n), 380.0);
    assert_eq!(net_value(50.0, 190.0, &w, &n), 290.0);
    // wc = 0: a service that does not care about cost picks the nearest.
    let nearest = Evaluation {
        weights: Weights::new(0.0, 1.0).unwrap_or_default(),
        ..ev
    };
    assert_eq!(
        evaluate(&nearest, &regions).best().map(|s| s.index),
        Some(1)
    );
}

#[test]
fn cost_evaluation_off_leaves_only_distance_and_owner_wide_drops() {
    let mut p = policy(INSTANCE4); // HA + Guaranteed
    p.content.cloud_cost_evaluation = false;
    let o = owners();
    let c = costs();
    let regions = vec![
        RegionOption {
            region: region("titanium-edge", "e1", "x"),
            distance_km: 1.0,
        },
        RegionOption {
            region: region("vmware-dc", "dfw1", "VMware VIO"),
            distance_km: 300.0,
        },
        RegionOption {
            region: region("titanium-edge", "e2", "x"),
            distance_km: 2.0,
        },
        RegionOption {
            region: region("azure", "eastus", "Azure"),
            distance_km: 200.0,
        },
    ];
    let ev = Evaluation {
        policy: &p,
        owners: &o,
        costs: &c,
        workload: &xyz(),
        weights: Weights::default(),
        scaling: Scaling::default(),
    };
    let s = evaluate(&ev, &regions);
    // Both titanium-edge regions go: the owner cannot realize HA.
    let dropped: Vec<(&str, bool)> = s
        .dropped
        .iter()
        .map(|d| (d.vim_id.as_str(), d.rejection.is_owner_wide()))
        .collect();
    assert_eq!(
        dropped,
        [("titanium-edge_e1", true), ("titanium-edge_e2", true)]
    );
    let ranked: Vec<(usize, f64)> = s.ranked.iter().map(|x| (x.index, x.net_value)).collect();
    assert_eq!(ranked, [(3, 200.0), (1, 300.0)]);
    assert!(s.ranked.iter().all(|x| x.cost.is_none()));
}

#[test]
fn scaling_by_the_kept_maxima_puts_terms_in_unit_range() {
    let costs = fixed_cost_file(&[("a", 100.0), ("b", 50.0)]);
    let regions = vec![
        RegionOption {
            region: region("a", "r", "x"),
            distance_km: 10.0,
        },
        RegionOption {
            region: region("b", "r", "x"),
            distance_km: 40.0,
        },
    ];
    let p = policy(
        "service: s\npolicyName: p\ncontent: {cloud-cost-evaluation: true, cloud-deployment-intent: {}}\n",
    );
    let o = owners();
    let ev = Evaluation {
        policy: &p,
        owners: &o,
        costs: &costs,
        workload: &Workload::default(),
        weights: Weights::default(),
        scaling: Scaling::MaxOfKept,
    };
    let values: Vec<(usize, f64)> = evaluate(&ev, &regions)
        .ranked
        .iter()
        .map(|s| (s.index, s.net_value))
        .collect();
    // a: 2*100/100 + 10/40 = 2.25; b: 2*50/100 + 40/40 = 2.0
    assert_eq!(values, [(1, 2.0), (0, 2.25)]);
}

#[test]
fn weights_and_scales_are_checked() {
    assert!(matches!(
        Weights::new(-1.0, 1.0),
        Err(CloudPolicyError::InvalidWeight {
            objective: "cost",
            ..
        })
    ));
    assert!(matches!(
        Weights::new(1.0, f64::NAN),
        Err(CloudPolicyError::InvalidWeight {
            objective: "distance",
            ..
        })
    ));
    assert!(matches!(
        Normalization::new(0.0, 1.0),
        Err(CloudPolicyError::InvalidScale {
            objective: "cost",
            ..
        })
    ));
    let n = Normalization::by_max([(0.0, 0.0), (f64::INFINITY, 5.0)]);
    assert_eq!((n.cost_scale(), n.distance_scale_km()), (1.0, 5.0));
}

// ---------------------------------------------------------------- properties

fn arb_weights() -> impl Strategy<Value = Weights> {
    (0.0..10.0_f64, 0.0..10.0_f64).prop_map(|(c, d)| Weights::new(c, d).unwrap_or_default())
}

fn arb_norm() -> impl Strategy<Value = Normalization> {
    (0.01..1000.0_f64, 0.01..1000.0_f64)
        .prop_map(|(c, d)| Normalization::new(c, d).unwrap_or_default())
}

/// A region of one of four owners with random type, publicity, tenant and capacity.
fn arb_region() -> impl Strategy<Value = RegionOption> {
    (
        prop::sample::select(vec!["vmware-dc", "azure", "titanium-edge", "gcp"]),
        0..4_u8,
        prop::sample::select(vec!["VMware VIO", "Azure", "OpenStack"]),
        any::<bool>(),
        any::<bool>(),
        0..40_i64,
        0.0..500.0_f64,
    )
        .prop_map(|(owner, id, ty, public, tenant, vcpu, d)| RegionOption {
            region: CloudRegion {
                cloud_type: Some(ty.to_owned()),
                is_public: public,
                tenant: tenant.then(|| "t".to_owned()),
                capacity: BTreeMap::from([("vcpu".to_owned(), vcpu)]),
                ..CloudRegion::new(owner, format!("r{id}"))
            },
            distance_km: d,
        })
}

/// A policy from the intent parts: loosening any part never shrinks the kept set.
fn intent_policy(types: bool, ha: bool, isolation: u8) -> String {
    let mut intent = Vec::new();
    if types {
        intent.push(format!(
            "\"{}\": [\"VMware VIO\", \"Azure\"]",
            field::CLOUD_TYPE
        ));
    }
    if ha {
        intent.push(format!("\"{}\": true", field::HIGH_AVAILABILITY));
    }
    match isolation {
        1 => intent.push(format!("\"{}\": \"Guaranteed QoS\"", field::ISOLATION)),
        2 => intent.push(format!(
            "\"{}\": \"Burstable QoS\", \"{}\": 25",
            field::ISOLATION,
            field::OVERSUBSCRIPTION
        )),
        _ => {}
    }
    format!(
        "{{\"service\": \"s\", \"policyName\": \"p\", \"content\": {{\"cloud-cost-evaluation\": true, \"cloud-deployment-intent\": {{{}}}}}}}",
        intent.join(", ")
    )
}

proptest! {
    #[test]
    fn net_value_is_monotone_in_cost_and_distance(
        w in arb_weights(), n in arb_norm(),
        c in 0.0..1e6_f64, dc in 0.0..1e6_f64, d in 0.0..1e5_f64, dd in 0.0..1e5_f64,
    ) {
        let base = net_value(c, d, &w, &n);
        prop_assert!(net_value(c + dc, d, &w, &n) >= base);
        prop_assert!(net_value(c, d + dd, &w, &n) >= base);
        prop_assert!(base >= 0.0);
    }

    #[test]
    fn dropping_never_adds_regions(
        regions in prop::collection::vec(arb_region(), 0..12),
        types in any::<bool>(), ha in any::<bool>(), isolation in 0..3_u8, vcpu in 0..30_i64,
    ) {
        let o = owners();
        let c = costs();
        let workload = Workload {
            instance_type: Some("flavor-xyz".to_owned()),
            demand: BTreeMap::from([("vcpu".to_owned(), vcpu)]),
            ..Workload::default()
        };
        let strict = policy(&intent_policy(types, ha, isolation));
        let loose = policy(&intent_policy(false, false, 0));
        let run = |p: &CloudSelectionPolicy| {
            let ev = Evaluation {
                policy: p, owners: &o, costs: &c, workload: &workload,
                weights: Weights::default(), scaling: Scaling::default(),
            };
            evaluate(&ev, &regions)
        };
        let s = run(&strict);
        // Every region is ranked or dropped, exactly once.
        let mut seen: Vec<usize> = s.ranked.iter().map(|x| x.index)
            .chain(s.dropped.iter().map(|x| x.index)).collect();
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..regions.len()).collect::<Vec<_>>());
        // Ranked by net value.
        prop_assert!(s.ranked.windows(2).all(|w| w[0].net_value <= w[1].net_value));
        // A stricter policy keeps a subset of what the loosest one keeps.
        let kept = |s: &Selection| s.ranked.iter().map(|x| x.index).collect::<BTreeSet<_>>();
        let loose_kept = kept(&run(&loose));
        prop_assert!(kept(&s).is_subset(&loose_kept));
        // Owner-wide rejections drop every region of that owner.
        for d in s.dropped.iter().filter(|d| d.rejection.is_owner_wide()) {
            let owner = &regions[d.index].region.cloud_owner;
            prop_assert!(s.ranked.iter().all(|x| &x.realized.cloud_owner != owner));
        }
    }

    #[test]
    fn public_clouds_always_pass_capacity_and_private_ones_match_the_oracle(
        option in arb_region(), demand in prop::collection::btree_map(
            prop::sample::select(vec!["vcpu", "ram_mib"]), -5..100_i64, 0..3),
    ) {
        let workload = Workload {
            demand: demand.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            ..Workload::default()
        };
        let r = &option.region;
        let got = capacity_check(r, &workload);
        if r.is_public {
            prop_assert_eq!(got, Ok(CapacityCheck::PublicCloud));
        } else {
            let fits = workload.demand.iter()
                .all(|(k, &v)| v <= r.capacity.get(k).copied().unwrap_or(0).max(0) || v <= 0);
            let known = workload.demand.values().any(|&v| v > 0);
            prop_assert_eq!(got.is_ok(), r.tenant.is_some() && known && fits);
        }
    }

    #[test]
    fn deployment_cost_is_never_negative(
        option in arb_region(),
        groups in prop::collection::vec(prop::sample::select(vec![
            "high-availability", "burstable-qos-25", "guaranteed-qos", "x"]), 0..4),
        ty in prop::option::of(prop::sample::select(vec!["flavor-xyz", "flavor-abc"])),
    ) {
        let cost = deployment_cost(&costs(), &option.region, ty, &groups);
        prop_assert!(cost.is_finite() && cost >= 0.0);
    }
}
