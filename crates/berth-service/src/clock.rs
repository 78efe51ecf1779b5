//! The source of wall-clock time: the service is where the clock is read, and tests set it.

use std::sync::Arc;

use chrono::{DateTime, Utc};
/// The source of wall-clock time; the service is where the clock is read.
pub trait WallClock: Send + Sync {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock moved by hand (tests).
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<std::sync::Mutex<DateTime<Utc>>>);

impl ManualClock {
    /// A clock showing `t`.
    pub fn new(t: DateTime<Utc>) -> Self {
        ManualClock(Arc::new(std::sync::Mutex::new(t)))
    }

    /// Moves the clock to `t`.
    pub fn set(&self, t: DateTime<Utc>) {
        if let Ok(mut g) = self.0.lock() {
            *g = t;
        }
    }
}

impl WallClock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.0.lock().map(|g| *g).unwrap_or_else(|_| Utc::now())
    }
}
