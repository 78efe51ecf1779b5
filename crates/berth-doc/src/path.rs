//! Field paths such as `constraints.vnf_distance.properties.distance` or `demands.vG[0]`.

use std::fmt;

/// One step of a [`Path`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// Where a value stands in a document, from the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Path(Vec<Seg>);

impl Path {
    /// The document root (displays as an empty string).
    pub fn root() -> Self {
        Path(Vec::new())
    }

    /// This path extended by a mapping key.
    #[must_use]
    pub fn key(&self, k: impl Into<String>) -> Path {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(k.into()));
        Path(segs)
    }

    /// This path extended by a list index.
    #[must_use]
    pub fn index(&self, i: usize) -> Path {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(i));
        Path(segs)
    }

    /// The steps from the root.
    pub fn segments(&self) -> &[Seg] {
        &self.0
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(n) => write!(f, "[{n}]")?,
                Seg::Key(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    let plain = !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':'));
                    if plain {
                        f.write_str(k)?;
                    } else {
                        write!(f, "{k:?}")?;
                    }
                }
            }
        }
        Ok(())
    }
}
