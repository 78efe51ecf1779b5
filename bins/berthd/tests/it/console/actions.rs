//! The console's actions driven in Chromium, each checked through the API: a reservation that
//! does not fit shows the offers and one taken from them is created, changed and cancelled; a
//! plan is submitted from a template and deleted; a read-only user sees no action button and
//! the API refuses the page's own write with 403.

use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{Session, api};

/// The reservation `id` as `query-reservation` details it in `zone` (`None`: not listed).
fn detail(c: &Client, base: &str, zone: &str, id: &str) -> Option<Value> {
    let v = api(c, base, "/query-reservation", json!({"zone": zone}));
    v["details"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["reservation-id"] == id)
        .cloned()
}

fn millis(v: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{v}: {e}"))
        .timestamp_millis()
}

/// On the timeline: 4 cores in the over-committed `lab` pool from 1 to 5 hours ahead do not
/// fit; the page shows the offers; "start then" takes lab's earliest start and the request
/// goes through; the new reservation is extended by 2 hours and shrunk to 3 cores, then
/// cancelled. Returns nothing: every step is asserted.
pub(super) fn reservations(s: &Session, c: &Client, base: &str) {
    s.js("const g = document.getElementById('tl-group'); g.value = 'pool'; g.dispatchEvent(new Event('change')); return true");
    s.wait(
        "the new-reservation button for a writer",
        "return document.body.dataset.access === 'write' && !document.getElementById('act-new-res').hidden",
    );
    s.js("document.getElementById('act-new-res').click(); return true");
    s.js(
        "const p = document.getElementById('rf-pool'); p.value = 'lab/default'; p.dispatchEvent(new Event('change'));
         document.getElementById('rf-start').value = toLocalInput(Date.now() + 3600e3);
         document.getElementById('rf-end').value = toLocalInput(Date.now() + 5 * 3600e3);
         document.querySelector('#rf-amounts input[data-dimension=vcpu]').value = '4';
         document.getElementById('rf-submit').click(); return true",
    );
    s.wait(
        "the conflict's offers",
        "return document.getElementById('rf-status').dataset.kind === 'error' && !!document.querySelector('[data-offer-pool=\"lab/default\"] [data-offer=later]')",
    );
    s.screenshot("console-offers");
    let status = s.js("return document.getElementById('rf-status').textContent");
    assert!(status.as_str().unwrap().starts_with("409: "), "{status}");
    let earliest =
        s.js("return document.querySelector('[data-offer-pool=\"lab/default\"]').dataset.earliest");
    s.js("document.querySelector('[data-offer-pool=\"lab/default\"] [data-offer=later]').click(); document.getElementById('rf-submit').click(); return true");
    s.wait(
        "the reservation taken from the offer",
        "return document.getElementById('rf-status').dataset.kind === 'ok'",
    );
    let id = s
        .js("return document.getElementById('rf-status').dataset.reservation")
        .as_str()
        .unwrap()
        .to_owned();
    let made = detail(c, base, "lab", &id).unwrap_or_else(|| panic!("{id} not in lab"));
    // The form takes whole minutes: the start is the offer's, rounded up to one.
    let lag = millis(&made["start"]) - millis(&earliest);
    assert!((0..60_000).contains(&lag), "{made} from offer {earliest}");
    assert_eq!(
        millis(&made["end"]) - millis(&made["start"]),
        4 * 3_600_000,
        "the offer keeps the duration: {made}"
    );
    assert_eq!(made["capacity"], json!({"cores": 4}), "{made}");

    // Its bar opens its panel; extend by two hours and shrink to 3 cores.
    s.wait(
        "the new reservation's bar",
        &format!("return !!document.querySelector('[data-reservation-id=\"{id}\"]')"),
    );
    s.js(&format!("document.querySelector('[data-reservation-id=\"{id}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true"));
    s.wait(
        "the reservation's panel",
        &format!("return document.getElementById('res-panel').dataset.reservation === '{id}' && !!document.getElementById('rp-save')"),
    );
    let end = millis(&made["end"]) + 2 * 3_600_000;
    s.js(&format!(
        "document.getElementById('rp-end').value = toLocalInput({end});
         document.querySelector('#rp-amounts input[data-dimension=vcpu]').value = '3';
         document.getElementById('rp-save').click(); return true"
    ));
    s.wait(
        "the update",
        "const s = document.getElementById('rp-status'); return !!s && s.textContent === 'updated'",
    );
    let changed = detail(c, base, "lab", &id).unwrap();
    assert_eq!(millis(&changed["end"]), end, "{changed}");
    assert_eq!(changed["capacity"], json!({"cores": 3}), "{changed}");
    s.wait(
        "the panel showing the change",
        "return document.querySelector('#res-panel [data-summary]').textContent.includes('vcpu 3')",
    );

    // Cancel asks once more, then cancels: query-reservation no longer lists it.
    s.js("document.getElementById('rp-cancel').click(); return true");
    assert_eq!(
        s.js("return document.getElementById('rp-cancel').textContent"),
        json!("Really cancel?")
    );
    assert!(
        detail(c, base, "lab", &id).is_some(),
        "one press cancels nothing"
    );
    s.js("document.getElementById('rp-cancel').click(); return true");
    s.wait(
        "the reservation drawn cancelled",
        &format!("return document.querySelector('[data-reservation-id=\"{id}\"]').dataset.state === 'cancelled'"),
    );
    assert_eq!(detail(c, base, "lab", &id), None);
}

