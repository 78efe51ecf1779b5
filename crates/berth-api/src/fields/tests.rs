//! Unknown fields per body type: random unknown keys and near misses of known ones, at the top
//! and in nested objects, are named in the answer (a refusal naming both for a near miss, a
//! warning for the others in HAS and Promise bodies, a refusal in Berth's own dialect).

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::error::parse_body;
use crate::has::PlanBody;
use crate::promise::{
    CapacityBody, CapacitySubscribeBody, IdBody, InstanceBody, ProviderBody, QueryBody,
    ReservationBody, ReservationSubscribeBody,
};
use crate::ui::PlaceBody;

/// What parsing `body` as `T` in `dialect` gave: the refusal's message and diagnostics'
/// paths, or the warnings kept for the answer.
fn parse<T: serde::de::DeserializeOwned + utoipa::ToSchema + 'static>(
    body: &Value,
    dialect: Dialect,
) -> Result<Vec<String>, (String, Vec<String>)> {
    let bytes = body.to_string().into_bytes();
    WARNINGS.sync_scope(RefCell::new(Vec::new()), || {
        match parse_body::<T>(&bytes, dialect) {
            Ok(_) => Ok(WARNINGS.with(|w| w.borrow().clone())),
            Err(e) => Err((
                e.detail.clone(),
                e.diagnostics.iter().map(|d| d.path.clone()).collect(),
            )),
        }
    })
}

type Parser = fn(&Value, Dialect) -> Result<Vec<String>, (String, Vec<String>)>;

/// Every JSON body type: a valid body, where a nested object sits (if any), its dialect.
fn bodies() -> Vec<(&'static str, Parser, Value, Option<&'static str>, Dialect)> {
    let p = Dialect::Promise;
    vec![
        (
            "PlanBody",
            parse::<PlanBody>,
            json!({"name": "p", "template": {}}),
            None,
            Dialect::Has,
        ),
        (
            "ProviderBody",
            parse::<ProviderBody>,
            json!({"provider-type": "openstack", "flavors": [{"vcpus": 1, "ram": 1}]}),
            Some("flavors[0]"),
            p,
        ),
        (
            "ReservationBody",
            parse::<ReservationBody>,
            json!({"zone": "z"}),
            None,
            p,
        ),
        (
            "QueryBody",
            parse::<QueryBody>,
            json!({"window": {"scope": "exclusive"}}),
            Some("window"),
            p,
        ),
        (
            "InstanceBody",
            parse::<InstanceBody>,
            json!({"name": "vm"}),
            None,
            p,
        ),
        (
            "CapacityBody",
            parse::<CapacityBody>,
            json!({"capacity": {"cores": 1}}),
            None,
            p,
        ),
        (
            "CapacitySubscribeBody",
            parse::<CapacitySubscribeBody>,
            json!({"threshold": 1, "callback": "http://x"}),
            None,
            p,
        ),
        (
            "ReservationSubscribeBody",
            parse::<ReservationSubscribeBody>,
            json!({"callback": "http://x", "filters": {"zone": "z"}}),
            Some("filters"),
            p,
        ),
        (
            "IdBody",
            parse::<IdBody>,
            json!({"reservation-id": "r1"}),
            None,
            p,
        ),
        (
            "PlaceBody",
            parse::<PlaceBody>,
            json!({"template": "t"}),
            None,
            Dialect::Problem,
        ),
    ]
}

/// The object at `at` (`flavors[0]`, `window`) in `v`.
fn object_at<'a>(v: &'a mut Value, at: Option<&str>) -> &'a mut serde_json::Map<String, Value> {
    let mut cur = v;
    if let Some(at) = at {
        for part in at.split('.') {
            let (name, index) = match part.split_once('[') {
                Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
                None => (part, None),
            };
            cur = &mut cur[name];
            if let Some(i) = index {
                cur = &mut cur[i];
            }
        }
    }
    cur.as_object_mut().unwrap()
}

