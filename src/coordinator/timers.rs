//! The coordinator's timer table: the member's own clocks, kept together so that what
//! [`Coordinator::poll_timeout`](super::Coordinator::poll_timeout) reports and what
//! [`Coordinator::handle_timeout`](super::Coordinator::handle_timeout) expires are read from one
//! place. Times are the caller's milliseconds (the coordinator is sans-IO).
//!
//! The table holds the clocks that outlive any one request: when the next heartbeat is due,
//! the last proof that the session is alive (the session expires `session.timeout.ms` after it)
//! and the retry backoff before a rejoin. A request's own timeout stays with the request in
//! flight (`InFlight::deadline`, a pending commit's, the offset fetch's), because an answer or a
//! timeout removes both at once; `poll_timeout` takes the earliest of the table and of those.

/// The member's clocks (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct Timers {
    /// When the next Heartbeat is due (sent once heartbeats run and none is in flight).
    pub(super) heartbeat_due: u64,
    /// The last time the broker proved the session alive (a join, a sync, a heartbeat answer).
    pub(super) session_alive_at: u64,
    /// No JoinGroup before this (after a failed round); 0 when there is no backoff.
    pub(super) rejoin_backoff_until: u64,
}

impl Timers {
    /// The table of a member created at `now`: a heartbeat due at once, the session counted from
    /// `now`, no backoff.
    pub(super) fn new(now: u64) -> Self {
        Timers { heartbeat_due: now, session_alive_at: now, rejoin_backoff_until: 0 }
    }

    /// When the session expires without another sign of life.
    pub(super) fn session_expiry(&self, session_timeout_ms: u64) -> u64 {
        self.session_alive_at + session_timeout_ms
    }

    /// The broker proved the session alive at `now`.
    pub(super) fn session_alive(&mut self, now: u64) {
        self.session_alive_at = now;
    }

    /// The next heartbeat is due `interval_ms` after `now`.
    pub(super) fn heartbeat_after(&mut self, now: u64, interval_ms: u64) {
        self.heartbeat_due = now + interval_ms;
    }
}
