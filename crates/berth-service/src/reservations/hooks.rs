//! Webhooks: which events reach which subscription, and subscribing and unsubscribing.

use berth_calendar::{Applied, Command, Event, RecordRef, SubscriptionId, ThresholdSubscription};
use berth_store::{NewSubscription, StoreError, SubscriptionKind};

use super::{Inner, ReservationFilter, ReservationService, Webhook, qualify};
use crate::ServiceError;
use crate::notify::Notification;

impl Inner {
    /// Notifications for `events`, one per matching webhook.
    pub(super) fn notifications(&self, events: &[Event]) -> Vec<Notification> {
        let mut out = Vec::new();
        for e in events {
            let body = self.wire_event(e);
            let name = body
                .get("event")
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            for hook in self.hooks.values() {
                let matches = match (e, &hook.filter) {
                    (Event::CapacityThreshold { subscription, .. }, None) => {
                        format!("{}{subscription}", self.prefix) == hook.id
                    }
                    (Event::CapacityThreshold { .. }, Some(_)) | (_, None) => false,
                    (_, Some(f)) => self.filter_matches(f, e, &name),
                };
                if matches && !hook.callback.is_empty() {
                    let body = serde_json::json!({"subscription-id": hook.id, "event": body});
                    out.push(Notification {
                        callback: hook.callback.clone(),
                        body,
                    });
                }
            }
        }
        out
    }

    /// An event as webhooks carry it: records by the ids every answer uses (`r4`, `a2`,
    /// qualified by partition), pools as `<zone>/<provider>`, dimensions by their Promise
    /// names (`cores`); a threshold event names the pool it watches (`pool`, absent for a
    /// zone's sum) beside the zone.
    fn wire_event(&self, e: &Event) -> serde_json::Value {
        use serde_json::json;
        let p = &self.prefix;
        let mut body = serde_json::to_value(e).unwrap_or_default();
        match e {
            Event::ReservationStarted { reservation, .. }
            | Event::ReservationExpiringSoon { reservation, .. }
            | Event::ReservationExpired { reservation, .. }
            | Event::ReservationEnded { reservation, .. } => {
                body["reservation"] = json!(format!("{p}{reservation}"));
            }
            Event::ReservationCancelled {
                reservation,
                terminated,
                ..
            } => {
                body["reservation"] = json!(format!("{p}{reservation}"));
                body["terminated"] = json!(
                    terminated
                        .iter()
                        .map(|a| format!("{p}{a}"))
                        .collect::<Vec<_>>()
                );
            }
            Event::ReservationPreempted {
                reservation, by, ..
            } => {
                body["reservation"] = json!(format!("{p}{reservation}"));
                body["by"] = json!(format!("{p}{by}"));
            }
            Event::AllocationTerminated {
                allocation,
                reservation,
                ..
            } => {
                body["allocation"] = json!(format!("{p}{allocation}"));
                body["reservation"] = json!(reservation.map(|r| format!("{p}{r}")));
            }
            Event::CommitmentAtRisk { record, pool, .. } => {
                body["record"] = json!(match record {
                    RecordRef::Reservation(r) => format!("{p}{r}"),
                    RecordRef::Allocation(a) => format!("{p}{a}"),
                });
                body["pool"] = json!(pool.to_string());
            }
            Event::CapacityThreshold {
                subscription,
                zone,
                dimension,
                ..
            } => {
                body["subscription"] = json!(format!("{p}{subscription}"));
                body["dimension"] =
                    json!(berth_units::dimension::Dialect::Promise.name(&dimension.0));
                if let Some(provider) = self
                    .cal
                    .threshold_subscription(*subscription)
                    .and_then(|s| s.provider.as_ref())
                {
                    body["pool"] = json!(format!("{}/{}", zone, provider));
                }
            }
        }
        body
    }

