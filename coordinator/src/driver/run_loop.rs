//! The loop every adapter runs: step, wait for the next event or deadline, take what is
//! waiting, step again.

use super::{Driver, Event};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Events taken in one round before the driver steps again (so that records keep
/// flowing under a flood of events).
const EVENTS_PER_ROUND: usize = 4096;

/// The longest the loop sleeps with nothing to wait for.
const IDLE_WAIT: Duration = Duration::from_secs(1);

/// Waking this much later than asked means the process itself was stalled (stopped,
/// starved): the executors' silence over that time is forgiven before leases are judged
/// ([`Driver::forgive_stall`]).
const STALL_US: u64 = 1_000_000;

/// Every sender of the event stream is gone.
#[derive(Debug, thiserror::Error)]
#[error("every event source hung up")]
pub struct Disconnected;

/// Drives `driver` from `events` until `done` says so after a step (or a shutdown was
/// handled), calling `after_step` after every step (metrics). `clock` gives the time in
/// µs since the driver started.
pub fn run_loop(
    driver: &mut Driver<'_>,
    events: &Receiver<Event>,
    clock: &dyn Fn() -> u64,
    after_step: &mut dyn FnMut(&Driver<'_>),
    done: &mut dyn FnMut(&Driver<'_>) -> bool,
) -> Result<(), Disconnected> {
    let mut due = clock();
    loop {
        let now = clock();
        if now > due.saturating_add(STALL_US) {
            tracing::warn!(
                late_ms = (now - due) / 1000,
                "the coordinator was stalled; every worker's lease is renewed"
            );
            driver.forgive_stall(now);
        }
        driver.step(now);
        after_step(driver);
        if done(driver) || driver.is_shut_down() {
            return Ok(());
        }
        let wait = driver.next_wakeup().map_or(IDLE_WAIT, |at| {
            Duration::from_micros(at.saturating_sub(clock())).min(IDLE_WAIT)
        });
        due = clock().saturating_add(wait.as_micros() as u64);
        let first = match events.recv_timeout(wait) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return Err(Disconnected),
        };
        let mut next = Some(first);
        let mut taken = 0;
        while let Some(ev) = next {
            let shutdown = matches!(ev, Event::Shutdown);
            driver.handle(ev, clock());
            if shutdown {
                break;
            }
            taken += 1;
            next = if taken < EVENTS_PER_ROUND {
                events.try_recv().ok()
            } else {
                None
            };
        }
    }
}
