//! Names (`assembly::NAME::VERSION`), versions and semantic-version ranges (`^1.0`, `~1.2`, `>=1.0 <2.0`).

use std::cmp::Ordering;
use std::fmt;

use crate::AssemblyError;

#[cfg(test)]
mod tests;

/// A version of up to three dot-separated numbers; missing parts count as zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version {
    /// First number.
    pub major: u64,
    /// Second number (0 if not written).
    pub minor: u64,
    /// Third number (0 if not written).
    pub patch: u64,
    /// How many parts were written (1..=3), kept so `1.0` displays as written.
    pub parts: u8,
}

impl Version {
    /// A version written with all three parts.
    pub fn new(major: u64, minor: u64, patch: u64) -> Self {
        Version {
            major,
            minor,
            patch,
            parts: 3,
        }
    }

    /// Parses `1`, `1.0` or `1.0.3`.
    pub fn parse(text: &str) -> Result<Version, AssemblyError> {
        let bad = || AssemblyError::Version {
            version: text.to_owned(),
        };
        let mut nums = [0u64; 3];
        let mut count = 0usize;
        for part in text.split('.') {
            if count == 3 || part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            nums[count] = part.parse().map_err(|_| bad())?;
            count += 1;
        }
        Ok(Version {
            major: nums[0],
            minor: nums[1],
            patch: nums[2],
            parts: u8::try_from(count).map_err(|_| bad())?,
        })
    }

    fn key(&self) -> (u64, u64, u64) {
        (self.major, self.minor, self.patch)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    // `1.0` and `1.0.0` are the same version; `parts` only affects display.
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.parts {
            1 => write!(f, "{}", self.major),
            2 => write!(f, "{}.{}", self.major, self.minor),
            _ => write!(f, "{}.{}.{}", self.major, self.minor, self.patch),
        }
    }
}

/// A comparison operator of a [`VersionReq`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// No operator or `=`: the written parts must match exactly (missing parts are zero unless
    /// a wildcard `x`/`*` stands there, which matches anything).
    Exact,
    /// `^`: compatible updates (the left-most non-zero part stays the same), as in Cargo.
    Caret,
    /// `~`: patch updates (major and minor stay the same when given).
    Tilde,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterEq,
    /// `<`.
    Less,
    /// `<=`.
    LessEq,
}

/// One comparator: an operator and a partial version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparator {
    /// The operator.
    pub op: Op,
    /// The version; parts beyond `written` are zero.
    pub version: Version,
    /// How many parts were written before any wildcard (0 for `*`).
    pub written: u8,
    /// Whether a wildcard (`x`, `*`) followed the written parts.
    pub wildcard: bool,
}

impl Comparator {
    /// Whether `v` satisfies this comparator.
    pub fn matches(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.op {
            Op::Exact if !self.wildcard => v.key() == c.key(),
            Op::Exact => match self.written {
                0 => true,
                1 => v.major == c.major,
                2 => (v.major, v.minor) == (c.major, c.minor),
                _ => v.key() == c.key(),
            },
            Op::Greater => v > c,
            Op::GreaterEq => v >= c,
            Op::Less => v < c,
            Op::LessEq => v <= c,
            Op::Tilde => {
                v >= c
                    && match self.written {
                        0 => true,
                        1 => v.major == c.major,
                        _ => (v.major, v.minor) == (c.major, c.minor),
                    }
            }
            Op::Caret => {
                v >= c
                    && match self.written {
                        0 => true,
                        1 => v.major == c.major,
                        2 if c.major > 0 => v.major == c.major,
                        2 => v.major == 0 && v.minor == c.minor,
                        _ if c.major > 0 => v.major == c.major,
                        _ if c.minor > 0 => v.major == 0 && v.minor == c.minor,
                        _ => v.key() == c.key(),
                    }
            }
        }
    }
}

/// A semantic-version range: comparators that must all hold, separated by spaces or commas.
///
/// A bare version (`1.0`) is exact, unlike Cargo where it means `^1.0`: in descriptor types
/// `resource::c_balancer::1.0` names that version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionReq {
    text: String,
    comparators: Vec<Comparator>,
}

