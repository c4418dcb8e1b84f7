//! A subtree job's search: its pieces claimed in order from one [`PieceCursor`] by one
//! thread or several, each interleaving [`LANES`] of them, and the job's result put
//! together from what every thread found.
//!
//! One thread ([`run_subtrees`]) and several (the runner's shared jobs) run the same
//! code: each thread searching the job calls [`SubtreeSearch::participate`], which
//! returns a [`Tally`] of what it found; the tallies are [absorbed](Tally::absorb) into
//! one, in any order, and [`SubtreeSearch::finish`] makes the result of it. A tally keeps
//! each piece's solutions under the piece's index and a prefix's counts as sums and the
//! worst stop, so the result depends on the pieces searched, not on which thread searched
//! them or when.

use super::pieces::{PieceCursor, Pieces};
use crate::h48::SearchOutcome;
use crate::hollow::{search_piece, HollowEngine, HollowPiece};
use crate::{Engine, H48Solver, StopToken};
use proto::{JobError, SettingsError, Stop, SubtreeResult, SubtreeWork, MAX_LENGTH};
use std::cell::Cell;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tables::{format_moves, Move};

/// Subtrees a thread interleaves (see [`H48Solver::search_lanes`]) to hide the table's
/// latency: three, measured against two, four and six on a Zen 5 core
/// (docs/performance.md, "three lanes").
const LANES: usize = 3;

/// What searches a subtree job's pieces: the H48 solver, or a hollow engine's told
/// search ([`crate::hollow`]). Cheap to clone (the tables are shared).
#[derive(Clone, Debug)]
pub(super) enum Searcher {
    /// The real search.
    H48(H48Solver),
    /// A hollow worker's: each piece held for its told nodes, its told solutions found.
    Hollow(HollowEngine),
}

impl Searcher {
    /// The searcher of subtree jobs on `engine` (`None`: a two-phase engine).
    pub(super) fn of(engine: &Engine) -> Option<Searcher> {
        match engine {
            Engine::Optimal(s) => Some(Searcher::H48(s.clone())),
            Engine::Hollow(h) => Some(Searcher::Hollow(h.clone())),
            Engine::TwoPhase(_) => None,
        }
    }
}

/// A subtree job checked and cut into its pieces.
pub(super) struct Plan {
    /// The job's pieces, in order.
    pieces: Pieces,
    /// The solutions the whole job asks for (`usize::MAX`: all).
    want: usize,
    /// A hollow search's pieces, as it tells them (empty for the real search).
    told: Vec<HollowPiece>,
}

impl Plan {
    /// The plan of `work` for `searcher`. A subtree job is not made from settings by its
    /// receiver: its two limits are checked here, against the same constants and errors
    /// as settings.
    pub(super) fn new(work: &SubtreeWork, searcher: &Searcher) -> Result<Plan, JobError> {
        if work.depth > MAX_LENGTH {
            return Err(JobError::InvalidSettings(SettingsError::MaxLength {
                value: work.depth,
            }));
        }
        let want = match work.max_solutions {
            Some(0) => return Err(JobError::InvalidSettings(SettingsError::NoSolutions)),
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => usize::MAX,
        };
        let told = match searcher {
            Searcher::H48(_) => Vec::new(),
            Searcher::Hollow(h) => h.search().pieces(work),
        };
        Ok(Plan {
            pieces: Pieces::of(work),
            want,
            told,
        })
    }
}

/// One prefix's result so far: its pieces' merged (counts added, the worst stop kept).
fn merge(into: &mut SubtreeResult, nodes: u64, lookups: u64, stop: Stop) {
    into.nodes += nodes;
    into.lookups += lookups;
    let rank = |s: Stop| match s {
        Stop::Exhausted => 0,
        Stop::Completed => 1,
        Stop::ProbeLimit => 2,
        Stop::TimeLimit => 3,
        Stop::Cancelled => 4,
    };
    if rank(stop) > rank(into.stop) {
        into.stop = stop;
    }
}

