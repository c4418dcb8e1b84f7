//! Exponential backoff with jitter: how long a worker or a client waits between attempts to
//! reach a coordinator that is away, so that a fleet does not reconnect in lockstep.

use std::time::Duration;
use tables::SplitMix64;

/// How the delays grow.
#[derive(Clone, Debug, PartialEq)]
pub struct BackoffPolicy {
    /// The delay before the first retry (before jitter).
    pub initial: Duration,
    /// Each failed attempt multiplies the delay by this.
    pub factor: u32,
    /// No delay is longer than this (after jitter).
    pub max: Duration,
    /// Each delay is drawn uniformly within ± this fraction of its nominal value
    /// (0.5: between half and one and a half times), so that workers that lost the same
    /// coordinator spread their reconnections.
    pub jitter: f64,
}

impl Default for BackoffPolicy {
    /// 100 ms, doubling, at most 10 s, ±50 %.
    fn default() -> Self {
        BackoffPolicy {
            initial: Duration::from_millis(100),
            factor: 2,
            max: Duration::from_secs(10),
            jitter: 0.5,
        }
    }
}

/// The delays of one sequence of failed attempts; [`Backoff::reset`] after a success.
#[derive(Clone, Debug)]
pub struct Backoff {
    /// The rules.
    policy: BackoffPolicy,
    /// The nominal delay of the next failure.
    nominal: Duration,
    /// The jitter's random source (not cryptographic: spreading is all it is for).
    rng: SplitMix64,
}

impl Backoff {
    /// A fresh sequence; `seed` makes the jitter reproducible (use something that differs
    /// between workers, such as the process id and the time).
    pub fn new(policy: BackoffPolicy, seed: u64) -> Backoff {
        Backoff {
            nominal: policy.initial,
            policy,
            rng: SplitMix64::new(seed),
        }
    }

    /// The delay to wait after one more failure; the next one is `factor` times longer
    /// (nominally), up to `max`.
    pub fn next_delay(&mut self) -> Duration {
        let nominal = self.nominal.min(self.policy.max);
        self.nominal = nominal
            .saturating_mul(self.policy.factor.max(1))
            .min(self.policy.max);
        let jitter = self.policy.jitter.clamp(0.0, 1.0);
        // A uniform number in [0, 1) from the top 53 bits.
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let scale = 1.0 + jitter * (2.0 * u - 1.0);
        Duration::try_from_secs_f64(nominal.as_secs_f64() * scale)
            .unwrap_or(self.policy.max)
            .min(self.policy.max)
    }

    /// Back to the initial delay (after a successful connection).
    pub fn reset(&mut self) {
        self.nominal = self.policy.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_cap_within_the_jitter_and_reset() {
        let mut b = Backoff::new(BackoffPolicy::default(), 7);
        let mut nominal = 0.1f64;
        for _ in 0..12 {
            let d = b.next_delay().as_secs_f64();
            assert!(d >= nominal * 0.5 - 1e-9, "{d} vs {nominal}");
            assert!(d <= (nominal * 1.5).min(10.0) + 1e-9, "{d} vs {nominal}");
            nominal = (nominal * 2.0).min(10.0);
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(150));
    }

    #[test]
    fn jitter_spreads_the_delays() {
        let delays: Vec<Duration> = (0..20)
            .map(|seed| Backoff::new(BackoffPolicy::default(), seed).next_delay())
            .collect();
        let min = delays.iter().min().copied().unwrap_or_default();
        let max = delays.iter().max().copied().unwrap_or_default();
        assert!(max - min > Duration::from_millis(30), "{min:?}..{max:?}");
    }

    #[test]
    fn odd_policies_do_not_panic() {
        let mut b = Backoff::new(
            BackoffPolicy {
                initial: Duration::MAX,
                factor: 0,
                max: Duration::MAX,
                jitter: 7.0,
            },
            1,
        );
        for _ in 0..4 {
            b.next_delay();
        }
    }
}
