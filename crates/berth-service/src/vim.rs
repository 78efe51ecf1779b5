//! A VIM underneath Berth (an OpenStack cloud): what the Promise routes ask of it when a
//! provider is a real cloud. Defined here so the API can call it and a cloud crate above can
//! implement it without either knowing the other.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use berth_calendar::Amounts;

use crate::{ProviderInfo, ServiceError};

/// A boxed future of a VIM call.
pub type VimFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ServiceError>> + Send + 'a>>;

/// A server to boot for a Berth instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootRequest {
    /// Berth's instance id (`a3`, qualified when partitioned).
    pub instance: String,
    /// The host Berth chose (the pool's zone).
    pub host: String,
    /// Server name.
    pub name: String,
    /// Flavor id or name.
    pub flavor: String,
    /// Image id or name (`None`: the VIM's default image).
    pub image: Option<String>,
}

/// A server booted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booted {
    /// The VIM's server id.
    pub server: String,
    /// Where it runs.
    pub host: Option<String>,
    /// Its status (`ACTIVE`).
    pub status: String,
}

/// How to reach a cloud given to `add-provider`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The identity endpoint (Keystone v3).
    pub endpoint: String,
    /// User name.
    pub username: String,
    /// Password.
    pub password: String,
    /// Project name.
    pub tenant: Option<String>,
    /// Region.
    pub region: Option<String>,
}

/// What a cloud has: its flavor catalog and each host's free capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovered {
    /// The catalog (flavors), with the cloud's region.
    pub info: ProviderInfo,
    /// Free capacity by host.
    pub capacity: BTreeMap<String, Amounts>,
}

/// A VIM: boots and deletes servers for the pools of the providers it serves, and discovers
/// clouds.
pub trait Vim: Send + Sync {
    /// Whether it boots the instances of pools of `provider`.
    fn serves(&self, provider: &str) -> bool;

    /// Boots a server and waits for it (ACTIVE, or an error after ERROR or a deadline).
    fn boot<'a>(&'a self, req: &'a BootRequest) -> VimFuture<'a, Booted>;

    /// Deletes the server of `instance`; `false` when there is none.
    fn destroy<'a>(&'a self, instance: &'a str) -> VimFuture<'a, bool>;

    /// Reads a cloud's flavors and capacity.
    fn discover<'a>(&'a self, d: &'a Discovery) -> VimFuture<'a, Discovered>;
}
