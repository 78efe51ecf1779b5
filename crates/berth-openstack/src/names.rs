//! How Berth names things in Placement: the resource class of a calendar dimension and back,
//! and the hash its consumer UUIDs are derived with.

/// The Placement resource class of a calendar dimension, and back.
pub fn resource_class(dimension: &str) -> Option<String> {
    match dimension {
        "vcpu" => Some("VCPU".into()),
        "ram_mib" => Some("MEMORY_MB".into()),
        "disk_gib" => Some("DISK_GB".into()),
        "instances" | "addresses" => None,
        other if is_resource_class(other) => Some(other.to_owned()),
        _ => None,
    }
}

/// The calendar dimension of a Placement resource class: the registry's name when renaming
/// keeps its numbers (`VCPU` is `vcpu`, `MEMORY_MB` `ram_mib`), else the class as written.
pub fn dimension(resource_class: &str) -> String {
    berth_units::dimension::rename(resource_class)
        .map(str::to_owned)
        .unwrap_or_else(|| resource_class.to_owned())
}

/// Placement's resource class name form: uppercase letters, digits and `_`.
fn is_resource_class(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// FNV-1a, 64 bits, from `seed`.
pub(crate) fn fnv64(bytes: &[u8], seed: u64) -> u64 {
    let mut h = seed;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