/// What one thread (or several, absorbed) found in a subtree job.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Per prefix started, by prefix index: counts and stop (its solutions are in
    /// `solutions`, put in place by [`SubtreeSearch::finish`]).
    prefixes: BTreeMap<usize, SubtreeResult>,
    /// The solutions kept, by piece index.
    solutions: BTreeMap<usize, Vec<Vec<Move>>>,
    /// The first solution that failed verification (a bug).
    fault: Option<JobError>,
    /// The last piece started.
    last: Option<usize>,
    /// Pieces searched.
    searched: usize,
}

impl Tally {
    /// Adds what `other` found (pieces no tally shares).
    pub(super) fn absorb(&mut self, other: Tally) {
        for (owner, r) in other.prefixes {
            match self.prefixes.entry(owner) {
                Entry::Vacant(e) => {
                    e.insert(r);
                }
                Entry::Occupied(mut e) => merge(e.get_mut(), r.nodes, r.lookups, r.stop),
            }
        }
        self.solutions.extend(other.solutions);
        if self.fault.is_none() {
            self.fault = other.fault;
        }
        self.last = self.last.max(other.last);
        self.searched += other.searched;
    }

    /// Pieces searched.
    pub(super) fn searched(&self) -> usize {
        self.searched
    }
}

/// What every thread searching one subtree job shares, borrowed from whoever holds it
/// (the stack of [`run_subtrees`], or a shared job of the runner).
pub(super) struct SubtreeSearch<'a> {
    /// The job's searcher.
    pub(super) solver: &'a Searcher,
    /// The job.
    pub(super) work: &'a SubtreeWork,
    /// Its pieces and solution count.
    pub(super) plan: &'a Plan,
    /// Its stop (cancel flag and the job's deadline).
    pub(super) stop: &'a StopToken,
    /// The pieces claimed.
    pub(super) cursor: &'a PieceCursor,
    /// The job's node count, for progress reports.
    pub(super) nodes: &'a AtomicU64,
    /// Solutions kept so far in the whole job.
    pub(super) found: &'a AtomicUsize,
}

