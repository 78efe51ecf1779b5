//! The threshold grammar, with nom for tokens and hand-made errors carrying byte offsets.
//!
//! ```text
//! threshold := ws ( op ws value | value ( ws '-' ws value )? ) ws EOF
//! value     := number ws unit?
//! op        := '<=' | '>=' | '<' | '>' | '='
//! number    := ( digits ( '.' digits? )? | '.' digits ) ( [eE] [+-]? digits )?
//! unit      := ASCII letters, looked up case-insensitively
//! ```

use std::str::FromStr;

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::{alpha1, char, digit1, multispace0, one_of};
use nom::combinator::{opt, recognize, value};
use nom::{IResult, Parser};

use crate::error::{ParseError, ParseErrorKind};
use crate::op::Op;
use crate::quantity::Quantity;
use crate::threshold::{PropertyUnits, Threshold};
use crate::unit::{Family, Unit};

fn op(i: &str) -> IResult<&str, Op> {
    alt((
        value(Op::Le, tag("<=")),
        value(Op::Ge, tag(">=")),
        value(Op::Lt, tag("<")),
        value(Op::Gt, tag(">")),
        value(Op::Eq, tag("=")),
    ))
    .parse(i)
}

fn number(i: &str) -> IResult<&str, &str> {
    // `opt(digit1)`, not `digit0`: in nom 8.0.0 a `*0` parser that consumes to the end of input
    // makes `recognize` return a short slice (rust-bakery/nom#1808, #1876).
    let mantissa = alt((
        recognize((digit1, opt((char('.'), opt(digit1))))),
        recognize((char('.'), digit1)),
    ));
    recognize((mantissa, opt((one_of("eE"), opt(one_of("+-")), digit1)))).parse(i)
}

/// Consumes optional whitespace; cannot fail.
fn ws(i: &str) -> &str {
    let parsed: IResult<&str, &str> = multispace0(i);
    parsed.map_or(i, |(rest, _)| rest)
}

/// The word or single character at the start of `rest`, for "unexpected `...`" messages.
fn token(rest: &str) -> String {
    let word: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .take(24)
        .collect();
    if word.is_empty() {
        // A control character would garble the message line.
        rest.chars()
            .next()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().collect()
                } else {
                    String::from(c)
                }
            })
            .unwrap_or_default()
    } else {
        word
    }
}

/// A value as written: its number and, if present, its unit and where the unit starts.
struct Written<'a> {
    number: f64,
    unit: Option<Unit>,
    unit_at: &'a str,
}

/// Parsing state: the whole input, the family constraint and the default unit.
struct Cursor<'a> {
    input: &'a str,
    family: Option<Family>,
    default_unit: Unit,
}

impl<'a> Cursor<'a> {
    fn offset(&self, rest: &str) -> usize {
        self.input.len() - rest.len()
    }

