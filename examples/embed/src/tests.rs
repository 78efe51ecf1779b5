//! The example's decisions against a brute-force oracle over the same sites.

use super::*;

fn km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, lo1, la2, lo2) = (
        a.0.to_radians(),
        a.1.to_radians(),
        b.0.to_radians(),
        b.1.to_radians(),
    );
    let h = ((la2 - la1) / 2.0).sin().powi(2)
        + la1.cos() * la2.cos() * ((lo2 - lo1) / 2.0).sin().powi(2);
    2.0 * 6371.0 * h.sqrt().asin()
}

#[test]
fn the_plan_is_the_brute_force_optimum_and_the_reservations_fill_the_site() {
    let now = example_now();
    let r = run(now).unwrap();
    let customer = (32.78, -96.80);
    let at = |s: &Site| (s.latitude, s.longitude);
    // Every pair of sites within 400 km of each other; the least total distance to the customer.
    let mut best: Option<(f64, &str, &str)> = None;
    for a in SITES {
        for b in SITES {
            if km(at(a), at(b)) >= 400.0 {
                continue;
            }
            let total = km(customer, at(a)) + km(customer, at(b));
            if best.is_none_or(|(t, _, _)| total < t) {
                best = Some((total, a.name, b.name));
            }
        }
    }
    let (total, fw, router) = best.unwrap();
    assert_eq!(
        r.placements,
        vec![
            ("vfw".to_owned(), fw.to_owned()),
            ("vrouter".to_owned(), router.to_owned())
        ]
    );
    assert!(
        (r.objective - total).abs() < 0.01 * total,
        "{} vs {total}",
        r.objective
    );
    assert!(r.optimal);
    // Both on the 16-vCPU site: 2 x 8 fill it for the day, so 8 more fit only after it.
    assert_eq!((fw, router), ("dallas", "dallas"));
    assert_eq!(r.reservations.len(), 2);
    assert_ne!(r.reservations[0].1, r.reservations[1].1);
    assert_eq!(r.offer, Some((0, Some(now + TimeDelta::hours(25)))));
}
