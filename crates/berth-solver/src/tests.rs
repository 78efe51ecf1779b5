//! Unit tests of the trail, the domain store and the objective bounds.

use std::sync::Arc;

use proptest::prelude::*;

use crate::expr::Compiled;
use crate::state::State;
use crate::{ConstraintId, Expr, Value, VarId};

const WHY: ConstraintId = ConstraintId(0);

#[test]
fn undo_restores_domains_assignments_and_cells() {
    let mut st = State::new(&[70, 3], vec![5, 6]);
    let m0 = st.mark();
    assert_eq!(st.remove(0, 65, WHY), Ok(true));
    assert_eq!(st.remove(0, 65, WHY), Ok(false));
    st.set_cell(1, 9);
    let m1 = st.mark();
    assert_eq!(st.assign(1, 2), Ok(()));
    assert_eq!(st.size(1), 1);
    assert!(!st.contains(1, 0));
    st.undo_to(m1);
    assert_eq!(st.value(1), None);
    assert_eq!(st.size(1), 3);
    assert_eq!(st.cell(1), 9);
    st.undo_to(m0);
    assert_eq!(st.size(0), 70);
    assert!(st.contains(0, 65));
    assert_eq!(st.cell(1), 6);
    assert_eq!(st.values(0).count(), 70);
    assert_eq!(st.values(0).last(), Some(Value(69)));
}

#[test]
fn last_value_is_unit_propagated_and_wipe_out_is_a_conflict() {
    let mut st = State::new(&[3], Vec::new());
    st.remove(0, 0, WHY).expect("two left");
    st.remove(0, 2, WHY).expect("one left");
    assert_eq!(st.value(0), Some(Value(1)));
    assert!(st.remove(0, 1, WHY).is_err());
    assert_eq!(st.remove(0, 0, WHY), Ok(false));
}

fn expr_strategy() -> impl Strategy<Value = Expr> {
    let table = prop::collection::vec(-5i32..10, 4)
        .prop_map(|v| v.into_iter().map(f64::from).collect::<Vec<f64>>());
    let leaf = prop_oneof![
        (-3i32..4).prop_map(|c| Expr::Const(f64::from(c))),
        (0u32..3, table.clone()).prop_map(|(x, t)| Expr::unary(VarId(x), t)),
        (0u32..3, 1u32..3, prop::collection::vec(-5i32..10, 16)).prop_map(|(a, d, t)| {
            Expr::pair_table(
                VarId(a),
                VarId((a + d) % 3),
                4,
                t.into_iter().map(f64::from).collect(),
            )
        }),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(((-2i32..3).prop_map(f64::from), inner.clone()), 1..3)
                .prop_map(Expr::Sum),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Expr::Product),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Expr::Min),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Expr::Max),
            inner.prop_map(|e| e.normalize(1.0, -3.0)),
        ]
    })
}

proptest! {
    /// Interval bounds on a partial assignment contain the value of every completion.
    #[test]
    fn bounds_are_admissible(e in expr_strategy(), fixed in prop::collection::vec(prop::option::of(0u32..4), 3),
                             removed in prop::collection::vec((0u32..3, 0u32..4), 0..5)) {
        let c = Compiled::new(&e, 1.0, &[4, 4, 4]).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let mut st = State::new(&[4, 4, 4], c.cells.clone());
        for (x, v) in removed {
            if st.size(x) > 1 {
                let _ = st.remove(x, v, WHY);
            }
        }
        for (x, v) in fixed.iter().enumerate() {
            if let Some(v) = v {
                let _ = st.assign(x as u32, *v);
            }
        }
        let (lo, hi) = c.bounds(&mut st, 0);
        let doms: Vec<Vec<Value>> = (0..3).map(|x| st.values(x).collect()).collect();
        for a in &doms[0] {
            for b in &doms[1] {
                for d in &doms[2] {
                    let v = c.eval(&[Some(*a), Some(*b), Some(*d)]);
                    prop_assert!(lo - 1e-9 <= v && v <= hi + 1e-9, "{v} outside [{lo}, {hi}] for {e:?}");
                }
            }
        }
    }
}

#[test]
fn shared_cost_tables_share_their_order() {
    let t: Arc<[f64]> = Arc::from(vec![3.0, 1.0, 2.0]);
    let e = Expr::sum([
        (1.0, Expr::unary(VarId(0), t.clone())),
        (-1.0, Expr::unary(VarId(1), t)),
    ]);
    let c = Compiled::new(&e, 1.0, &[3, 3]).expect("valid");
    let (o0, r0) = c.keys[0].order.clone().expect("ordered");
    let (o1, r1) = c.keys[1].order.clone().expect("ordered");
    assert!(Arc::ptr_eq(&o0, &o1));
    assert_eq!(&*o0, &[1, 2, 0]);
    assert!(!r0 && r1);
}
