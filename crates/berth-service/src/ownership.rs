//! Ownership of a calendar stream among daemons sharing one store: a lease per stream with a
//! fencing token. The holder writes (every commit carries the token, so once another daemon
//! takes the lease the old holder's commits fail); the others forward writes to the holder's
//! URL and take the lease when it lapses.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_store::{Lease, LeaseRequest, Store};
use chrono::TimeDelta;

use crate::ServiceError;
use crate::clock::WallClock;

/// Who may write a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// This daemon, with its fencing token.
    Me {
        /// The token every commit carries.
        token: u64,
    },
    /// Another daemon.
    Other {
        /// Its node id.
        node: String,
        /// Its base URL, to forward writes to.
        url: String,
    },
    /// Not known yet (no lease read so far, or the store failed).
    Unknown,
}

impl Owner {
    /// True when this daemon holds the lease.
    pub fn is_me(&self) -> bool {
        matches!(self, Owner::Me { .. })
    }
}

/// Settings of [`Ownership`].
#[derive(Debug, Clone)]
pub struct OwnershipOptions {
    /// Lease name (the calendar's stream).
    pub lease: String,
    /// This daemon's node id (unique per process).
    pub node_id: String,
    /// Where this daemon answers forwarded requests.
    pub advertise_url: String,
    /// How long a lease lasts unless renewed; it is renewed every third of it.
    pub lease_time: Duration,
}

/// This daemon's view of a stream's lease, kept fresh by [`Ownership::spawn`].
pub struct Ownership {
    store: Arc<dyn Store>,
    clock: Arc<dyn WallClock>,
    opts: OwnershipOptions,
    state: Mutex<Owner>,
}

impl std::fmt::Debug for Ownership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ownership")
            .field("opts", &self.opts)
            .field("owner", &self.owner())
            .finish()
    }
}

impl Ownership {
    /// A view that knows nothing yet; call [`Ownership::refresh`] or [`Ownership::spawn`].
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn WallClock>,
        opts: OwnershipOptions,
    ) -> Arc<Ownership> {
        Arc::new(Ownership {
            store,
            clock,
            opts,
            state: Mutex::new(Owner::Unknown),
        })
    }

    /// The settings.
    pub fn options(&self) -> &OwnershipOptions {
        &self.opts
    }

    /// The owner as last seen.
    pub fn owner(&self) -> Owner {
        self.state
            .lock()
            .map(|g| g.clone())
            .unwrap_or(Owner::Unknown)
    }

    /// The fencing token when this daemon holds the lease.
    pub fn token(&self) -> Option<u64> {
        match self.owner() {
            Owner::Me { token } => Some(token),
            _ => None,
        }
    }

    /// A commit was fenced out: another daemon holds the lease now.
    pub fn lost(&self, token: u64) {
        if let Ok(mut g) = self.state.lock()
            && *g == (Owner::Me { token })
        {
            *g = Owner::Unknown;
        }
    }

    fn set(&self, owner: Owner) {
        if let Ok(mut g) = self.state.lock() {
            *g = owner;
        }
    }

    /// Takes or renews the lease if it is free, lapsed or ours; otherwise learns who holds
    /// it. Returns the owner now.
    pub async fn refresh(&self) -> Result<Owner, ServiceError> {
        let held = self.token();
        let now = self.clock.now();
        let ttl = TimeDelta::from_std(self.opts.lease_time).unwrap_or(TimeDelta::seconds(3));
        let lease = self
            .store
            .acquire_lease(LeaseRequest {
                lease: &self.opts.lease,
                owner: &self.opts.node_id,
                owner_url: &self.opts.advertise_url,
                held_token: held,
                now,
                expires_at: now + ttl,
            })
            .await;
        let owner = match lease {
            Ok(l) => self.owner_of(&l),
            Err(e) => {
                // Without the store we cannot prove ownership: stop writing until we can.
                self.set(Owner::Unknown);
                return Err(e.into());
            }
        };
        if held.is_none()
            && let Owner::Me { token } = owner
        {
            metrics::counter!("berth_lease_acquisitions_total").increment(1);
            tracing::info!(lease = %self.opts.lease, node = %self.opts.node_id, token, "lease taken; this daemon writes the calendar");
        }
        if held.is_some() && !matches!(owner, Owner::Me { .. }) {
            tracing::warn!(lease = %self.opts.lease, owner = ?owner, "lease lost");
        }
        metrics::gauge!("berth_lease_held").set(if matches!(owner, Owner::Me { .. }) {
            1.0
        } else {
            0.0
        });
        self.set(owner.clone());
        Ok(owner)
    }

    /// Learns the holder from a lease row read elsewhere, without asking for the lease (a
    /// daemon past its fair share of partitions). Changes nothing while this daemon holds it.
    pub fn observe(&self, lease: Option<&Lease>, now: chrono::DateTime<chrono::Utc>) {
        if self.token().is_some() {
            return;
        }
        self.set(match lease {
            Some(l) if l.expires_at > now && l.owner != self.opts.node_id => Owner::Other {
                node: l.owner.clone(),
                url: l.owner_url.clone(),
            },
            _ => Owner::Unknown,
        });
    }

    /// Hands the lease over if held: stops writing at once, then lapses the lease so another
    /// daemon takes it at its next refresh. Returns whether a lease was released.
    pub async fn release(&self) -> Result<bool, ServiceError> {
        let Some(token) = self.token() else {
            return Ok(false);
        };
        self.set(Owner::Unknown);
        let released = self
            .store
            .release_lease(&self.opts.lease, &self.opts.node_id, token)
            .await?;
        tracing::info!(lease = %self.opts.lease, "lease released");
        Ok(released)
    }

    fn owner_of(&self, l: &Lease) -> Owner {
        if l.owner == self.opts.node_id {
            Owner::Me { token: l.token }
        } else {
            Owner::Other {
                node: l.owner.clone(),
                url: l.owner_url.clone(),
            }
        }
    }

    /// Refreshes every third of the lease time until `shutdown` fires, then releases the lease
    /// if held (so another daemon takes over at once).
    pub fn spawn(
        self: &Arc<Self>,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        let me = Arc::clone(self);
        tokio::spawn(async move {
            let period = (me.opts.lease_time / 3).max(Duration::from_millis(100));
            let mut interval = tokio::time::interval(period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = interval.tick() => {
                        if let Err(e) = me.refresh().await {
                            tracing::warn!(lease = %me.opts.lease, error = %e, "cannot refresh the lease");
                        }
                    }
                    _ = shutdown.changed() => break,
                }
            }
            if let Err(e) = me.release().await {
                tracing::warn!(lease = %me.opts.lease, error = %e, "cannot release the lease");
            }
        })
    }
}

#[cfg(test)]
mod tests;