    fn error(&self, rest: &str, expected: impl Into<String>, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.input, self.offset(rest), expected, kind)
    }

    /// An error for whatever is at `rest` (end of input or an unexpected token).
    fn unexpected(&self, rest: &str, expected: impl Into<String>) -> ParseError {
        let kind = if rest.is_empty() {
            ParseErrorKind::UnexpectedEnd
        } else {
            ParseErrorKind::Unexpected { found: token(rest) }
        };
        self.error(rest, expected, kind)
    }

    /// A non-negative finite number.
    fn number(&self, i: &'a str) -> Result<(&'a str, f64), ParseError> {
        if i.starts_with('-') {
            return Err(self.error(i, "a number >= 0", ParseErrorKind::Negative));
        }
        let (rest, text) = number(i).map_err(|_| self.unexpected(i, "a number"))?;
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok((rest, v)),
            _ => Err(self.error(i, "a finite number", ParseErrorKind::OutOfRange)),
        }
    }

    /// An optional unit word, checked against the family.
    fn unit(&self, i: &'a str) -> Result<(&'a str, Option<Unit>), ParseError> {
        let parsed: IResult<&str, &str> = alpha1(i);
        let Ok((rest, word)) = parsed else {
            return Ok((i, None));
        };
        // Built only on error: formatting the unit list costs more than the whole parse.
        let expected = || match self.family {
            Some(family) => family.expected_units(),
            None => {
                let all: Vec<&str> = Unit::ALL
                    .iter()
                    .filter(|u| **u != Unit::One)
                    .map(|u| u.symbol())
                    .collect();
                format!("one of {}", all.join(", "))
            }
        };
        let Some(unit) = Unit::lookup(word) else {
            let kind = ParseErrorKind::UnknownUnit {
                unit: word.to_owned(),
            };
            return Err(self.error(i, expected(), kind));
        };
        if let Some(family) = self.family.filter(|f| *f != unit.family()) {
            let kind = ParseErrorKind::WrongFamily {
                unit,
                expected: family,
            };
            return Err(self.error(i, expected(), kind));
        }
        Ok((rest, Some(unit)))
    }

    /// `number ws unit?`.
    fn value(&self, i: &'a str) -> Result<(&'a str, Written<'a>), ParseError> {
        let (rest, number) = self.number(i)?;
        let unit_at = ws(rest);
        let (rest, unit) = self.unit(unit_at)?;
        Ok((
            rest,
            Written {
                number,
                unit,
                unit_at,
            },
        ))
    }

    /// Require the end of input after optional whitespace.
    fn end(&self, i: &'a str, expected: &str) -> Result<(), ParseError> {
        let rest = ws(i);
        if rest.is_empty() {
            Ok(())
        } else {
            Err(self.unexpected(rest, expected))
        }
    }

    /// A quantity with its checks (finite in base units too).
    fn quantity(&self, start: &str, v: f64, unit: Unit) -> Result<Quantity, ParseError> {
        let q = Quantity::new(v, unit);
        if q.in_base().is_finite() {
            Ok(q)
        } else {
            let expected = format!(
                "a number whose value in {} is finite",
                unit.family().base_unit()
            );
            Err(self.error(start, expected, ParseErrorKind::OutOfRange))
        }
    }

    fn threshold(&self) -> Result<Threshold, ParseError> {
        let i = ws(self.input);
        if i.is_empty() {
            return Err(self.error(
                i,
                "a threshold such as `<250 km` or `10-20 km`",
                ParseErrorKind::Empty,
            ));
        }
        let (i, written_op) = match op(i) {
            Ok((rest, o)) => (ws(rest), Some((o, i))),
            Err(_) => (i, None),
        };
        let start = i;
        let (i, low) = self.value(i)?;
        let unit = low.unit;
        let after_value = ws(i);
        if let Some(dash) = after_value.strip_prefix('-') {
            if let Some((o, at)) = written_op {
                let kind = ParseErrorKind::OperatorWithRange { op: o };
                return Err(self.error(at, "a single value after an operator", kind));
            }
            return self.range(start, &low, ws(dash));
        }
        let expected = match (unit, written_op) {
            (None, None) => "a unit, `-` or end of input",
            (None, Some(_)) => "a unit or end of input",
            (Some(_), None) => "`-` or end of input",
            (Some(_), Some(_)) => "end of input",
        };
        self.end(after_value, expected)?;
        let q = self.quantity(start, low.number, unit.unwrap_or(self.default_unit))?;
        Ok(Threshold::Compare {
            op: written_op.map_or(Op::Eq, |(o, _)| o),
            value: q,
        })
    }

    fn range(
        &self,
        low_start: &'a str,
        low: &Written<'a>,
        i: &'a str,
    ) -> Result<Threshold, ParseError> {
        let high_start = i;
        let (i, high) = self.value(i)?;
        let expected = if high.unit.is_some() {
            "end of input"
        } else {
            "a unit or end of input"
        };
        self.end(i, expected)?;
        let unit = match (low.unit, high.unit) {
            (Some(l), Some(h)) if l != h => {
                // Point at the high end's unit: it is the one that disagrees.
                let kind = ParseErrorKind::MixedUnits { low: l, high: h };
                return Err(self.error(high.unit_at, format!("`{l}` as on the low end"), kind));
            }
            (Some(u), _) | (None, Some(u)) => u,
            (None, None) => self.default_unit,
        };
        let (low, high) = (low.number, high.number);
        if low > high {
            let kind = ParseErrorKind::ReversedRange { low, high };
            return Err(self.error(low_start, "low end <= high end", kind));
        }
        let low = self.quantity(low_start, low, unit)?;
        let high = self.quantity(high_start, high, unit)?;
        Ok(Threshold::Range { low, high })
    }
}

