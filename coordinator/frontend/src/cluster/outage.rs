//! The bound on trying to reach a coordinator: the time without a working connection,
//! from the first attempt, and again from each loss.

use super::error::ClientError;
use std::time::{Duration, Instant};

/// How long the client has been without a working connection, against its bound.
#[derive(Debug)]
pub(super) struct Outage {
    /// The bound (`None`: try for ever).
    bound: Option<Duration>,
    /// Since when no attempt has worked (`None`: connected, or not tried yet).
    since: Option<Instant>,
}

impl Outage {
    pub(super) fn new(bound: Option<Duration>) -> Outage {
        Outage { bound, since: None }
    }

    /// An attempt begins: the time by which it must get an answer (the outage starts
    /// now if none is running).
    pub(super) fn deadline(&mut self) -> Option<tokio::time::Instant> {
        let since = *self.since.get_or_insert_with(Instant::now);
        self.bound
            .map(|b| tokio::time::Instant::from_std(since) + b)
    }

    /// The coordinator answered: the connection works.
    pub(super) fn connected(&mut self) {
        self.since = None;
    }

    /// An attempt failed with `why`: how long to wait before the next, `wait` or what is
    /// left of the bound when that is less (the last attempt is made at the bound, not a
    /// backoff step before it), or the error of giving up once the bound has passed.
    pub(super) fn failed(
        &mut self,
        url: &str,
        why: &str,
        wait: Duration,
    ) -> Result<Duration, ClientError> {
        let since = *self.since.get_or_insert_with(Instant::now);
        match self.bound {
            Some(bound) if since.elapsed() >= bound => Err(ClientError::GaveUp {
                url: url.to_string(),
                tried: since.elapsed(),
                bound,
                last: why.to_string(),
            }),
            Some(bound) => Ok(wait.min(bound.saturating_sub(since.elapsed()))),
            None => Ok(wait),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_counts_from_the_first_failure_and_again_after_a_connection() {
        let mut o = Outage::new(Some(Duration::from_secs(10)));
        assert!(o.deadline().is_some());
        assert_eq!(
            o.failed("u", "refused", Duration::from_secs(1)).unwrap(),
            Duration::from_secs(1)
        );
        // A wait past the bound is cut to it: the last attempt is made at the bound.
        let cut = o.failed("u", "refused", Duration::from_secs(60)).unwrap();
        assert!(
            cut <= Duration::from_secs(10) && cut > Duration::from_secs(9),
            "{cut:?}"
        );
        // Past the bound, it gives up.
        o.since = Some(Instant::now() - Duration::from_secs(10));
        let e = o
            .failed("u", "refused", Duration::from_secs(1))
            .unwrap_err();
        assert!(e.to_string().contains("last error: refused"), "{e}");
        o.connected();
        assert!(o.since.is_none());
        assert!(o.failed("u", "reset", Duration::from_secs(9)).is_ok());
        // For ever.
        let mut o = Outage::new(None);
        assert!(o.deadline().is_none());
        assert_eq!(
            o.failed("u", "x", Duration::MAX / 4).unwrap(),
            Duration::MAX / 4
        );
    }
}
