//! Diagnostics of broken templates, as text snapshots (`UPDATE_EXPECT=1` to refresh).

use berth_template::{LoadOptions, validate};
use expect_test::{Expect, expect};

fn render(text: &str, opts: &LoadOptions) -> String {
    validate(text, opts)
        .iter()
        .map(|d| format!("{} {d}\n", d.severity))
        .collect()
}

fn check_file(name: &str, expected: Expect) {
    let path = super::fixtures::dir().join("invalid").join(name);
    let text = std::fs::read_to_string(path).expect("invalid fixture text");
    expected.assert_eq(&render(&text, &LoadOptions::default()));
}

#[test]
fn many_errors_at_once() {
    check_file(
        "many_errors.yaml",
        expect![[r#"
        error paramters (3:1): unknown top-level key `paramters`; expected one of homing_template_version, parameters, locations, demands, constraints, reservations, reservation, optimization (did you mean `parameters`?)
        error parameters.loop_b.get_param (7:23): parameter cycle: loop_a -> loop_b -> loop_a
        error locations.customer_loc.latitude (10:15): latitude 132.5 out of range; expected -90 to 90 degrees
        error locations.central_office.clli_code (13:16): clli_code `DLLSTX5` has 7 characters; expected 8
        error locations.nowhere (14:12): empty location; expected latitude/longitude, host_name, clli_code or placemark keys
        error demands.vG[0].inventory_type (18:23): unknown inventory_type `clouds`; expected one of cloud, service, transport, vfmodule, nssi, nsi, slice_profiles, nst
        error demands.vG[0].default_cost (19:21): cost -5 is negative; expected a number >= 0
        error demands.vGMuxInfra[0] (21:7): missing `inventory_provider`; a requirement without explicit `candidates` requires it
        error demands.vGMuxInfra[0].candidate_cost (22:7): unknown key `candidate_cost` in a requirement; expected one of inventory_provider, inventory_type, attributes, service_type, service_id, default_cost, required_candidates, excluded_candidates, existing_placement, candidates, filtering_attributes, passthrough_attributes, default_attributes, region, complex, unique, conflict_identifier, customer_id, service_resource_id, flavor, vlan_key, port_key, service_subscription, subdivision (did you mean `candidates`?)
        error constraints.too_far.demands (26:14): a distance_between_demands constraint relates demands pairwise; expected at least two demands, found 1
        error constraints.too_far.properties.distance (28:23): invalid distance threshold: unknown unit `kms`; expected one of km, mi, m
        error constraints.to_nowhere.demands[1] (31:19): undefined demand `vGW`; expected a demand declared in `demands` (did you mean `vG`?)
        error constraints.to_nowhere.properties.distance.get_param[1] (33:39): index 5 out of range: `weights` has 2 items; expected 0..2
        error constraints.to_nowhere.properties.location (34:17): undefined location `customer_lock`; expected a location declared in `locations` (did you mean `customer_loc`?)
        error constraints.diverse.properties.category (40:17): unknown zone category `planet`; expected one of disaster, region, complex, country, time, maintenance (optionally with a `_zone` suffix)
        error constraints.net.properties (44:17): a network_between_demands constraint needs at least one of bandwidth, distance, latency; found none
        error constraints.attrs.properties.evaluate.cloud_version.gt (50:29): expected a finite number; found a string `high`
        error constraints.attrs.properties.evaluate.flavor.regex (51:25): invalid regular expression `/([a-z/`: unclosed character class
        error constraints.attrs.properties.evaluate.zone.near (52:16): unknown evaluation operator `near`; expected one of eq, ne, lt, gt, lte, gte, any, all, regex
        error constraints.fit.type (54:11): unknown constraint type `instance_fits`; expected one of attribute, threshold, distance_between_demands, distance_to_location, instance_fit, region_fit, vim_fit, service, zone, inventory_group, license, network_between_demands, network_to_location, capability, capacity, hpa (did you mean `instance_fit`?)
        error constraints.stack.properties.template.get_file (60:28): file `missing.yaml` not found: no files were supplied with the template
        error constraints.stack.properties.environment.get_file (61:31): cannot fetch `https://example.com/env.yaml`: remote files are not fetched; supply its content in the files map
        error optimization.minimize.sum[0].product[0].get_param (65:32): undefined parameter `w3`
        error optimization.minimize.sum[1].distance_between (66:28): `distance_between` between two locations is a constant; expected at least one demand
        error optimization.minimize.sum[2].latency_between (67:27): expected a two-element list for `latency_between`, e.g. [customer_loc, vG]; found a list
        error optimization.minimize.sum[3].distance_to (68:10): unknown operator or function `distance_to`; expected one of sum, product, min, max, distance_between, latency_between, cost, hpa_score, aic_version, attribute
    "#]],
    );
}

#[test]
fn seed_structure_skeleton() {
    check_file(
        "seed_structure_skeleton.yaml",
        expect![[r#"
        error parameters (4:3): expected a mapping of parameter names to values; found a string `PARAMETER_DICT`
        error locations (6:3): expected a mapping of location names to locations; found a string `LOCATION_DICT`
        error demands (8:3): expected a mapping of demand names to requirements; found a string `DEMAND_DICT`
        error constraints (10:3): expected a mapping of constraint names to constraints; found a string `CONSTRAINT_DICT`
        error reservations (12:3): expected a mapping of reservations; found a string `RESERVATION_DICT`
        error optimization (14:3): expected an optimization mapping; found a string `OPTIMIZATION`
    "#]],
    );
}

#[test]
fn seed_constraint_schema_placeholders() {
    check_file(
        "seed_constraint_schema.yaml",
        expect![[r#"
        error undefined demand: the template declares no demands; expected at least one under `demands`
        error constraints.CONSTRAINT_NAME_1.type (5:11): unknown constraint type `CONSTRAINT_TYPE`; expected one of attribute, threshold, distance_between_demands, distance_to_location, instance_fit, region_fit, vim_fit, service, zone, inventory_group, license, network_between_demands, network_to_location, capability, capacity, hpa
        error constraints.CONSTRAINT_NAME_1.demands (6:14): undefined demand `DEMAND_NAME | [DEMAND_NAME_1, DEMAND_NAME_2, ...]`; expected a demand declared in `demands`
        error constraints.CONSTRAINT_NAME_2.type (10:11): unknown constraint type `CONSTRAINT_TYPE`; expected one of attribute, threshold, distance_between_demands, distance_to_location, instance_fit, region_fit, vim_fit, service, zone, inventory_group, license, network_between_demands, network_to_location, capability, capacity, hpa
        error constraints.CONSTRAINT_NAME_2.demands (11:14): undefined demand `DEMAND_NAME | [DEMAND_NAME_1, DEMAND_NAME_2, ...]`; expected a demand declared in `demands`
    "#]],
    );
}

#[test]
fn unquoted_threshold_gets_a_hint() {
    check_file(
        "unquoted_threshold.yaml",
        expect![[r#"
        error (11:18): invalid YAML: while scanning a block scalar, did not find expected comment or line break; a value starting with `>` must be quoted, e.g. ">= 1000 Mbps"
    "#]],
    );
}
