//! Claims checked, not believed: an executor's answer that a subtree holds no solution of
//! its depth (or exactly the ones it lists), or that a whole search up to a length found
//! what it says, is run again on another executor, and the two must agree.
//!
//! A solution proves itself ([`check`](super::check)); an absence does not. What makes an
//! absence checkable is that IDA* is deterministic: for one table, position, subtree,
//! depth and piece level, a search visits the same nodes, so its node count is the
//! claim's fingerprint, with its solutions. A worker that skips the search cannot know the
//! count; one that searches honestly has no reason to lie. The scheduler therefore:
//! - samples claims to run again on another executor: every claim of an executor until
//!   [`Verify::newcomer`] of its claims agreed with their checks, then a falling rate
//!   (`newcomer / claims`, at least [`Verify::floor`]); every claim with
//!   [`VerifyMode::Every`];
//! - runs a claim again at once when its nodes are implausibly few for its prediction;
//! - on disagreement runs it a third time, on a third executor, and so on until two
//!   answers agree: whoever disagreed with them is distrusted, and every open position it
//!   made claims for is searched again without it. Where no other executor can run it
//!   (two workers, one lying), an answer missing solutions the other found (each one
//!   checked) is the lie; answers apart only in their counts change no record, and both
//!   executors are suspect from then on (every claim of theirs checked);
//! - holds a position's record until the checks of its claims agree, and until each
//!   executor that claimed something for it is vouched for by a check that agreed with a
//!   claim of its made no earlier (a liar that turns after a while is caught before its
//!   first lie becomes a record). Idle slots run such a check when no sampled one comes.
//!
//! Only what is deterministic is checked: a subtree job's units answered whole with every
//! search run to its end (`Exhausted`; a unit cut short by the job's solution count is
//! not), and a whole search (a shallow job) that ended by itself. A unit that handed back
//! some of its pieces is left out (its count covers the pieces it kept). An executor in
//! this process is trusted, and one alone (no other executor holds the table) cannot be
//! checked unless every claim must be.

use super::*;
use proto::{PositionResult, SubtreeResult};

mod answers;
mod outcome;

/// Which claims are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyMode {
    /// None: every executor's word is taken (to measure what checking costs).
    Off,
    /// A sample, adapted to each executor's record (the default).
    Sample,
    /// Every claim, run twice (runs that must be proved): records wait for a second
    /// executor.
    Every,
}

/// How claims are checked ([`Config::verify`]).
#[derive(Clone, Debug)]
pub struct Verify {
    /// Which claims.
    pub mode: VerifyMode,
    /// Claims of an executor checked, all of them, until this many agreed with their
    /// checks (its record).
    pub newcomer: u32,
    /// The lowest rate claims are checked at once an executor has a record.
    pub floor: f64,
    /// Seed of the sampling (the simulation's runs are repeatable).
    pub seed: u64,
}

impl Default for Verify {
    fn default() -> Self {
        Verify {
            mode: VerifyMode::Sample,
            newcomer: 8,
            floor: 0.01,
            seed: 0x5eed_c1a1_5eed,
        }
    }
}

/// Most answers one claim gathers (the claim, its check, arbiters) before every executor
/// that gave one is distrusted.
const MAX_RUNS: usize = 4;

/// A claim holding this many times fewer nodes than its prediction is checked at once.
const IMPLAUSIBLE: u64 = 256;

/// Predictions below this many nodes are not trusted to judge a claim (small subtrees
/// vary too much).
const PLAUSIBLE_FROM: u64 = 1 << 16;

/// What a claim says, compared whole between two runs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Print {
    /// Per unit, in the job's order: its nodes and its solutions, sorted.
    Units(Vec<(u64, Vec<Vec<Move>>)>),
    /// A whole search: its solutions (sorted), what it proved, its nodes.
    Whole {
        solutions: Vec<Vec<Move>>,
        depth_exhausted: Option<u8>,
        optimal: bool,
        lower_bound: u8,
        nodes: u64,
    },
}

impl Print {
    /// Every solution it holds.
    pub(super) fn solutions(&self) -> BTreeSet<Vec<Move>> {
        match self {
            Print::Units(u) => u.iter().flat_map(|(_, s)| s.iter().cloned()).collect(),
            Print::Whole { solutions, .. } => solutions.iter().cloned().collect(),
        }
    }
}

/// One executor's standing.
#[derive(Debug, Default)]
pub(super) struct Standing {
    /// Claims of its accepted.
    claims: u64,
    /// Claims and check answers of its that agreed with another executor's.
    matched: u64,
    /// Its newest claim or check answer (by sequence number) that agreed: it was honest
    /// then, and so before.
    vouched: u64,
    /// A check run to vouch for it is open.
    vouching: bool,
    /// A check of its could not be decided: every claim of its is checked.
    suspect: bool,
}

/// An executor's last claim about one position.
#[derive(Debug)]
pub(super) struct Claim {
    seq: u64,
    work: Work,
    print: Print,
}

