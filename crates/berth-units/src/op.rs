//! Comparison operators of thresholds.

use std::cmp::Ordering;
use std::fmt;

/// A comparison operator of a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `=` (the default when no operator is written).
    Eq,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
}

impl Op {
    /// The operator as written: `=`, `<`, `>`, `<=`, `>=`.
    pub const fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Lt => "<",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Ge => ">=",
        }
    }

    /// Whether `ordering` (of the tested value against the threshold value) satisfies the operator.
    pub const fn accepts(self, ordering: Ordering) -> bool {
        match self {
            Op::Eq => matches!(ordering, Ordering::Equal),
            Op::Lt => matches!(ordering, Ordering::Less),
            Op::Gt => matches!(ordering, Ordering::Greater),
            Op::Le => !matches!(ordering, Ordering::Greater),
            Op::Ge => !matches!(ordering, Ordering::Less),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}
