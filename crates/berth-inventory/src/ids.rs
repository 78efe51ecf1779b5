//! Identifiers: the lowest module of the crate; it imports nothing from the others.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Identifier of a candidate: a cloud region id or a service instance id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CandidateId(pub String);

impl CandidateId {
    /// Wraps a string as a candidate id.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CandidateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CandidateId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl From<String> for CandidateId {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl std::borrow::Borrow<str> for CandidateId {
    fn borrow(&self) -> &str {
        &self.0
    }
}
