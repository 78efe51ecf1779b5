//! OpenStack underneath Berth: the inventory read live from Placement and Nova, Berth's
//! reservations written back to Placement as claims, and servers booted through Nova.
//!
//! Key types:
//! - [`OpenStack`]: one cloud. As an [`berth_service::InventorySource`] it gives one candidate
//!   per compute resource provider (the host's name), with capacity `(total - reserved) *
//!   allocation_ratio` less what consumers other than Berth hold, and the flavors as the
//!   Promise catalog; it is reconciled with the calendar like the inventory file. As a
//!   [`berth_service::Vim`] it boots servers on the host Berth chose. [`OpenStack::spawn`]
//!   refreshes it on a period and syncs the claims after every calendar change.
//! - [`Snapshot`]: the cloud as read at one moment, and what Berth derives from it (pure).
//! - [`claims`]: what Berth should hold in Placement for its active reservations, as
//!   consumers whose UUIDs it derives from the reservation (pure).
//! - [`wire`]: the JSON of Keystone v3, Placement and the compute API (pure, tested on
//!   recorded answers); [`client::Session`] the thin HTTP part with token renewal.
//!
//! Layering: above `berth-service` (it implements the service's traits); only the modules
//! `client`, `fetch`, `writeback`, `boot` and `source` do IO.

pub mod boot;
pub mod claims;
pub mod client;
pub mod cloud;
mod error;
pub mod fetch;
mod names;
mod source;
pub mod wire;
pub mod writeback;

pub use client::{Auth, Credentials, Session};
pub use cloud::{Naming, ProviderState, Snapshot};
pub use error::OpenStackError;
pub use source::{Discoverer, OpenStack, discover, discovered, service_error};
