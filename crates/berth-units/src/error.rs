//! The crate's error: what went wrong, where (byte offset) and what was expected.

use std::fmt;

use crate::op::Op;
use crate::unit::{Family, Unit};

/// A threshold, quantity or unit that could not be parsed or converted.
///
/// `Display` shows `"{kind}; expected {expected}"`, then the input and a caret under `offset`:
///
/// ```text
/// unknown unit `kms`; expected one of km, mi, m
///   <250 kms
///        ^
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
#[error("{}\n{}", self.message(), caret_lines(&self.input, self.offset))]
pub struct ParseError {
    /// The whole text that was parsed.
    pub input: String,
    /// Byte offset into `input` where the problem is (`input.len()` for "end of input").
    pub offset: usize,
    /// What was expected at `offset`, e.g. "one of km, mi, m" or "a number".
    pub expected: String,
    /// What was found wrong.
    pub kind: ParseErrorKind,
}

impl ParseError {
    pub(crate) fn new(
        input: impl Into<String>,
        offset: usize,
        expected: impl Into<String>,
        kind: ParseErrorKind,
    ) -> Self {
        ParseError {
            input: input.into(),
            offset,
            expected: expected.into(),
            kind,
        }
    }

    /// The one-line message without the caret lines, for callers that show position themselves.
    pub fn message(&self) -> String {
        format!("{}; expected {}", self.kind, self.expected)
    }
}

/// What went wrong in a [`ParseError`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The input is empty or only whitespace.
    Empty,
    /// The input ended where more was needed.
    UnexpectedEnd,
    /// Something other than what the grammar allows here; `found` is the offending token.
    Unexpected {
        /// The token found (a word or a single character).
        found: String,
    },
    /// A value with a minus sign.
    Negative,
    /// A number too large to represent, or NaN/infinite, or infinite once in base units.
    OutOfRange,
    /// A word that is no unit at all (of the family, for property parses).
    UnknownUnit {
        /// The word as written.
        unit: String,
    },
    /// A known unit of a family other than the property's.
    WrongFamily {
        /// The unit found.
        unit: Unit,
        /// The family the property takes.
        expected: Family,
    },
    /// The property's default unit is not of the property's family (a caller bug).
    DefaultUnitMismatch {
        /// The default unit given.
        unit: Unit,
        /// The family given.
        family: Family,
    },
    /// The two ends of a range carry different units.
    MixedUnits {
        /// Unit after the low end.
        low: Unit,
        /// Unit after the high end.
        high: Unit,
    },
    /// A range whose low end is above its high end.
    ReversedRange {
        /// Low end as written.
        low: f64,
        /// High end as written.
        high: f64,
    },
    /// A comparison operator before a range.
    OperatorWithRange {
        /// The operator written.
        op: Op,
    },
    /// A conversion between units of different families.
    IncompatibleUnits {
        /// Unit converted from.
        from: Unit,
        /// Unit asked for.
        to: Unit,
    },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Empty => f.write_str("empty threshold"),
            ParseErrorKind::UnexpectedEnd => f.write_str("unexpected end of input"),
            ParseErrorKind::Unexpected { found } => write!(f, "unexpected `{found}`"),
            ParseErrorKind::Negative => f.write_str("negative values are not allowed"),
            ParseErrorKind::OutOfRange => f.write_str("number out of range"),
            ParseErrorKind::UnknownUnit { unit } => write!(f, "unknown unit `{unit}`"),
            ParseErrorKind::WrongFamily { unit, expected } => write!(
                f,
                "unit `{unit}` is a {} unit but a {expected} value is required",
                unit.family()
            ),
            ParseErrorKind::DefaultUnitMismatch { unit, family } => write!(
                f,
                "default unit `{unit}` is a {} unit, not a {family} unit",
                unit.family()
            ),
            ParseErrorKind::MixedUnits { low, high } => {
                write!(f, "range ends have different units `{low}` and `{high}`")
            }
            ParseErrorKind::ReversedRange { low, high } => {
                write!(f, "range low end {low} is above its high end {high}")
            }
            ParseErrorKind::OperatorWithRange { op } => {
                write!(f, "operator `{op}` cannot be used with a range")
            }
            ParseErrorKind::IncompatibleUnits { from, to } => write!(
                f,
                "cannot convert {} unit `{from}` to {} unit `{to}`",
                from.family(),
                to.family()
            ),
        }
    }
}

/// Two lines: the input (control characters escaped) and a caret under `offset`, both indented 2.
fn caret_lines(input: &str, offset: usize) -> String {
    let mut line = String::with_capacity(input.len() + 2);
    let mut column = 0;
    line.push_str("  ");
    for (at, c) in input.char_indices() {
        let start = line.len();
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
        if at < offset {
            column += line[start..].chars().count();
        }
    }
    format!("{line}\n  {}^", " ".repeat(column))
}

/// A capacity amount that cannot be read into its dimension's base unit (see
/// [`crate::dimension::amount`]). Each names the key as written (or, after
/// [`DimensionError::with_key`], as the caller names the field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DimensionError {
    /// Not a non-negative number (or, for a count, not a whole one).
    #[error("`{key}` is {found}; expected {expected}")]
    NotAnAmount {
        /// The key as written.
        key: String,
        /// The amount as written.
        found: String,
        /// What would have been read.
        expected: String,
    },
    /// A unit on a count.
    #[error("`{key}` has unit `{unit}`; expected a plain count (units apply to memory and disk)")]
    UnitOnCount {
        /// The key as written.
        key: String,
        /// The unit as written.
        unit: String,
    },
    /// A unit that is no unit of information.
    #[error(
        "`{key}` has unknown unit `{unit}`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)"
    )]
    UnknownUnit {
        /// The key as written.
        key: String,
        /// The unit as written.
        unit: String,
    },
    /// More than `i64::MAX` base units.
    #[error("`{key}` is {found}; the amount is too large")]
    TooLarge {
        /// The key as written.
        key: String,
        /// The amount as written.
        found: String,
    },
    /// Two keys of one map naming one dimension.
    #[error("`{first}` and `{second}` both name dimension `{dimension}`; expected one of them")]
    Duplicate {
        /// The key met first.
        first: String,
        /// The key met second.
        second: String,
        /// The dimension both name.
        dimension: String,
    },
}

impl DimensionError {
    /// The same error naming the key as `key` (a field path such as `capacity.cores`).
    pub fn with_key(self, key: impl Into<String>) -> Self {
        let key = key.into();
        match self {
            Self::NotAnAmount {
                found, expected, ..
            } => Self::NotAnAmount {
                key,
                found,
                expected,
            },
            Self::UnitOnCount { unit, .. } => Self::UnitOnCount { key, unit },
            Self::UnknownUnit { unit, .. } => Self::UnknownUnit { key, unit },
            Self::TooLarge { found, .. } => Self::TooLarge { key, found },
            d @ Self::Duplicate { .. } => d,
        }
    }
}
