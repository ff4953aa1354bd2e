//! The deadlines of a cell's `setTimeout` calls. JavaScript keeps the callbacks; Rust keeps
//! only ids and due times, so a cleared or orphaned timer costs nothing and never keeps the
//! cell alive.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// Pending timers of one cell.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    next_id: u64,
    due: BTreeSet<(Instant, u64)>,
    by_id: HashMap<u64, Instant>,
}

impl Timers {
    /// Schedules a timer `delay` from now and returns its id (1, 2, ...).
    pub(crate) fn schedule(&mut self, delay: Duration) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let at = Instant::now() + delay;
        self.due.insert((at, id));
        self.by_id.insert(id, at);
        id
    }

    /// Forgets a timer; unknown ids are ignored.
    pub(crate) fn clear(&mut self, id: u64) {
        if let Some(at) = self.by_id.remove(&id) {
            self.due.remove(&(at, id));
        }
    }

    /// When the earliest timer is due.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.due.first().map(|(at, _)| *at)
    }

    /// Removes and returns the earliest timer if it is due at `now`. Equal deadlines come
    /// out in scheduling order.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<u64> {
        let (at, id) = *self.due.first()?;
        if at > now {
            return None;
        }
        self.due.remove(&(at, id));
        self.by_id.remove(&id);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_timers_pop_in_deadline_then_id_order_and_clear_works() {
        let mut timers = Timers::default();
        let a = timers.schedule(Duration::from_millis(0));
        let b = timers.schedule(Duration::from_millis(0));
        let c = timers.schedule(Duration::from_secs(60));
        timers.clear(b);
        let now = Instant::now() + Duration::from_millis(1);
        assert_eq!(timers.pop_due(now), Some(a));
        assert_eq!(timers.pop_due(now), None);
        assert!(timers.next_deadline().is_some());
        timers.clear(c);
        assert_eq!(timers.next_deadline(), None);
    }
}
