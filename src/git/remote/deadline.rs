//! The one time budget of a sync, as an instant every network call and checkout measures
//! against (invariant 5).

use std::time::{Duration, Instant};

/// When a sync must be over, network included (invariant 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
}

impl Deadline {
    /// A deadline `budget` from now (a budget too large for the clock means about a century).
    pub fn after(budget: Duration) -> Self {
        let now = Instant::now();
        Deadline {
            at: now
                .checked_add(budget)
                .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
                .unwrap_or(now),
        }
    }

    /// A deadline at `at`.
    pub fn at(at: Instant) -> Self {
        Deadline { at }
    }

    /// Time left, zero once passed.
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }
}
