//! Quantities: a value with its unit, and exact conversion between units of one family.

use std::fmt;

use crate::error::{ParseError, ParseErrorKind};
use crate::unit::{Family, Unit};

/// A value with its unit. Parsed quantities are finite and non-negative; constructed ones need not be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    /// The number, in `unit`.
    pub value: f64,
    /// The unit `value` is expressed in.
    pub unit: Unit,
}

impl Quantity {
    /// A quantity of `value` `unit`s.
    pub const fn new(value: f64, unit: Unit) -> Self {
        Quantity { value, unit }
    }

    /// A quantity given in the base unit of `unit`'s family, expressed in `unit`.
    pub fn from_base(base: f64, unit: Unit) -> Self {
        Quantity::new(base / unit.to_base_factor(), unit)
    }

    /// The family of the unit.
    pub const fn family(&self) -> Family {
        self.unit.family()
    }

    /// The value in the family's base unit (km, ms, Mbps, USD).
    pub fn in_base(&self) -> f64 {
        self.value * self.unit.to_base_factor()
    }

    /// The same quantity expressed in `unit`; an error if `unit` is of another family
    /// or the result is not finite.
    pub fn to(&self, unit: Unit) -> Result<Quantity, ParseError> {
        let rendered = self.to_string();
        let offset = rendered.len() - self.unit.symbol().len();
        if unit.family() != self.family() {
            return Err(ParseError::new(
                rendered,
                offset,
                format!("a {} unit", self.family()),
                ParseErrorKind::IncompatibleUnits {
                    from: self.unit,
                    to: unit,
                },
            ));
        }
        if unit == self.unit {
            return Ok(*self);
        }
        let value = self.value * (self.unit.to_base_factor() / unit.to_base_factor());
        if !value.is_finite() {
            return Err(ParseError::new(
                rendered,
                0,
                format!("a value representable in {unit}"),
                ParseErrorKind::OutOfRange,
            ));
        }
        Ok(Quantity::new(value, unit))
    }
}

impl fmt::Display for Quantity {
    /// `250 km`, `1.5 mi`, `3` (dimensionless). Parsed quantities round-trip exactly.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unit == Unit::One {
            write!(f, "{}", self.value)
        } else {
            write!(f, "{} {}", self.value, self.unit)
        }
    }
}