    fn filter_matches(&self, f: &ReservationFilter, e: &Event, name: &str) -> bool {
        if !f.events.is_empty() && !f.events.iter().any(|x| x == name) {
            return false;
        }
        let reservation = match e {
            Event::ReservationStarted { reservation, .. }
            | Event::ReservationExpiringSoon { reservation, .. }
            | Event::ReservationExpired { reservation, .. }
            | Event::ReservationEnded { reservation, .. }
            | Event::ReservationPreempted { reservation, .. }
            | Event::ReservationCancelled { reservation, .. } => Some(*reservation),
            Event::AllocationTerminated { reservation, .. } => *reservation,
            Event::CommitmentAtRisk {
                record: RecordRef::Reservation(r),
                ..
            } => Some(*r),
            _ => None,
        };
        if let Some(want) = &f.reservation
            && reservation
                .map(|r| format!("{}{r}", self.prefix))
                .as_deref()
                != Some(want.as_str())
        {
            return false;
        }
        if let Some(zone) = &f.zone {
            let z = reservation
                .and_then(|r| self.cal.reservation(r))
                .map(|r| r.pool.zone.0);
            if z.as_deref() != Some(zone.as_str()) {
                return false;
            }
        }
        true
    }
}

impl ReservationService {
    /// Adds a capacity-threshold webhook; returns its id (`s<n>`, the calendar's; qualified
    /// by its partition when partitioned).
    pub async fn subscribe_capacity(
        &self,
        sub: ThresholdSubscription,
        callback: String,
    ) -> Result<String, ServiceError> {
        self.notifier.check_callback(&callback)?;
        let spec = serde_json::to_value(&sub).map_err(ServiceError::store)?;
        let c = self.command(Command::Subscribe(sub), None).await?;
        let Applied::Subscribed { id } = c.outcome.applied else {
            return Err(ServiceError::Unavailable {
                message: "subscribe produced no id".into(),
            });
        };
        let id = qualify(c.partition.as_deref(), id);
        self.add_hook(NewSubscription {
            id: id.clone(),
            kind: SubscriptionKind::Capacity,
            spec,
            callback_url: callback,
            created_at: self.clock.now(),
        })
        .await?;
        Ok(id)
    }

    /// Adds a reservation-events webhook; returns its id (`w-<uuid>`).
    pub async fn subscribe_reservations(
        &self,
        filter: ReservationFilter,
        callback: String,
    ) -> Result<String, ServiceError> {
        self.notifier.check_callback(&callback)?;
        let id = format!("w-{}", uuid::Uuid::new_v4());
        let spec = serde_json::to_value(&filter).map_err(ServiceError::store)?;
        self.add_hook(NewSubscription {
            id: id.clone(),
            kind: SubscriptionKind::Reservation,
            spec,
            callback_url: callback,
            created_at: self.clock.now(),
        })
        .await?;
        Ok(id)
    }

    async fn add_hook(&self, sub: NewSubscription) -> Result<(), ServiceError> {
        let rec = self.store.create_subscription(&sub).await?;
        let filter = (rec.kind == SubscriptionKind::Reservation)
            .then(|| serde_json::from_value(rec.spec).unwrap_or_default());
        let hook = Webhook {
            id: rec.id.clone(),
            callback: rec.callback_url,
            filter,
        };
        for part in self.all_parts() {
            part.core
                .inner
                .lock()
                .await
                .hooks
                .insert(rec.id.clone(), hook.clone());
        }
        Ok(())
    }

    /// Removes a webhook of either kind.
    pub async fn unsubscribe(&self, id: &str) -> Result<(), ServiceError> {
        // Reservation webhooks (`w-<uuid>`) live in the store only; capacity ones (`s<n>`,
        // partition-qualified when partitioned) in a calendar too.
        let (partition, local) = if id.starts_with("w-") {
            (None, id.to_owned())
        } else {
            self.split_id(id)?
        };
        if let Some(n) = local.strip_prefix('s').and_then(|n| n.parse::<u64>().ok()) {
            self.command_at(
                partition.as_deref(),
                Command::Unsubscribe {
                    id: SubscriptionId(n),
                },
                None,
            )
            .await?;
            match self.store.delete_subscription(id).await {
                Ok(()) | Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        } else {
            self.store.delete_subscription(id).await?;
        }
        for part in self.all_parts() {
            part.core.inner.lock().await.hooks.remove(id);
        }
        Ok(())
    }

    /// Webhooks, by id.
    pub async fn webhooks(&self) -> Vec<Webhook> {
        match self.all_parts().first() {
            Some(p) => p.core.inner.lock().await.hooks.values().cloned().collect(),
            None => self
                .store
                .list_subscriptions(None)
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|s| Webhook {
                    filter: (s.kind == SubscriptionKind::Reservation)
                        .then(|| serde_json::from_value(s.spec).unwrap_or_default()),
                    id: s.id,
                    callback: s.callback_url,
                })
                .collect(),
        }
    }
}