/// On the plans page: a plan submitted from the form's template is solved and shown, then
/// deleted with two presses; the HAS API then answers 404 for it.
pub(super) fn plans(s: &Session, c: &Client, d: &crate::Daemon) {
    s.wait(
        "the new-plan button",
        "return !document.getElementById('act-new-plan').hidden",
    );
    s.js("document.getElementById('act-new-plan').click(); document.getElementById('pf-name').value = 'from-console'; document.getElementById('pf-submit').click(); return true");
    s.wait(
        "the plan's acceptance",
        "return document.getElementById('pf-status').dataset.kind === 'ok'",
    );
    let id = s
        .js("return document.getElementById('pf-status').dataset.plan")
        .as_str()
        .unwrap()
        .to_owned();
    let plan = crate::wait_plan(c, d, &id);
    assert_eq!(
        (&plan["name"], &plan["status"]),
        (&json!("from-console"), &json!("done")),
        "{plan}"
    );
    s.wait(
        "the submitted plan's card with its recommendation",
        &format!("const p = document.querySelector('[data-plan-id=\"{id}\"]'); return !!p && p.dataset.status === 'done' && !!p.querySelector('[data-recommendation=vG]')"),
    );
    s.js(&format!(
        "document.querySelector('[data-delete-plan=\"{id}\"]').click(); return true"
    ));
    assert_eq!(crate::get(c, d, &format!("/v1/plans/{id}")).0, 200);
    s.js(&format!(
        "document.querySelector('[data-delete-plan=\"{id}\"]').click(); return true"
    ));
    s.wait(
        "the deleted plan's card gone",
        &format!("return !document.querySelector('[data-plan-id=\"{id}\"]')"),
    );
    let t = std::time::Instant::now();
    while crate::get(c, d, &format!("/v1/plans/{id}")).0 != 404 {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "plan {id} still there"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A read-only user's console: every page, no action button, no action in a reservation's
/// panel, and the API answers the page's own write with 403.
pub(super) fn read_only(s: &Session, ui: &str, reservation: &str) {
    s.go(&format!("{ui}#timeline"));
    s.wait(
        "the reader's timeline",
        &format!("return document.body.dataset.access === 'read' && !!document.querySelector('[data-reservation-id=\"{reservation}\"]')"),
    );
    let shown = "return [...document.querySelectorAll('.act, [data-delete-plan], #rp-save, #rp-cancel')].filter(b => b.getClientRects().length > 0).map(b => b.id || b.textContent)";
    assert_eq!(s.js(shown), json!([]));
    s.js(&format!("document.querySelector('[data-reservation-id=\"{reservation}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true"));
    s.wait(
        "the reader's reservation panel",
        &format!(
            "return document.getElementById('res-panel').dataset.reservation === '{reservation}'"
        ),
    );
    assert_eq!(s.js(shown), json!([]));
    s.go(&format!("{ui}#plans"));
    s.wait(
        "the reader's plans",
        "return document.body.dataset.access === 'read' && Number(document.getElementById('plans').dataset.count) > 0",
    );
    assert_eq!(s.js(shown), json!([]));
    s.js(&format!("window.__refused = null; callApi('POST', '/cancel-reservation', {{'reservation-id': '{reservation}'}}).then(r => window.__refused = [r.status, errorText(r)]); return true"));
    s.wait("the refused write", "return window.__refused !== null");
    let refused = s.js("return window.__refused");
    assert_eq!(refused[0], json!(403), "{refused}");
    assert!(
        refused[1].as_str().unwrap().contains("may only read"),
        "{refused}"
    );
}
