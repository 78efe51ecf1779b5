//! Thresholds (`<250 km`, `10-20 ms`): construction, admission tests, bounds and Display.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{ParseError, ParseErrorKind};
use crate::op::Op;
use crate::quantity::Quantity;
use crate::unit::{Family, Unit};

/// Relative tolerance under which two base values count as equal in [`Threshold::admits`].
///
/// Unit factors like 0.001 are not exact in binary, so `1609.344 m` and `1 mi` differ in the
/// last bit once converted; a few ulps of slack makes them equal without blurring real limits.
pub const REL_TOLERANCE: f64 = 1e-12;

/// Compare two base values, treating values within [`REL_TOLERANCE`] as equal.
pub fn compare_base(a: f64, b: f64) -> Ordering {
    let scale = a.abs().max(b.abs());
    if (a - b).abs() <= REL_TOLERANCE * scale {
        Ordering::Equal
    } else {
        a.partial_cmp(&b).unwrap_or(Ordering::Equal)
    }
}

/// A threshold property value: a comparison against one quantity, or an inclusive range.
///
/// Invariants of every threshold this crate returns: values are finite and `>= 0`, also in base
/// units; a range's ends share one unit and `low <= high`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// `[op] value`.
    Compare {
        /// The operator (`=` when none was written).
        op: Op,
        /// The value compared against.
        value: Quantity,
    },
    /// `low-high unit`, both ends inclusive.
    Range {
        /// Low end.
        low: Quantity,
        /// High end, same unit as `low`.
        high: Quantity,
    },
}

/// The family and default unit a property declares; parses its threshold strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PropertyUnits {
    /// Units of other families are rejected.
    pub family: Family,
    /// Used when the value has no unit.
    pub default_unit: Unit,
}

impl PropertyUnits {
    /// A property of `family` whose unitless values are in `default_unit`.
    pub const fn new(family: Family, default_unit: Unit) -> Self {
        PropertyUnits {
            family,
            default_unit,
        }
    }

    /// A property of `family` whose default unit is the family's base unit.
    pub const fn of(family: Family) -> Self {
        PropertyUnits::new(family, family.base_unit())
    }
}

impl Threshold {
    /// The threshold `= value default_unit` for a bare number (a YAML number rather than a string).
    pub fn from_number(value: f64, default_unit: Unit) -> Result<Threshold, ParseError> {
        Threshold::compare(Op::Eq, Quantity::new(value, default_unit))
    }

    /// A checked `Compare` threshold: the value must be finite and non-negative, also in base units.
    pub fn compare(op: Op, value: Quantity) -> Result<Threshold, ParseError> {
        check_value(&value)?;
        Ok(Threshold::Compare {
            op,
            value: normalize(value),
        })
    }

    /// A checked `Range` threshold: same unit on both ends, values as for [`Threshold::compare`],
    /// and `low <= high`.
    pub fn range(low: Quantity, high: Quantity) -> Result<Threshold, ParseError> {
        check_value(&low)?;
        check_value(&high)?;
        let rendered = format!("{}-{}", low.value, high);
        if low.unit != high.unit {
            return Err(ParseError::new(
                rendered,
                0,
                "the same unit on both ends",
                ParseErrorKind::MixedUnits {
                    low: low.unit,
                    high: high.unit,
                },
            ));
        }
        if low.value > high.value {
            return Err(ParseError::new(
                rendered,
                0,
                "low <= high",
                ParseErrorKind::ReversedRange {
                    low: low.value,
                    high: high.value,
                },
            ));
        }
        Ok(Threshold::Range {
            low: normalize(low),
            high: normalize(high),
        })
    }

    /// The unit the threshold is written in.
    pub const fn unit(&self) -> Unit {
        match self {
            Threshold::Compare { value, .. } => value.unit,
            Threshold::Range { low, .. } => low.unit,
        }
    }

    /// The family of the threshold's unit.
    pub const fn family(&self) -> Family {
        self.unit().family()
    }

    /// The operator of a `Compare`; `None` for a range.
    pub const fn op(&self) -> Option<Op> {
        match self {
            Threshold::Compare { op, .. } => Some(*op),
            Threshold::Range { .. } => None,
        }
    }

    /// Whether `q` satisfies the threshold. Compared in base units (equal within
    /// [`REL_TOLERANCE`]); a quantity of another family, or NaN, is not admitted.
    pub fn admits(&self, q: &Quantity) -> bool {
        if q.family() != self.family() || q.value.is_nan() {
            return false;
        }
        let x = q.in_base();
        match self {
            Threshold::Compare { op, value } => op.accepts(compare_base(x, value.in_base())),
            Threshold::Range { low, high } => {
                compare_base(x, low.in_base()).is_ge() && compare_base(x, high.in_base()).is_le()
            }
        }
    }

    /// The upper bound in base units and whether it is inclusive; `None` if unbounded above.
    pub fn upper_bound_base(&self) -> Option<(f64, bool)> {
        match self {
            Threshold::Compare { op, value } => match op {
                Op::Eq | Op::Le => Some((value.in_base(), true)),
                Op::Lt => Some((value.in_base(), false)),
                Op::Gt | Op::Ge => None,
            },
            Threshold::Range { high, .. } => Some((high.in_base(), true)),
        }
    }

    /// The lower bound in base units and whether it is inclusive; `None` if unbounded below.
    pub fn lower_bound_base(&self) -> Option<(f64, bool)> {
        match self {
            Threshold::Compare { op, value } => match op {
                Op::Eq | Op::Ge => Some((value.in_base(), true)),
                Op::Gt => Some((value.in_base(), false)),
                Op::Lt | Op::Le => None,
            },
            Threshold::Range { low, .. } => Some((low.in_base(), true)),
        }
    }
}

/// Finite and non-negative, in its unit and in base units.
fn check_value(q: &Quantity) -> Result<(), ParseError> {
    let rendered = q.to_string();
    if !q.value.is_finite() || !q.in_base().is_finite() {
        return Err(ParseError::new(
            rendered,
            0,
            "a finite number",
            ParseErrorKind::OutOfRange,
        ));
    }
    if q.value < 0.0 {
        return Err(ParseError::new(
            rendered,
            0,
            "a number >= 0",
            ParseErrorKind::Negative,
        ));
    }
    Ok(())
}

/// `-0.0` becomes `0.0` so that Display never writes a minus sign.
fn normalize(q: Quantity) -> Quantity {
    Quantity::new(q.value + 0.0, q.unit)
}

impl fmt::Display for Threshold {
    /// `<250 km`, `1.5 mi` (`=` is implied), `10-20 ms`, `<3`; parses back to the same threshold.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threshold::Compare { op: Op::Eq, value } => write!(f, "{value}"),
            Threshold::Compare { op, value } => write!(f, "{op}{value}"),
            Threshold::Range { low, high } => write!(f, "{}-{high}", low.value),
        }
    }
}

#[cfg(test)]
mod tests;