/// The claims about one position that may be checked, and its record while they are.
#[derive(Debug, Default)]
pub(super) struct PosClaims {
    /// Each executor's last claim.
    by: BTreeMap<ExecutorId, Claim>,
    /// Open checks its record waits for.
    pending: u32,
    /// Its record, known, waiting for its claims to be checked.
    held: Option<Result<Solved, RecordError>>,
}

/// One claim being checked.
#[derive(Debug)]
pub(super) struct Check {
    key: PosKey,
    table: String,
    /// Who made the claim.
    claimer: ExecutorId,
    /// The work to run again.
    work: Work,
    /// Every answer so far (the claim's first), with its sequence number.
    answers: Vec<(ExecutorId, Print, u64)>,
    /// Executors that ran it without an answer to compare (errors, a refused answer).
    excluded: Vec<ExecutorId>,
    /// The position's record waits for it.
    holds: bool,
    /// Run to vouch for the claimer.
    vouch: bool,
}

/// The checker's state, kept in the scheduler.
#[derive(Debug, Default)]
pub(super) struct Verifier {
    standing: HashMap<ExecutorId, Standing>,
    checks: HashMap<u64, Check>,
    /// Check jobs waiting for an executor, in priority order (kept apart from the queue:
    /// not every executor may take one).
    pub(super) queue: BTreeSet<(Priority, JobId)>,
    /// Held positions waiting for an executor to be vouched for: (claim, position).
    waiting: BTreeMap<ExecutorId, BTreeSet<(u64, PosKey)>>,
    next_seq: u64,
    next_check: u64,
    rng: u64,
}

impl Verifier {
    fn standing(&mut self, e: ExecutorId) -> &mut Standing {
        self.standing.entry(e).or_default()
    }

    /// Every claim of `e` is checked from now on.
    pub(super) fn suspect(&mut self, e: ExecutorId) {
        self.standing(e).suspect = true;
    }

    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// A uniform draw in [0, 1) (SplitMix64).
    fn draw(&mut self, seed: u64) -> f64 {
        if self.rng == 0 {
            self.rng = seed | 1;
        }
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether a check may run on `e`.
    fn may_run(&self, check: u64, e: ExecutorId) -> bool {
        self.checks
            .get(&check)
            .is_some_and(|c| !c.answers.iter().any(|a| a.0 == e) && !c.excluded.contains(&e))
    }

    /// A request is closed: its checks and held positions are forgotten.
    pub(super) fn forget_request(&mut self, req: RequestId) {
        self.checks.retain(|_, c| c.key.req != req);
        for w in self.waiting.values_mut() {
            w.retain(|&(_, k)| k.req != req);
        }
        self.waiting.retain(|_, w| !w.is_empty());
        for s in self.standing.values_mut() {
            s.vouching = false;
        }
    }
}

/// The solutions of `s`, sorted.
fn sorted(s: &[Vec<Move>]) -> Vec<Vec<Move>> {
    let mut v = s.to_vec();
    v.sort();
    v
}

/// The print of a subtree answer to `work` whose first `units` units must be answered
/// whole, every search run to its end: `None` when it is not one.
fn units_print(rs: &[SubtreeResult], units: usize) -> Option<Print> {
    let mut out = Vec::with_capacity(units);
    for (i, r) in rs.iter().take(units).enumerate() {
        if r.prefix as usize != i || r.stop != Stop::Exhausted {
            return None;
        }
        out.push((r.nodes, sorted(&r.solutions)));
    }
    (out.len() == units && units > 0).then_some(Print::Units(out))
}

/// The print of a whole search's answer that ended by itself.
fn whole_print(r: &PositionResult) -> Option<Print> {
    matches!(r.stop, Stop::Exhausted | Stop::Completed).then(|| Print::Whole {
        solutions: sorted(&r.solutions),
        depth_exhausted: r.depth_exhausted,
        optimal: r.optimal,
        lower_bound: r.lower_bound,
        nodes: r.nodes,
    })
}

impl Scheduler {
    /// What of an accepted answer can be checked: the work that runs it again and its
    /// print (see the module documentation).
    pub(in crate::scheduler) fn checkable(
        &self,
        j: &JobState,
        out: &JobOutput,
    ) -> Option<(Work, Print)> {
        let sent = j.sent.as_deref()?;
        match (&j.kind, sent, out) {
            (Kind::Subtrees { prefixes, .. }, Work::Subtrees(w), JobOutput::Subtrees(rs)) => {
                // Units it answered whole: all, or those before the one it handed back
                // pieces of.
                let units = match &j.handed {
                    None => w.prefixes.len(),
                    Some(h) => (prefixes.iter().take(h.results))
                        .take_while(|u| h.kept.contains(u))
                        .count(),
                };
                let print = units_print(rs, units)?;
                let mut again = w.clone();
                // The same piece level as the claim (fewer units never raise it).
                again.pieces = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
                again.prefixes.truncate(units);
                Some((Work::Subtrees(again), print))
            }
            (Kind::Shallow { .. }, Work::Batch { .. }, JobOutput::Batch(rs)) => {
                let [Ok(r)] = rs.as_slice() else { return None };
                Some((sent.clone(), whole_print(r)?))
            }
            _ => None,
        }
    }

