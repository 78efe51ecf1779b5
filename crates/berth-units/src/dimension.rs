//! Capacity dimensions: the one registry of canonical names, the aliases other systems write
//! for them, their units, and the Promise dialect's names.
//!
//! Every capacity key Berth reads (inventory `capacity`, flavor sizes, fit requests, Promise
//! bodies) goes through [`lookup`] / [`amount`], so `vcpus: 16` in an inventory and `vCPU: 8`
//! in a request name one dimension, `vcpu`. Keys match an alias ignoring ASCII case and the
//! separators `_`, `-`, `.` and space ([`fold`]): `MEMORY_MB`, `memory-mb` and `memoryMb` are
//! one alias. A key that is no alias names a dimension of its own, exactly as written.
//!
//! A bare number is in its alias's unit ([`Alias::bare`]): Nova's `ram` is MiB, HAS's
//! `Memory` GB. All byte units are binary (1 GB = 1 GiB), as OpenStack counts them.

use std::borrow::Cow;

use crate::error::DimensionError;

/// A unit of information. `KB`, `MB`, `GB`, `TB` mean the binary units, as in OpenStack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ByteUnit {
    /// A byte.
    B,
    /// 2^10 bytes.
    KiB,
    /// 2^20 bytes.
    MiB,
    /// 2^30 bytes.
    GiB,
    /// 2^40 bytes.
    TiB,
}

impl ByteUnit {
    /// Every byte unit, smallest first.
    pub const ALL: [ByteUnit; 5] = [Self::B, Self::KiB, Self::MiB, Self::GiB, Self::TiB];

    /// Bytes in one of this unit.
    pub const fn bytes(self) -> u64 {
        match self {
            Self::B => 1,
            Self::KiB => 1 << 10,
            Self::MiB => 1 << 20,
            Self::GiB => 1 << 30,
            Self::TiB => 1 << 40,
        }
    }

    /// The canonical symbol (`MiB`).
    pub const fn symbol(self) -> &'static str {
        match self {
            Self::B => "B",
            Self::KiB => "KiB",
            Self::MiB => "MiB",
            Self::GiB => "GiB",
            Self::TiB => "TiB",
        }
    }

    /// Reads a unit, ignoring case and surrounding space: `B`, `K`/`KB`/`KiB`, `M`/`MB`/`MiB`,
    /// `G`/`GB`/`GiB`, `T`/`TB`/`TiB`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_uppercase().as_str() {
            "B" => Self::B,
            "K" | "KB" | "KIB" => Self::KiB,
            "M" | "MB" | "MIB" => Self::MiB,
            "G" | "GB" | "GIB" => Self::GiB,
            "T" | "TB" | "TIB" => Self::TiB,
            _ => return None,
        })
    }
}

/// What a dimension counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Whole things (vCPUs, instances, addresses); a unit is refused.
    Count,
    /// An amount of information counted in whole base units (MiB of memory, GiB of disk).
    Bytes(ByteUnit),
}

/// One spelling of a dimension, as some system writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    /// The spelling (matched through [`fold`]).
    pub name: &'static str,
    /// Who writes it this way.
    pub source: &'static str,
    /// The unit of a number given without one; `None` for counts.
    pub bare: Option<ByteUnit>,
}

/// A registered capacity dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dimension {
    /// The canonical name: what candidates, pools and plans carry.
    pub name: &'static str,
    /// What it counts, and its base unit.
    pub measure: Measure,
    /// One line on what it is.
    pub about: &'static str,
    /// Every accepted spelling; the canonical name first.
    pub aliases: &'static [Alias],
    /// The name Promise answers carry for it, an alias whose bare unit is the base unit.
    pub promise: Option<&'static str>,
}

impl Dimension {
    /// The base unit's symbol: `MiB`, `GiB`, or `count`.
    pub fn unit(&self) -> &'static str {
        match self.measure {
            Measure::Count => "count",
            Measure::Bytes(u) => u.symbol(),
        }
    }
}

const fn count(name: &'static str, source: &'static str) -> Alias {
    Alias {
        name,
        source,
        bare: None,
    }
}

