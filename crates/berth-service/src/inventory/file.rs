//! An inventory document as an [`InventorySource`]: a file read again on every load (or a
//! fixed text, berthd's bundled example), parsed whole, every problem named with
//! `file:line:column`.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use berth_inventory::{Inventory, InventoryError, StaticProvider};

use super::{InventoryPools, InventorySource, LoadedInventory};
use crate::{ProviderFlavor, ProviderInfo, ServiceError};

/// The provider name of the pools an inventory document gives: `<candidate-id>/inventory`.
pub const FILE_PROVIDER: &str = "inventory";

/// Where the document is.
#[derive(Debug, Clone)]
enum Origin {
    File(PathBuf),
    Text { name: String, text: Arc<str> },
}

/// An inventory document: its candidates become pools `<candidate-id>/<provider>` with their
/// `capacity`, plans resolve against a [`StaticProvider`] over it, and the flavors of its
/// candidates are the Promise catalog of `<provider>`.
#[derive(Debug, Clone)]
pub struct FileSource {
    origin: Origin,
    provider: String,
}

impl FileSource {
    /// The document at `path`, read on every load; pools of [`FILE_PROVIDER`].
    pub fn file(path: impl Into<PathBuf>) -> FileSource {
        FileSource {
            origin: Origin::File(path.into()),
            provider: FILE_PROVIDER.to_owned(),
        }
    }

    /// A fixed document called `name` in logs; pools of [`FILE_PROVIDER`].
    pub fn text(name: impl Into<String>, text: impl Into<Arc<str>>) -> FileSource {
        FileSource {
            origin: Origin::Text {
                name: name.into(),
                text: text.into(),
            },
            provider: FILE_PROVIDER.to_owned(),
        }
    }

    /// Parses `text` (read from this source) into what a reconcile needs.
    pub fn parse(&self, text: &str) -> Result<LoadedInventory, ServiceError> {
        let inv = Inventory::parse(text).map_err(|e| self.invalid(e))?;
        let pools = InventoryPools::from_candidates(self.provider.clone(), inv.candidates.values());
        let warnings = inv.warnings.iter().map(ToString::to_string).collect();
        Ok(LoadedInventory {
            pools,
            catalog: Some(catalog(&self.provider, &inv)),
            candidates: inv.candidates.len(),
            fingerprint: fingerprint(text),
            warnings,
            provider: Arc::new(StaticProvider::new(inv)),
        })
    }

    /// `file PATH` or the text's name, as error messages start.
    fn location(&self) -> String {
        match &self.origin {
            Origin::File(p) => p.display().to_string(),
            Origin::Text { name, .. } => name.clone(),
        }
    }

    fn invalid(&self, e: InventoryError) -> ServiceError {
        let at = self.location();
        match e {
            InventoryError::Invalid { diagnostics } => {
                let errors: Vec<String> = diagnostics
                    .iter()
                    .filter(|d| d.severity == berth_doc::Severity::Error)
                    .map(|d| {
                        let path = if d.path.is_empty() {
                            String::new()
                        } else {
                            format!("{}: ", d.path)
                        };
                        format!("{at}:{}:{}: {path}{}", d.line, d.column, d.message)
                    })
                    .collect();
                ServiceError::InvalidInventory {
                    origin: self.name(),
                    message: errors.join("; "),
                    diagnostics,
                }
            }
            other => ServiceError::InvalidInventory {
                origin: self.name(),
                message: format!("{at}: {other}"),
                diagnostics: Vec::new(),
            },
        }
    }
}

impl InventorySource for FileSource {
    fn name(&self) -> String {
        match &self.origin {
            Origin::File(p) => format!("file {}", p.display()),
            Origin::Text { name, .. } => name.clone(),
        }
    }

    fn load(
        &self,
    ) -> Pin<Box<dyn Future<Output = Result<LoadedInventory, ServiceError>> + Send + '_>> {
        Box::pin(async move {
            let text: Arc<str> = match &self.origin {
                Origin::File(p) => tokio::fs::read_to_string(p)
                    .await
                    .map_err(|e| ServiceError::InvalidInventory {
                        origin: self.name(),
                        message: format!("cannot read {}: {e}", p.display()),
                        diagnostics: Vec::new(),
                    })?
                    .into(),
                Origin::Text { text, .. } => Arc::clone(text),
            };
            self.parse(&text)
        })
    }
}

/// The Promise catalog of an inventory's pools: every candidate's flavors whose sizes
/// (`basicCapabilities` read through the dimension registry, [`berth_inventory::Flavor::size`])
/// give vCPUs and memory (the first of a name wins; disk when given).
pub fn catalog(provider: &str, inv: &Inventory) -> ProviderInfo {
    let mut flavors: Vec<ProviderFlavor> = Vec::new();
    for f in inv.candidates.values().flat_map(|c| &c.flavors) {
        let size = f.size();
        let (Some(&vcpus), Some(&ram)) = (size.get("vcpu"), size.get("ram_mib")) else {
            continue;
        };
        if flavors.iter().any(|x| x.name == f.name) {
            continue;
        }
        flavors.push(ProviderFlavor {
            id: f.id.clone(),
            name: f.name.clone(),
            vcpus,
            ram,
            disk: size.get("disk_gib").copied().unwrap_or(0),
        });
    }
    ProviderInfo {
        id: provider.to_owned(),
        name: None,
        provider_type: "inventory".into(),
        endpoint: None,
        region: None,
        tenant: None,
        flavors,
    }
}

/// FNV-1a of the text, in hex: equal texts, equal fingerprints.
fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests;