impl VersionReq {
    /// Parses `^1.0`, `~1.2`, `>=1.0 <2.0`, `>=1.0, <2.0`, `1.x`, `*` or an exact `1.0`.
    pub fn parse(text: &str) -> Result<VersionReq, AssemblyError> {
        let bad = |reason: &str| AssemblyError::VersionRange {
            range: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut tokens: Vec<String> = Vec::new();
        let mut pending_op: Option<String> = None;
        for tok in text.split(|c: char| c == ',' || c.is_whitespace()) {
            if tok.is_empty() {
                continue;
            }
            if matches!(tok, ">=" | "<=" | ">" | "<" | "=" | "^" | "~") {
                if pending_op.is_some() {
                    return Err(bad("expected a version after each operator"));
                }
                pending_op = Some(tok.to_owned());
                continue;
            }
            match pending_op.take() {
                Some(op) => tokens.push(format!("{op}{tok}")),
                None => tokens.push(tok.to_owned()),
            }
        }
        if pending_op.is_some() {
            return Err(bad("expected a version after each operator"));
        }
        if tokens.is_empty() {
            return Err(bad("expected at least one comparator"));
        }
        let mut comparators = Vec::with_capacity(tokens.len());
        for tok in &tokens {
            comparators.push(parse_comparator(tok).map_err(|r| bad(&r))?);
        }
        Ok(VersionReq {
            text: text.trim().to_owned(),
            comparators,
        })
    }

    /// Whether `v` satisfies every comparator.
    pub fn matches(&self, v: &Version) -> bool {
        self.comparators.iter().all(|c| c.matches(v))
    }

    /// The comparators, in written order.
    pub fn comparators(&self) -> &[Comparator] {
        &self.comparators
    }

    /// The exact version if this range is one plain version without wildcards.
    pub fn as_exact(&self) -> Option<Version> {
        match self.comparators.as_slice() {
            [c] if c.op == Op::Exact && !c.wildcard => Some(c.version),
            _ => None,
        }
    }
}

impl fmt::Display for VersionReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_comparator(tok: &str) -> Result<Comparator, String> {
    let (op, rest) = [
        (">=", Op::GreaterEq),
        ("<=", Op::LessEq),
        (">", Op::Greater),
        ("<", Op::Less),
        ("=", Op::Exact),
        ("^", Op::Caret),
        ("~", Op::Tilde),
    ]
    .iter()
    .find_map(|(p, op)| tok.strip_prefix(p).map(|r| (*op, r)))
    .unwrap_or((Op::Exact, tok));
    let mut nums = [0u64; 3];
    let mut written = 0u8;
    let mut wild = false;
    for (i, part) in rest.split('.').enumerate() {
        if i == 3 {
            return Err(format!("`{tok}` has more than three parts"));
        }
        if matches!(part, "x" | "X" | "*") {
            wild = true;
            continue;
        }
        if wild {
            return Err(format!("`{tok}` has a number after a wildcard"));
        }
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "`{tok}` is not an operator (^ ~ = > >= < <=) followed by a version"
            ));
        }
        nums[usize::from(written)] = part
            .parse()
            .map_err(|_| format!("`{tok}` has a number too large"))?;
        written += 1;
    }
    if wild && !matches!(op, Op::Exact | Op::Caret | Op::Tilde) {
        return Err(format!(
            "`{tok}` uses a wildcard with a comparison operator"
        ));
    }
    Ok(Comparator {
        op,
        version: Version {
            major: nums[0],
            minor: nums[1],
            patch: nums[2],
            parts: written.max(1),
        },
        written,
        wildcard: wild,
    })
}

/// Whether the kind of a typed name is an assembly or a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TypeKind {
    /// `assembly::…`
    Assembly,
    /// `resource::…`
    Resource,
}

impl fmt::Display for TypeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TypeKind::Assembly => "assembly",
            TypeKind::Resource => "resource",
        })
    }
}

/// A typed name `KIND::NAME::VERSION` (descriptor names, component and reference types).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeRef {
    /// `assembly` or `resource`.
    pub kind: TypeKind,
    /// The name, checked against [`is_valid_name`].
    pub name: String,
    /// The version range; exact unless parsed with ranges allowed.
    pub version: VersionReq,
}

impl TypeRef {
    /// Parses `KIND::NAME::VERSION`; `allow_range` admits `^1.0` and the like (references).
    pub fn parse(
        text: &str,
        kinds: &[TypeKind],
        allow_range: bool,
    ) -> Result<TypeRef, AssemblyError> {
        let expected = kinds
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("|");
        let parts: Vec<&str> = text.trim().split("::").collect();
        let [kind, name, version] = parts.as_slice() else {
            return Err(AssemblyError::TypeShape {
                text: text.to_owned(),
                expected,
            });
        };
        let kind = match *kind {
            "assembly" => TypeKind::Assembly,
            "resource" => TypeKind::Resource,
            other => {
                return Err(AssemblyError::TypeKind {
                    kind: other.to_owned(),
                    expected: kinds
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(" or "),
                });
            }
        };
        if !kinds.contains(&kind) {
            return Err(AssemblyError::TypeKind {
                kind: kind.to_string(),
                expected: kinds
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(" or "),
            });
        }
        if !is_valid_name(name) {
            return Err(AssemblyError::Name {
                name: (*name).to_owned(),
            });
        }
        let version = if allow_range {
            VersionReq::parse(version)?
        } else {
            let v = Version::parse(version).map_err(|e| {
                // A range where an exact version is needed deserves its own message.
                if VersionReq::parse(version).is_ok() {
                    AssemblyError::RangeNotAllowed {
                        range: (*version).to_owned(),
                    }
                } else {
                    e
                }
            })?;
            VersionReq::parse(&v.to_string())?
        };
        Ok(TypeRef {
            kind,
            name: (*name).to_owned(),
            version,
        })
    }
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}::{}", self.kind, self.name, self.version)
    }
}

/// The naming rule: a letter first, then letters, digits, `_` or `-`, ending with a letter or digit.
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphabetic()
                && l.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
        }
        _ => false,
    }
}
