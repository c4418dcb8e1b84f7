//! The one stop token: a shared cancel flag and an optional deadline, polled by both
//! searches every few thousand nodes.

use proto::Stop;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Tells a search when to stop: a cancel flag shared by every clone (raised with
/// [`StopToken::cancel`]) and an optional deadline of this copy.
///
/// Searches call [`StopToken::check`] every few thousand nodes, which costs one relaxed
/// load and, with a deadline, one clock read; between two checks a search runs on
/// untouched, so a stop takes effect within a fraction of a millisecond.
#[derive(Clone, Debug, Default)]
pub struct StopToken {
    /// Raised by [`StopToken::cancel`] on any clone; shared by every token made from this
    /// one.
    flag: Arc<AtomicBool>,
    /// When the time budget of whatever this token is given to ends (`None`: no budget).
    deadline: Option<Instant>,
}

impl StopToken {
    /// A fresh token: not cancelled, no deadline.
    pub fn new() -> StopToken {
        StopToken::default()
    }

    /// A token sharing this one's cancel flag, with `deadline` as well: the earlier of
    /// `deadline` and this token's own (a part of a job never outlives the job's budget;
    /// `None` keeps this token's deadline).
    pub fn with_deadline(&self, deadline: Option<Instant>) -> StopToken {
        let deadline = match (self.deadline, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        StopToken {
            flag: Arc::clone(&self.flag),
            deadline,
        }
    }

    /// Raises the cancel flag: every search polling this token or a clone of it stops
    /// at its next check with [`Stop::Cancelled`].
    pub fn cancel(&self) {
        self.flag.store(true, Relaxed);
    }

    /// Whether the cancel flag is up.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Relaxed)
    }

    /// This token's deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Why to stop now, if so: [`Stop::Cancelled`] when the flag is up (it wins over a
    /// deadline), [`Stop::TimeLimit`] when the deadline has passed.
    #[inline]
    pub fn check(&self) -> Option<Stop> {
        if self.flag.load(Relaxed) {
            return Some(Stop::Cancelled);
        }
        match self.deadline {
            Some(d) if Instant::now() >= d => Some(Stop::TimeLimit),
            _ => None,
        }
    }

    /// Whether `other` shares this token's cancel flag.
    pub(crate) fn shares_flag(&self, other: &StopToken) -> bool {
        Arc::ptr_eq(&self.flag, &other.flag)
    }
}

/// The instant `ms` milliseconds after `start`, `None` for no limit or one too far in the
/// future to represent (which is as good as none).
pub(crate) fn deadline_after(start: Instant, ms: Option<u64>) -> Option<Instant> {
    ms.and_then(|ms| start.checked_add(std::time::Duration::from_millis(ms)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cancel_reaches_every_clone_and_wins_over_the_deadline() {
        let t = StopToken::new();
        assert_eq!(t.check(), None);
        let past = Instant::now().checked_sub(Duration::from_millis(1));
        let d = t.with_deadline(past);
        assert!(d.shares_flag(&t));
        assert_eq!(d.check(), Some(Stop::TimeLimit));
        assert_eq!(t.check(), None, "the deadline belongs to the copy");
        d.cancel();
        assert_eq!(t.check(), Some(Stop::Cancelled));
        assert_eq!(d.check(), Some(Stop::Cancelled));
    }

    #[test]
    fn deadlines_only_get_earlier() {
        let now = Instant::now();
        let later = now + Duration::from_secs(60);
        let t = StopToken::new().with_deadline(Some(now));
        assert_eq!(t.with_deadline(Some(later)).deadline(), Some(now));
        assert_eq!(t.with_deadline(None).deadline(), Some(now));
        let u = StopToken::new().with_deadline(Some(later));
        assert_eq!(u.with_deadline(Some(now)).deadline(), Some(now));
        // Far beyond what an Instant holds on some platforms: no panic, at worst no limit.
        assert!(!matches!(deadline_after(now, Some(u64::MAX)), Some(d) if d <= later));
        assert_eq!(deadline_after(now, None), None);
        assert_eq!(
            deadline_after(now, Some(5)),
            Some(now + Duration::from_millis(5))
        );
    }
}