const fn bytes(name: &'static str, source: &'static str, bare: ByteUnit) -> Alias {
    Alias {
        name,
        source,
        bare: Some(bare),
    }
}

/// The registry. Canonical names are lowercase and unique; no two dimensions share a folded
/// alias (both checked by tests).
pub const DIMENSIONS: &[Dimension] = &[
    Dimension {
        name: "vcpu",
        measure: Measure::Count,
        about: "virtual CPUs",
        aliases: &[
            count("vcpu", "Berth"),
            count("vCPU", "HAS/multicloud"),
            count("VCPU", "Placement resource class"),
            count("vcpus", "Nova flavor"),
            count("vCPUs", "HAS/multicloud"),
            count("cores", "Promise, Nova quota"),
            count("cpu", "common"),
            count("cpus", "common"),
            count("numVirtualCpu", "ETSI NFV, HPA basicCapabilities"),
        ],
        promise: Some("cores"),
    },
    Dimension {
        name: "ram_mib",
        measure: Measure::Bytes(ByteUnit::MiB),
        about: "memory",
        aliases: &[
            bytes("ram_mib", "Berth", ByteUnit::MiB),
            bytes("ram", "Nova flavor, Promise", ByteUnit::MiB),
            bytes("MEMORY_MB", "Placement resource class", ByteUnit::MiB),
            bytes(
                "virtualMemSize",
                "ETSI NFV, HPA basicCapabilities",
                ByteUnit::MiB,
            ),
            bytes("Memory", "HAS/multicloud", ByteUnit::GiB),
            bytes("mem", "HAS/multicloud", ByteUnit::GiB),
        ],
        promise: Some("ram"),
    },
    Dimension {
        name: "disk_gib",
        measure: Measure::Bytes(ByteUnit::GiB),
        about: "disk",
        aliases: &[
            bytes("disk_gib", "Berth", ByteUnit::GiB),
            bytes("disk", "Nova flavor", ByteUnit::GiB),
            bytes("DISK_GB", "Placement resource class", ByteUnit::GiB),
            bytes("gigabytes", "Promise, Cinder quota", ByteUnit::GiB),
            bytes(
                "Storage",
                "HAS/multicloud, Promise storage kind",
                ByteUnit::GiB,
            ),
            bytes("sizeOfStorage", "ETSI NFV", ByteUnit::GiB),
            bytes("diskSize", "HPA basicCapabilities", ByteUnit::GiB),
        ],
        promise: Some("gigabytes"),
    },
    Dimension {
        name: "instances",
        measure: Measure::Count,
        about: "server instances",
        aliases: &[count("instances", "Berth, Promise, Nova quota")],
        promise: Some("instances"),
    },
    Dimension {
        name: "addresses",
        measure: Measure::Count,
        about: "public IP addresses",
        aliases: &[
            count("addresses", "Berth, Promise"),
            count("floating_ips", "Nova quota"),
            count("floatingip", "Neutron quota"),
        ],
        promise: Some("addresses"),
    },
];

/// The form keys are matched in: ASCII lowercase without `_`, `-`, `.` or spaces.
pub fn fold(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The registered dimension and alias `key` spells, if any.
pub fn lookup(key: &str) -> Option<(&'static Dimension, &'static Alias)> {
    let f = fold(key);
    DIMENSIONS
        .iter()
        .find_map(|d| d.aliases.iter().find(|a| fold(a.name) == f).map(|a| (d, a)))
}

/// The registered dimension named exactly `name` (a canonical name).
pub fn by_name(name: &str) -> Option<&'static Dimension> {
    DIMENSIONS.iter().find(|d| d.name == name)
}

/// The dimension `key` names: the canonical name of its alias, or `key` as written.
pub fn canonical(key: &str) -> Cow<'_, str> {
    match lookup(key) {
        Some((d, _)) => Cow::Borrowed(d.name),
        None => Cow::Borrowed(key),
    }
}

/// The canonical name for `key` when renaming keeps its numbers: `key` is an alias whose bare
/// numbers are in the dimension's base unit (`cores` -> `vcpu`, `ram` -> `ram_mib`; not
/// `Memory`, whose bare numbers are GB). For stores of plain numbers keyed by name.
pub fn rename(key: &str) -> Option<&'static str> {
    let (d, a) = lookup(key)?;
    let same = match d.measure {
        Measure::Count => true,
        Measure::Bytes(base) => a.bare == Some(base),
    };
    same.then_some(d.name)
}