    /// Whether an executor other than `but` (none of `not`) could run a check needing
    /// `table`.
    pub(in crate::scheduler) fn checker_exists(&self, table: &str, not: &[ExecutorId]) -> bool {
        self.executors.ids().any(|id| {
            !not.contains(&id)
                && self
                    .executors
                    .get(id)
                    .is_some_and(|e| !e.distrusted && e.capacity > 0 && e.tables.contains(table))
        })
    }

    /// Whether claims of `exec` are checked.
    pub(super) fn checks_claims_of(&self, exec: ExecutorId) -> bool {
        self.cfg.verify.mode != VerifyMode::Off
            && self.executors.get(exec).is_some_and(|e| !e.trusted)
    }

    /// An answer of `from` to job `j` was accepted: note its claim, and sample it for a
    /// check. Called before the answer is applied (which may finish the position).
    pub(super) fn note_claim(&mut self, from: ExecutorId, j: &JobState, out: &JobOutput) {
        if !self.checks_claims_of(from) {
            return;
        }
        let Some(seq) = j.kind.single() else { return };
        let key = PosKey { req: j.req, seq };
        let Some((work, print)) = self.checkable(j, out) else {
            return;
        };
        let every = self.cfg.verify.mode == VerifyMode::Every;
        if !every && !self.checker_exists(&j.table, &[from]) {
            self.counters.unverifiable_claims += 1;
            return;
        }
        let claim = self.verify.seq();
        let nodes: u64 = match out {
            JobOutput::Subtrees(rs) => rs.iter().map(|r| r.nodes).sum(),
            JobOutput::Batch(rs) => rs.iter().flatten().map(|r| r.nodes).sum(),
        };
        let implausible = j.predicted_nodes >= PLAUSIBLE_FROM
            && nodes.saturating_mul(IMPLAUSIBLE) < j.predicted_nodes;
        let s = self.verify.standing(from);
        s.claims += 1;
        let rate = if every || s.suspect || s.matched < u64::from(self.cfg.verify.newcomer) {
            1.0
        } else {
            (f64::from(self.cfg.verify.newcomer) / s.claims as f64).max(self.cfg.verify.floor)
        };
        let sampled = implausible || rate >= 1.0 || self.verify.draw(self.cfg.verify.seed) < rate;
        if implausible {
            self.counters.implausible_claims += 1;
        }
        let table = j.table.clone();
        let Some(p) = self.pos_mut(key) else { return };
        let claims = p.claims.get_or_insert_with(Default::default);
        claims.by.insert(
            from,
            Claim {
                seq: claim,
                work: work.clone(),
                print: print.clone(),
            },
        );
        if sampled {
            self.open_check(key, &table, from, claim, work, print, true, false);
        }
    }

    /// Opens a check of claim `seq` of `claimer` about `key`.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::scheduler) fn open_check(
        &mut self,
        key: PosKey,
        table: &str,
        claimer: ExecutorId,
        seq: u64,
        work: Work,
        print: Print,
        holds: bool,
        vouch: bool,
    ) {
        let id = self.verify.next_check;
        self.verify.next_check += 1;
        self.verify.checks.insert(
            id,
            Check {
                key,
                table: table.to_string(),
                claimer,
                work,
                answers: vec![(claimer, print, seq)],
                excluded: Vec::new(),
                holds,
                vouch,
            },
        );
        if holds {
            if let Some(c) = self.pos_mut(key).and_then(|p| p.claims.as_mut()) {
                c.pending += 1;
            }
        }
        self.counters.checks += 1;
        self.run_check(id);
    }

    /// Queues one more run of check `id`.
    pub(in crate::scheduler) fn run_check(&mut self, id: u64) {
        let Some(c) = self.verify.checks.get(&id) else {
            return;
        };
        let (key, table) = (c.key, c.table.clone());
        let Some(r) = self.requests.get_mut(&key.req) else {
            return;
        };
        let job = JobId(self.next_job);
        self.next_job += 1;
        r.jobs.insert(job);
        let prio = (key.req, key.seq, 0, 0);
        self.verify.queue.insert((prio, job));
        let kind = Kind::Check {
            seq: key.seq,
            check: id,
        };
        self.jobs
            .insert(job, JobState::queued(key.req, table, kind, prio));
    }

    /// The queued check job `exec` may run, most urgent first (a few looked at).
    pub(super) fn check_for(&self, exec: ExecutorId) -> Option<(Priority, JobId)> {
        let e = self.executors.get(exec)?;
        self.verify
            .queue
            .iter()
            .take(64)
            .find(|&&(_, id)| {
                self.jobs.get(&id).is_some_and(|j| {
                    e.tables.contains(&j.table)
                        && matches!(j.kind, Kind::Check { check, .. } if self.verify.may_run(check, exec))
                })
            })
            .copied()
    }

    /// The work of check job `id` (its check's).
    pub(super) fn check_work(&self, check: u64) -> Option<Work> {
        self.verify.checks.get(&check).map(|c| c.work.clone())
    }
}