/// Parse a threshold; `family: None` infers it from the unit (unitless values use `default_unit`).
pub(crate) fn threshold(
    input: &str,
    family: Option<Family>,
    default_unit: Unit,
) -> Result<Threshold, ParseError> {
    Cursor {
        input,
        family,
        default_unit,
    }
    .threshold()
}

/// Parse `number [unit]` (no operator, no range).
pub(crate) fn quantity(input: &str) -> Result<Quantity, ParseError> {
    let cursor = Cursor {
        input,
        family: None,
        default_unit: Unit::One,
    };
    let i = ws(input);
    let (rest, written) = cursor.value(i)?;
    let expected = if written.unit.is_some() {
        "end of input"
    } else {
        "a unit or end of input"
    };
    cursor.end(rest, expected)?;
    cursor.quantity(i, written.number, written.unit.unwrap_or(Unit::One))
}

// Text entry points of the value types live here, so the types themselves never call the parser.

impl PropertyUnits {
    /// Parse a threshold string for this property.
    pub fn parse(&self, input: &str) -> Result<Threshold, ParseError> {
        Threshold::parse(input, self.family, self.default_unit)
    }
}

impl Threshold {
    /// Parse `[op] number [unit]` or `low-high [unit]` for a property of `family`; values
    /// without a unit are in `default_unit`, which must belong to `family`.
    pub fn parse(input: &str, family: Family, default_unit: Unit) -> Result<Threshold, ParseError> {
        if default_unit.family() != family {
            return Err(ParseError::new(
                input,
                0,
                format!("a default unit of {family}"),
                ParseErrorKind::DefaultUnitMismatch {
                    unit: default_unit,
                    family,
                },
            ));
        }
        threshold(input, Some(family), default_unit)
    }

    /// Parse a threshold whose family is inferred from its unit; without a unit the value is
    /// dimensionless ([`Unit::One`]).
    pub fn parse_any(input: &str) -> Result<Threshold, ParseError> {
        threshold(input, None, Unit::One)
    }
}

impl FromStr for Threshold {
    type Err = ParseError;

    /// Same as [`Threshold::parse_any`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Threshold::parse_any(s)
    }
}

impl FromStr for Unit {
    type Err = ParseError;

    /// Parse a unit word (surrounding whitespace allowed). The empty string is not a unit.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let start = s.len() - s.trim_start().len();
        let word = s.trim();
        Unit::lookup(word).ok_or_else(|| {
            let all: Vec<&str> = Unit::ALL
                .iter()
                .filter(|u| **u != Unit::One)
                .map(|u| u.symbol())
                .collect();
            let kind = if word.is_empty() {
                ParseErrorKind::UnexpectedEnd
            } else {
                ParseErrorKind::UnknownUnit {
                    unit: word.to_owned(),
                }
            };
            ParseError::new(s, start, format!("one of {}", all.join(", ")), kind)
        })
    }
}

impl FromStr for Quantity {
    type Err = ParseError;

    /// `number [unit]`, no operator; the family is inferred from the unit.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        quantity(s)
    }
}

#[cfg(test)]
mod tests;