/// A near miss of `field`: one letter changed, dropped or added at `pos`.
fn mutate(field: &str, kind: u8, pos: usize, letter: char) -> String {
    let mut chars: Vec<char> = field.chars().collect();
    let i = pos % chars.len().max(1);
    match kind % 3 {
        0 => chars[i] = if chars[i] == letter { 'q' } else { letter },
        1 if chars.len() > 4 => {
            chars.remove(i);
        }
        _ => chars.insert(i, letter),
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn unknown_keys_are_named_in_the_answer(
        which in 0usize..10,
        nested in any::<bool>(),
        tail in "[a-z]{7,12}",
    ) {
        let (name, parse, mut body, inner, dialect) = bodies().swap_remove(which);
        let at = if nested { inner } else { None };
        let key = format!("zq{tail}");
        let known = known_at(name, &body, at);
        object_at(&mut body, at).insert(key.clone(), json!(1));
        let path = at.map_or(key.clone(), |a| format!("{a}.{key}"));
        let near = near_miss(&key, &known).map(str::to_owned);
        match (parse(&body, dialect), near.is_some() || dialect == Dialect::Problem) {
            (Ok(warnings), false) => {
                prop_assert_eq!(warnings.len(), 1, "{}: {:?}", name, warnings);
                prop_assert!(warnings[0].contains(&format!("unknown field `{path}` ignored")), "{}: {:?}", name, warnings);
            }
            (Err((message, paths)), true) => {
                prop_assert!(message.contains(&format!("`{path}`")), "{}: {}", name, message);
                prop_assert_eq!(paths, vec![path.clone()]);
            }
            (got, refused) => prop_assert!(false, "{}: {:?} (expected refused: {})", name, got, refused),
        }
    }

    #[test]
    fn near_misses_are_refused_naming_both(
        which in 0usize..10,
        nested in any::<bool>(),
        pick in any::<usize>(),
        kind in any::<u8>(),
        pos in any::<usize>(),
        letter in proptest::char::range('a', 'z'),
    ) {
        let (name, parse, mut body, inner, dialect) = bodies().swap_remove(which);
        let at = if nested { inner } else { None };
        let known = known_at(name, &body, at);
        let field = &known[pick % known.len()];
        let key = mutate(field, kind, pos, letter);
        prop_assume!(!known.contains(&key));
        let obj = object_at(&mut body, at);
        // Alone beside the field it nearly is, or instead of it.
        obj.remove(field);
        obj.insert(key.clone(), json!(1));
        let path = at.map_or(key.clone(), |a| format!("{a}.{key}"));
        let Err((message, paths)) = parse(&body, dialect) else {
            return Err(TestCaseError::fail(format!("{name}: `{key}` (from `{field}`) accepted")));
        };
        let named = near_miss(&key, &known).unwrap_or_default().to_owned();
        prop_assert!(!named.is_empty(), "{}: `{}` is no near miss of `{}`", name, key, field);
        prop_assert!(
            message.contains(&format!("unknown field `{path}`; did you mean `{named}`?")),
            "{}: {}", name, message
        );
        prop_assert_eq!(paths, vec![path]);
    }
}

/// The fields known at `at` in `body` (the schema's names and aliases), found by asking for
/// one unknown key there.
fn known_at(name: &str, body: &Value, at: Option<&str>) -> Vec<String> {
    let mut probe = body.clone();
    object_at(&mut probe, at).insert("zz-probe".into(), json!(1));
    let found = match name {
        "PlanBody" => unknown_fields::<PlanBody>(&probe),
        "ProviderBody" => unknown_fields::<ProviderBody>(&probe),
        "ReservationBody" => unknown_fields::<ReservationBody>(&probe),
        "QueryBody" => unknown_fields::<QueryBody>(&probe),
        "InstanceBody" => unknown_fields::<InstanceBody>(&probe),
        "CapacityBody" => unknown_fields::<CapacityBody>(&probe),
        "CapacitySubscribeBody" => unknown_fields::<CapacitySubscribeBody>(&probe),
        "ReservationSubscribeBody" => unknown_fields::<ReservationSubscribeBody>(&probe),
        "IdBody" => unknown_fields::<IdBody>(&probe),
        _ => unknown_fields::<PlaceBody>(&probe),
    };
    found
        .into_iter()
        .find(|u| u.path.ends_with("zz-probe"))
        .map(|u| u.known)
        .unwrap_or_default()
}

#[test]
fn the_issues_cases_are_named() {
    // `provider` is `provider-id` in create-instance, and the other way round elsewhere.
    let ok = parse::<InstanceBody>(&json!({"provider": "p2", "flavor": "m1"}), Dialect::Promise);
    assert_eq!(ok, Ok(vec![]));
    let ok = parse::<ReservationBody>(&json!({"provider-id": "p2"}), Dialect::Promise);
    assert_eq!(ok, Ok(vec![]));
    let Err((m, _)) = parse::<ReservationBody>(&json!({"capcity": {"cores": 1}}), Dialect::Promise)
    else {
        panic!("capcity accepted");
    };
    assert_eq!(m, "unknown field `capcity`; did you mean `capacity`?");
    let Err((m, _)) = parse::<PlanBody>(
        &json!({"name": "p", "template": {}, "num_solutions": 1}),
        Dialect::Has,
    ) else {
        panic!("num_solutions accepted");
    };
    assert_eq!(
        m,
        "unknown field `num_solutions`; did you mean `num_solution`?"
    );
    let Err((m, _)) = parse::<IdBody>(&json!({"reservation": "r1"}), Dialect::Promise) else {
        panic!("reservation accepted");
    };
    assert_eq!(
        m,
        "unknown field `reservation`; did you mean `reservation-id`?"
    );
    // An extra a client sends is kept as a warning; two near misses are both named.
    let w = parse::<ReservationBody>(&json!({"zone": "z", "client-trace": "x"}), Dialect::Promise)
        .unwrap();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("unknown field `client-trace` ignored; expected one of capacity,"),
        "{w:?}"
    );
    let Err((m, paths)) =
        parse::<ReservationBody>(&json!({"zoen": "z", "capcity": {}}), Dialect::Promise)
    else {
        panic!("accepted");
    };
    assert_eq!(paths, ["zoen", "capcity"], "{m}");
}