/// An API dialect that answers in its own dimension names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OPNFV Promise: `cores`, `ram`, `gigabytes`, `instances`, `addresses`.
    Promise,
}

impl Dialect {
    /// The name this dialect gives the dimension `canonical`; other names unchanged. The
    /// number needs no conversion: a dialect name's bare unit is the base unit.
    pub fn name(self, canonical: &str) -> &str {
        match self {
            Dialect::Promise => by_name(canonical)
                .and_then(|d| d.promise)
                .unwrap_or(canonical),
        }
    }
}

/// How an amount that is not a whole number of base units is made one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    /// Up: a request of 1.5 GiB needs 2 GiB of a capacity counted in GiB.
    Up,
    /// Down: a capacity of 1.5 GiB offers 1 whole GiB.
    Down,
}

/// An amount as written, before its dimension's units apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raw<'a> {
    /// A number, as decimal text (`16`, `1.5`, `1e3`).
    Number(&'a str),
    /// A string: a number, optionally followed by a unit (`"16"`, `"16 GB"`).
    Text(&'a str),
    /// `{quantity, unit}` (HAS/multicloud); the quantity as text.
    Quantity {
        /// The number.
        quantity: &'a str,
        /// The unit, if given.
        unit: Option<&'a str>,
    },
}

impl std::fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Raw::Number(n) => f.write_str(n),
            Raw::Text(s) => write!(f, "\"{s}\""),
            Raw::Quantity { quantity, unit } => match unit {
                Some(u) => write!(f, "{{quantity: {quantity}, unit: {u}}}"),
                None => write!(f, "{{quantity: {quantity}}}"),
            },
        }
    }
}

/// One amount in its dimension's base unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    /// The dimension (canonical, or the key as written).
    pub dimension: String,
    /// The amount in base units, at most `i64::MAX`.
    pub value: u64,
    /// Whether `value` is the amount exactly (false: it was rounded).
    pub exact: bool,
}

/// What a well-formed amount of `key` looks like, for messages.
pub fn expected(key: &str) -> String {
    match lookup(key).map(|(d, a)| (d.measure, a.bare)) {
        Some((Measure::Bytes(_), Some(bare))) => format!(
            "a non-negative amount: a number ({}), `16 GB`, or {{quantity: 16, unit: GB}}",
            bare.symbol()
        ),
        _ => "a non-negative integer amount".to_owned(),
    }
}

/// Reads one amount of `key` into its dimension's base unit: counts must be whole, memory
/// and disk take a unit (bare numbers are in the alias's unit), `round` settles fractions.
pub fn amount(key: &str, raw: Raw<'_>, round: Round) -> Result<Amount, DimensionError> {
    let found = raw.to_string();
    let bad = || DimensionError::NotAnAmount {
        key: key.to_owned(),
        found: found.clone(),
        expected: expected(key),
    };
    let (qty, unit) = match raw {
        Raw::Number(n) => (n.trim(), None),
        Raw::Text(s) => {
            let s = s.trim();
            let split = s
                .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
                .unwrap_or(s.len());
            let (q, u) = s.split_at(split);
            (q.trim(), Some(u.trim()).filter(|u| !u.is_empty()))
        }
        Raw::Quantity { quantity, unit } => (
            quantity.trim(),
            unit.map(str::trim).filter(|u| !u.is_empty()),
        ),
    };
    let (digits, exp) = decimal(qty).ok_or_else(bad)?;
    let found_dim = lookup(key);
    let dimension = found_dim.map_or_else(|| key.to_owned(), |(d, _)| d.name.to_owned());
    // (numerator, denominator) from the written unit to the base unit.
    let (num, den) = match (found_dim, unit) {
        (Some((d, a)), u) => match (d.measure, u) {
            (Measure::Count, None) => (1, 1),
            (Measure::Count, Some(u)) => {
                return Err(DimensionError::UnitOnCount {
                    key: key.to_owned(),
                    unit: u.to_owned(),
                });
            }
            (Measure::Bytes(base), None) => (a.bare.unwrap_or(base).bytes(), base.bytes()),
            (Measure::Bytes(base), Some(u)) => {
                let per = ByteUnit::parse(u).ok_or_else(|| DimensionError::UnknownUnit {
                    key: key.to_owned(),
                    unit: u.to_owned(),
                })?;
                (per.bytes(), base.bytes())
            }
        },
        (None, None) => (1, 1),
        (None, Some(u)) => {
            return Err(DimensionError::UnitOnCount {
                key: key.to_owned(),
                unit: u.to_owned(),
            });
        }
    };
    let counts = found_dim.is_none_or(|(d, _)| d.measure == Measure::Count);
    if counts && !whole(digits, exp) {
        return Err(bad());
    }
    let (value, exact) =
        scaled(digits, exp, num, den, round).ok_or_else(|| DimensionError::TooLarge {
            key: key.to_owned(),
            found: found.clone(),
        })?;
    Ok(Amount {
        dimension,
        value,
        exact,
    })
}