impl SubtreeSearch<'_> {
    /// The pieces that can still be claimed: none once the job stopped or found what
    /// it asked for.
    pub(super) fn unclaimed(&self) -> usize {
        if self.found.load(Ordering::Acquire) >= self.plan.want || self.stop.check().is_some() {
            return 0;
        }
        self.cursor.unclaimed(self.plan.pieces.len())
    }

    /// Searches pieces of the job on this thread, [`LANES`] at a time, claiming them in
    /// order until none is left, the job stops (cancel, deadline, hand-back, its
    /// solutions found) or `leave` says so (asked before each claim); every piece claimed
    /// is searched to its end (or the job's stop) before this returns, unless the job is
    /// cancelled first. Returns what this thread found.
    pub(super) fn participate(&self, leave: &dyn Fn() -> bool) -> Tally {
        let pieces = &self.plan.pieces;
        let want = self.plan.want;
        let depth = usize::from(self.work.depth);
        let position = &self.work.position;
        let mut tally = Tally::default();
        // The last piece started (admitted) on this thread.
        let last = Cell::new(None::<usize>);
        // Pieces are claimed (their entries prefetched) a few ahead of their start: they
        // are kept by a hand-back, so they start unless the job is cancelled.
        let mut next = || {
            let found = self.found.load(Ordering::Acquire);
            if found >= want || self.stop.check().is_some() || leave() {
                return None;
            }
            let k = self.cursor.claim(pieces.len())?;
            let (piece, _) = pieces.get(k)?;
            Some((k, piece, want - found, self.cursor.gate(k)))
        };
        let mut admit = |k: usize| {
            if self.stop.is_cancelled() {
                return false;
            }
            last.set(last.get().max(Some(k)));
            true
        };
        let mut done = |k: usize, out: SearchOutcome| {
            self.cursor.ended(k);
            let Some((piece, owner)) = pieces.get(k) else {
                return;
            };
            self.nodes.fetch_add(out.nodes, Ordering::Relaxed);
            if out.invalid > 0 && tally.fault.is_none() {
                tally.fault = Some(JobError::Verification {
                    moves: "(dropped by the search)".into(),
                });
            }
            for s in &out.solutions {
                let ok = s.len() == depth && s.starts_with(piece) && position.is_solved_by(s);
                if !ok && tally.fault.is_none() {
                    tally.fault = Some(JobError::Verification {
                        moves: format_moves(s),
                    });
                }
            }
            let mut solutions = out.solutions;
            let mut why = out.stop;
            let room = self.reserve(solutions.len());
            if solutions.len() > room {
                // Another lane (or thread) found its share first: the job asked for no
                // more.
                solutions.truncate(room);
                why = Stop::Completed;
            }
            let r = tally
                .prefixes
                .entry(owner)
                .or_insert_with(|| SubtreeResult {
                    prefix: u32::try_from(owner).unwrap_or(u32::MAX),
                    solutions: Vec::new(),
                    nodes: 0,
                    lookups: 0,
                    stop: Stop::Exhausted,
                });
            merge(r, out.nodes, out.lookups, why);
            if !solutions.is_empty() {
                tally.solutions.insert(k, solutions);
            }
            tally.searched += 1;
        };
        match self.solver {
            Searcher::H48(solver) => solver.search_lanes_gated(
                position.cube(),
                self.work.depth,
                LANES,
                self.stop,
                &mut next,
                &mut admit,
                &mut done,
            ),
            // One piece at a time: a hollow thread is held, not searching.
            Searcher::Hollow(h) => {
                let none = HollowPiece::default();
                let depth = self.work.depth;
                while let Some((k, _, room, gate)) = next() {
                    if !admit(k) {
                        break;
                    }
                    let told = self.plan.told.get(k).unwrap_or(&none);
                    done(
                        k,
                        search_piece(h.search(), depth, told, room, self.stop, gate),
                    );
                }
                crate::hollow::settle(self.stop);
            }
        }
        tally.last = last.get();
        tally
    }

    /// Counts up to `n` more solutions in the whole job: how many fit (the rest are
    /// beyond what the job asked for).
    fn reserve(&self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let want = self.plan.want;
        let mut kept = 0;
        // The closure always answers `Some`: the update cannot fail.
        let _ = self
            .found
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |f| {
                kept = n.min(want.saturating_sub(f));
                Some(f + kept)
            });
        kept
    }

    /// The job's result from what its threads found (`tally`, absorbed from every
    /// thread, once all of them are done): one [`SubtreeResult`] per prefix started, in
    /// prefix order, each prefix's solutions in piece order.
    pub(super) fn finish(&self, tally: Tally) -> Result<Vec<SubtreeResult>, JobError> {
        if let Some(e) = tally.fault {
            return Err(e);
        }
        let pieces = &self.plan.pieces;
        let mut results = tally.prefixes;
        // A prefix whose later pieces never started, neither handed back nor past the
        // last piece, was cut short: by the job's solution count, or by its stop.
        if let Some(last) = tally.last {
            let next_piece = pieces.get(last + 1);
            if let (Some((_, owner)), false) = (next_piece, self.cursor.handed_back()) {
                if let Some(r) = results.get_mut(&owner) {
                    let why = self.stop.check().unwrap_or(Stop::Completed);
                    merge(r, 0, 0, why);
                }
            }
        }
        for (k, solutions) in tally.solutions {
            let owner = pieces.get(k).map(|(_, owner)| owner);
            if let Some(r) = owner.and_then(|o| results.get_mut(&o)) {
                r.solutions.extend(solutions);
            }
        }
        Ok(results.into_values().collect())
    }
}

/// The subtrees of `work` on this thread, as their pieces, claimed through `cursor`
/// (see [`run_job`](super::run_job)).
pub(super) fn run_subtrees(
    solver: &Searcher,
    work: &SubtreeWork,
    stop: &StopToken,
    nodes: &AtomicU64,
    cursor: &PieceCursor,
) -> Result<Vec<SubtreeResult>, JobError> {
    let plan = Plan::new(work, solver)?;
    let found = AtomicUsize::new(0);
    let search = SubtreeSearch {
        solver,
        work,
        plan: &plan,
        stop,
        cursor,
        nodes,
        found: &found,
    };
    let tally = search.participate(&|| false);
    search.finish(tally)
}
