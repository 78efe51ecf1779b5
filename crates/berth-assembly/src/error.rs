//! The crate's error type: malformed names, versions and version ranges.

/// Why a descriptor name, type reference, version or version range was refused.
///
/// Loading reports these as [`berth_doc::Diagnostic`]s; the variants stay structured for callers
/// that parse names directly (e.g. an engine matching reference instances).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// The text is not `KIND::NAME::VERSION`.
    #[error("malformed type `{text}`; expected `{expected}::NAME::VERSION`")]
    TypeShape {
        /// The offending text.
        text: String,
        /// The kinds accepted here, e.g. `assembly` or `resource|assembly`.
        expected: String,
    },
    /// The kind is not one accepted here.
    #[error("unknown kind `{kind}`; expected {expected}")]
    TypeKind {
        /// The kind found.
        kind: String,
        /// The kinds accepted here.
        expected: String,
    },
    /// The name breaks the naming rules.
    #[error(
        "invalid name `{name}`; expected a letter first, then letters, digits, `_` or `-`, ending with a letter or digit"
    )]
    Name {
        /// The offending name.
        name: String,
    },
    /// The version is not dot-separated numbers.
    #[error(
        "invalid version `{version}`; expected numbers separated by dots, e.g. `1.0` or `2.1.3`"
    )]
    Version {
        /// The offending version.
        version: String,
    },
    /// The version range cannot be read.
    #[error("invalid version range `{range}`: {reason}")]
    VersionRange {
        /// The offending range.
        range: String,
        /// What was expected.
        reason: String,
    },
    /// A range was given where an exact version is required.
    #[error("version range `{range}` is not allowed here; expected an exact version such as `1.0`")]
    RangeNotAllowed {
        /// The range found.
        range: String,
    },
}
