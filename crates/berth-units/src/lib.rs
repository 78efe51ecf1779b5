//! Threshold values, quantities and units of homing templates.
//!
//! A homing template writes limits as strings such as `<250 km`, `<= 1.5 mi`, `10-20 ms` or
//! `>=1 Gbps` (seed 000, "Threshold Values"). This crate parses them into typed values:
//!
//! - [`Family`] (distance, time, throughput, currency, dimensionless) with a base unit
//!   (km, ms, Mbps, USD, 1) that all comparisons happen in;
//! - [`Unit`] with its family, exact factor to the base unit (1 mi = 1.609344 km) and canonical
//!   symbol; parsing is case-insensitive and accepts `s` for `sec`;
//! - [`Quantity`] (a value and a unit) with conversion between units of one family;
//! - [`Threshold`], either `Compare { op, value }` or an inclusive `Range { low, high }`, with
//!   [`Threshold::admits`] and the bounds solvers need;
//! - [`dimension`]: the registry of capacity dimensions (`vcpu`, `ram_mib`, `disk_gib`,
//!   `instances`, `addresses`) with the aliases HAS, Nova, Placement, Promise and ETSI write,
//!   their units, and [`dimension::amount`] reading an amount into base units
//!   ([`DimensionError`] when it cannot);
//! - [`ParseError`], carrying the input, a byte offset, what was expected and a [`ParseErrorKind`];
//!   its `Display` ends with the input and a caret under the offset.
//!
//! Grammar: `[op] number [unit]` with op one of `=`, `<`, `>`, `<=`, `>=` (default `=`), or a range
//! `low-high [unit]` without an operator (the unit may also follow the low end, or both ends if it
//! is the same). Whitespace is optional everywhere. Numbers are decimal: `0`, `250`, `1.5`, `.5`,
//! `5.` and an exponent (`1e3`) are accepted; signs, `nan` and `inf` are not.
//!
//! Invariants of every parsed [`Threshold`]: values are finite and non-negative, also once converted
//! to base units; range ends share one unit and `low <= high`; `Display` writes a string that parses
//! back to an equal threshold (with [`Threshold::parse_any`], or with [`Threshold::parse`] for the
//! same family). Nothing here panics on any input.
//!
//! ```
//! use berth_units::{Family, Quantity, Threshold, Unit};
//!
//! let t = Threshold::parse("<= 1.5 mi", Family::Distance, Unit::Km)?;
//! assert!(t.admits(&Quantity::new(2.0, Unit::Km)));
//! assert!(!t.admits(&Quantity::new(3.0, Unit::Km)));
//! assert_eq!(t.upper_bound_base(), Some((1.5 * 1.609344, true)));
//! assert_eq!(t.to_string(), "<=1.5 mi");
//!
//! // Unitless values take the property's default unit.
//! let r = Threshold::parse("10 - 20", Family::Time, Unit::Ms)?;
//! assert_eq!(r.to_string(), "10-20 ms");
//!
//! let err = Threshold::parse("<250 kms", Family::Distance, Unit::Km).unwrap_err();
//! assert_eq!(err.offset, 5);
//! assert_eq!(
//!     err.to_string(),
//!     "unknown unit `kms`; expected one of km, mi, m\n  <250 kms\n       ^"
//! );
//! # Ok::<(), berth_units::ParseError>(())
//! ```

// Modules in dependency order: each uses only those above it.
pub mod dimension;
mod error;
mod op;
mod parse;
mod quantity;
#[cfg(feature = "serde")]
mod serde_impl;
mod threshold;
mod unit;

#[cfg(test)]
mod proptests;

pub use error::{DimensionError, ParseError, ParseErrorKind};
pub use op::Op;
pub use quantity::Quantity;
pub use threshold::{PropertyUnits, REL_TOLERANCE, Threshold, compare_base};
pub use unit::{Family, Unit};