/// An exact non-negative decimal: `digits * 10^exp`. Signs other than `+`, `nan`, `inf` and
/// more than 30 digits are refused.
fn decimal(text: &str) -> Option<(u128, i32)> {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let mant = mant.strip_prefix('+').unwrap_or(mant);
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        || int.len() + frac.len() > 30
    {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let frac_len = i32::try_from(frac.len()).ok()?;
    Some((digits, exp.checked_sub(frac_len)?))
}

/// Whether `digits * 10^exp` is an integer.
fn whole(digits: u128, exp: i32) -> bool {
    if exp >= 0 || digits == 0 {
        return true;
    }
    match 10u128.checked_pow(exp.unsigned_abs()) {
        Some(p) => digits.is_multiple_of(p),
        // A divisor above u128: only zero is whole, handled above.
        None => false,
    }
}

/// `digits * 10^exp * num / den` rounded as asked, when it fits an `i64`; with whether it
/// was exact.
fn scaled(digits: u128, exp: i32, num: u64, den: u64, round: Round) -> Option<(u64, bool)> {
    if digits == 0 {
        return Some((0, true));
    }
    let mut n = digits.checked_mul(u128::from(num))?;
    let mut d = u128::from(den);
    if exp >= 0 {
        n = n.checked_mul(10u128.checked_pow(exp.unsigned_abs())?)?;
    } else {
        match 10u128.checked_pow(exp.unsigned_abs()) {
            Some(p) => d = d.checked_mul(p)?,
            // Below one part in 10^38 of a base unit.
            None => return Some((u64::from(round == Round::Up), false)),
        }
    }
    let exact = n.is_multiple_of(d);
    let v = match round {
        Round::Up => n.div_ceil(d),
        Round::Down => n / d,
    };
    let v = u64::try_from(v)
        .ok()
        .filter(|v| i64::try_from(*v).is_ok())?;
    Some((v, exact))
}

/// Optimal string alignment distance (adjacent transpositions count one), in characters;
/// inputs are cut at 64 characters to bound the work.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The name `key` most likely meant, among the registry's names and `others` (e.g. the
/// dimensions requests use): the nearest in folded form, within one edit per three
/// characters (at least one); keys of three characters or fewer only when they fold to the
/// same name (`GPU` is not `cpu`). Ties go to `others` (names in use), then canonical names,
/// then aliases.
pub fn suggest<'a>(key: &str, others: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let f = fold(key);
    let len = f.chars().count();
    let limit = if len <= 3 { 0 } else { (len / 3).max(1) };
    let names = DIMENSIONS
        .iter()
        .map(|d| (1u8, d.name))
        .chain(
            DIMENSIONS
                .iter()
                .flat_map(|d| d.aliases.iter().map(|a| (2u8, a.name))),
        )
        .chain(others.into_iter().take(2_000).map(|o| (0u8, o)));
    names
        .filter(|(_, n)| *n != key)
        .map(|(rank, n)| (distance(&f, &fold(n)), rank, n))
        .filter(|(d, _, _)| *d <= limit)
        .min()
        .map(|(_, _, n)| n.to_owned())
}

#[cfg(test)]
mod tests;
