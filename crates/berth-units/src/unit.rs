//! Unit families and units with their exact factors to the base unit: plain data, no parsing.

use std::fmt;

/// A family of commensurable units; each has one base unit that values are compared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Base unit km; also m and mi.
    Distance,
    /// Base unit ms; also sec (`s`) and min.
    Time,
    /// Base unit Mbps; also bps, Kbps, Gbps and Tbps.
    Throughput,
    /// Base unit USD.
    Currency,
    /// Plain numbers without a unit (counts, ratios); the only unit is [`Unit::One`].
    Dimensionless,
}

impl Family {
    /// Every family, in declaration order.
    pub const ALL: [Family; 5] = [
        Family::Distance,
        Family::Time,
        Family::Throughput,
        Family::Currency,
        Family::Dimensionless,
    ];

    /// The unit values of this family are compared in (also the seed's default unit).
    pub const fn base_unit(self) -> Unit {
        match self {
            Family::Distance => Unit::Km,
            Family::Time => Unit::Ms,
            Family::Throughput => Unit::Mbps,
            Family::Currency => Unit::Usd,
            Family::Dimensionless => Unit::One,
        }
    }

    /// The units of this family, base unit first.
    pub const fn units(self) -> &'static [Unit] {
        match self {
            Family::Distance => &[Unit::Km, Unit::Mi, Unit::M],
            Family::Time => &[Unit::Ms, Unit::Sec, Unit::Min],
            Family::Throughput => &[Unit::Mbps, Unit::Kbps, Unit::Gbps, Unit::Bps, Unit::Tbps],
            Family::Currency => &[Unit::Usd],
            Family::Dimensionless => &[Unit::One],
        }
    }

    /// Lowercase name, as shown by `Display`.
    pub const fn name(self) -> &'static str {
        match self {
            Family::Distance => "distance",
            Family::Time => "time",
            Family::Throughput => "throughput",
            Family::Currency => "currency",
            Family::Dimensionless => "dimensionless",
        }
    }

    /// "one of km, mi, m" (or "no unit" for dimensionless); used in error messages.
    pub(crate) fn expected_units(self) -> String {
        if self == Family::Dimensionless {
            return "no unit".to_owned();
        }
        let symbols: Vec<&str> = self.units().iter().map(|u| u.symbol()).collect();
        format!("one of {}", symbols.join(", "))
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A unit of measure. Parsing is case-insensitive; [`Unit::symbol`] is the canonical spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unit {
    /// Metre.
    M,
    /// Kilometre (distance base).
    Km,
    /// International mile, exactly 1.609344 km.
    Mi,
    /// Millisecond (time base).
    Ms,
    /// Second; also spelled `s`.
    Sec,
    /// Minute.
    Min,
    /// Bits per second.
    Bps,
    /// Kilobits per second (10^3 bps).
    Kbps,
    /// Megabits per second (throughput base).
    Mbps,
    /// Gigabits per second.
    Gbps,
    /// Terabits per second.
    Tbps,
    /// US dollar (currency base).
    Usd,
    /// The unit of a plain number; its symbol is empty.
    One,
}

impl Unit {
    /// Every unit, in declaration order.
    pub const ALL: [Unit; 13] = [
        Unit::M,
        Unit::Km,
        Unit::Mi,
        Unit::Ms,
        Unit::Sec,
        Unit::Min,
        Unit::Bps,
        Unit::Kbps,
        Unit::Mbps,
        Unit::Gbps,
        Unit::Tbps,
        Unit::Usd,
        Unit::One,
    ];

    /// The family this unit measures.
    pub const fn family(self) -> Family {
        match self {
            Unit::M | Unit::Km | Unit::Mi => Family::Distance,
            Unit::Ms | Unit::Sec | Unit::Min => Family::Time,
            Unit::Bps | Unit::Kbps | Unit::Mbps | Unit::Gbps | Unit::Tbps => Family::Throughput,
            Unit::Usd => Family::Currency,
            Unit::One => Family::Dimensionless,
        }
    }

    /// How many base units (km, ms, Mbps, USD, 1) one of this unit is.
    pub const fn to_base_factor(self) -> f64 {
        match self {
            Unit::M => 0.001,
            Unit::Km | Unit::Ms | Unit::Mbps | Unit::Usd | Unit::One => 1.0,
            Unit::Mi => 1.609_344,
            Unit::Sec => 1_000.0,
            Unit::Min => 60_000.0,
            Unit::Bps => 0.000_001,
            Unit::Kbps => 0.001,
            Unit::Gbps => 1_000.0,
            Unit::Tbps => 1_000_000.0,
        }
    }

    /// Canonical spelling: m, km, mi, ms, sec, min, bps, Kbps, Mbps, Gbps, Tbps, USD (and "" for [`Unit::One`]).
    pub const fn symbol(self) -> &'static str {
        match self {
            Unit::M => "m",
            Unit::Km => "km",
            Unit::Mi => "mi",
            Unit::Ms => "ms",
            Unit::Sec => "sec",
            Unit::Min => "min",
            Unit::Bps => "bps",
            Unit::Kbps => "Kbps",
            Unit::Mbps => "Mbps",
            Unit::Gbps => "Gbps",
            Unit::Tbps => "Tbps",
            Unit::Usd => "USD",
            Unit::One => "",
        }
    }

    /// Look a unit word up, ignoring ASCII case. Accepts the symbols and `s` for seconds.
    pub fn lookup(word: &str) -> Option<Unit> {
        let found = Unit::ALL
            .into_iter()
            .find(|u| *u != Unit::One && u.symbol().eq_ignore_ascii_case(word));
        found.or_else(|| word.eq_ignore_ascii_case("s").then_some(Unit::Sec))
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

#[cfg(test)]
mod tests;
