//! Identifiers, dimensions, amounts, priorities and windows shared by records and commands.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

macro_rules! number_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

number_id!(
    /// Identifier of a reservation, assigned by the calendar in creation order (`r1`, `r2`, ...).
    ReservationId,
    "r"
);
number_id!(
    /// Identifier of an allocation (an instance), assigned in creation order (`a1`, ...).
    AllocationId,
    "a"
);
number_id!(
    /// Identifier of a capacity-threshold subscription (`s1`, ...).
    SubscriptionId,
    "s"
);

macro_rules! name_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// Wraps a name.
            pub fn new(name: impl Into<String>) -> Self {
                Self(name.into())
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }
    };
}

name_id!(
    /// An availability zone.
    ZoneId
);
name_id!(
    /// A resource provider (for example one OpenStack region) feeding pools.
    ProviderId
);
name_id!(
    /// Owner of a reservation.
    TenantId
);
name_id!(
    /// A pre-existing resource element (server, network, image...) a reservation protects.
    ElementId
);
/// A resource dimension, named as the dimension registry (`berth_units::dimension`) names it:
/// `vcpu`, `ram_mib`, `disk_gib`, `instances`, `addresses`, or any other name as written.
///
/// [`Dimension::new`], `From<&str>` and deserialization map every alias whose plain numbers
/// are in the dimension's base unit to the canonical name (`cores` is `vcpu`, `ram` is
/// `ram_mib`, `gigabytes` is `disk_gib`), so a pool seeded from an inventory and a Promise
/// request name one dimension, and logs written with Promise's names replay to the same
/// dimensions. Callers that read amounts with units (HAS's `Memory` in GB) convert through
/// `berth_units::dimension::amount` first. Building `Dimension(..)` directly skips this.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Dimension(pub String);

impl Dimension {
    /// The dimension `name` stands for (canonical for registry aliases that keep numbers).
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        match berth_units::dimension::rename(&name) {
            Some(c) if c != name => Self(c.to_owned()),
            _ => Self(name),
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Virtual CPUs (Promise's `cores`).
    pub fn vcpu() -> Self {
        Self::new("vcpu")
    }
    /// Memory in MiB (Promise's `ram`).
    pub fn ram_mib() -> Self {
        Self::new("ram_mib")
    }
    /// Disk in GiB (Promise's `gigabytes`).
    pub fn disk_gib() -> Self {
        Self::new("disk_gib")
    }
    /// Server instances.
    pub fn instances() -> Self {
        Self::new("instances")
    }
    /// Public addresses.
    pub fn addresses() -> Self {
        Self::new("addresses")
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Dimension {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl<'de> Deserialize<'de> for Dimension {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Self::new)
    }
}

/// A pool: the capacity one provider offers in one zone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PoolKey {
    /// Zone of the pool.
    pub zone: ZoneId,
    /// Provider of the pool.
    pub provider: ProviderId,
}

impl PoolKey {
    /// Builds a pool key.
    pub fn new(zone: impl Into<String>, provider: impl Into<String>) -> Self {
        PoolKey {
            zone: ZoneId(zone.into()),
            provider: ProviderId(provider.into()),
        }
    }
}

impl fmt::Display for PoolKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.zone, self.provider)
    }
}

/// Integer quantities per dimension. Zero entries are dropped when a request is admitted.
/// Deserializing adds up keys that name one dimension (`cores` and `vcpu` in an old log).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Amounts(pub BTreeMap<Dimension, u64>);

impl<'de> Deserialize<'de> for Amounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: Vec<(String, u64)> = d.deserialize_map(Pairs)?;
        let mut out = BTreeMap::new();
        for (k, q) in raw {
            let slot: &mut u64 = out.entry(Dimension::new(k)).or_default();
            *slot = slot.saturating_add(q);
        }
        Ok(Amounts(out))
    }
}

/// A map's entries in order, keys as written.
struct Pairs;

impl<'de> serde::de::Visitor<'de> for Pairs {
    type Value = Vec<(String, u64)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of dimension names to non-negative integers")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(e) = m.next_entry::<String, u64>()? {
            out.push(e);
        }
        Ok(out)
    }
}

impl Amounts {
    /// No quantities.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builder: sets `dim` (through [`Dimension::new`]) to `q`.
    pub fn with(mut self, dim: impl Into<String>, q: u64) -> Self {
        self.0.insert(Dimension::new(dim), q);
        self
    }

    /// Sets `dim` to `q`.
    pub fn set(&mut self, dim: Dimension, q: u64) {
        self.0.insert(dim, q);
    }

    /// Quantity of `dim` (0 when absent); `dim` may be an alias (`cores`).
    pub fn get(&self, dim: &str) -> u64 {
        self.0.get(&Dimension::new(dim)).copied().unwrap_or(0)
    }

    /// Entries in dimension order.
    pub fn iter(&self) -> impl Iterator<Item = (&Dimension, &u64)> {
        self.0.iter()
    }

    /// True when no dimension has a positive quantity.
    pub fn is_zero(&self) -> bool {
        self.0.values().all(|q| *q == 0)
    }

    /// The Promise capacity vector: cores, ram (MiB), instances, addresses.
    pub fn promise(cores: u64, ram: u64, instances: u64, addresses: u64) -> Self {
        Amounts::new()
            .with("vcpu", cores)
            .with("ram_mib", ram)
            .with("instances", instances)
            .with("addresses", addresses)
    }
}

impl FromIterator<(Dimension, u64)> for Amounts {
    fn from_iter<I: IntoIterator<Item = (Dimension, u64)>>(iter: I) -> Self {
        Amounts(iter.into_iter().collect())
    }
}

/// Priority of reservations and allocations (seed 001 §3.1.4). Ordered `Low < Normal < High`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Best effort; Promise's label for allocations without reservation.
    Low,
    /// The default for reservations.
    #[default]
    Normal,
    /// Promise's label for allocations drawn from a reservation.
    High,
}

/// A half-open time window `[start, end)`; `end: None` means open-ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// First instant inside.
    pub start: DateTime<Utc>,
    /// First instant after the window; `None` for no end.
    pub end: Option<DateTime<Utc>>,
}

impl Window {
    /// `[start, end)`.
    pub fn new(start: DateTime<Utc>, end: DateTime<Utc>) -> Self {
        Window {
            start,
            end: Some(end),
        }
    }

    /// `[start, ∞)`.
    pub fn open(start: DateTime<Utc>) -> Self {
        Window { start, end: None }
    }
}
