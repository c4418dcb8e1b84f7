//! A hollow engine: an [`Engine`](crate::Engine) whose search is not done but told, for a
//! worker whose every other part is real (its session, leases, heartbeats, jobs queued
//! ahead, runner threads, shared jobs, hand-backs, cancellations, reconnects). As
//! kubemark's hollow nodes run the real kubelet with fake containers, a cluster of hollow
//! workers measures the coordinator at a thousand slots on one machine; what each search
//! costs and finds comes from a [`HollowSearch`], in the bench from a recorded trace
//! (`benchtools::hollow`).
//!
//! A hollow engine serves subtree jobs piece by piece, one piece at a time on each thread
//! that searches the job (the runner's claiming, sharing and hand-backs are the real
//! ones; [`search_piece`] stands for the search of one), and whole-position jobs (the
//! shallow search below the split depth) in one call.

use crate::h48::search::{Gate, CHECK_EVERY};
use crate::h48::SearchOutcome;
use crate::{Error, StopToken};
use proto::{PositionResult, Stop, SubtreeWork, ValidSettings};
use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tables::{Move, Position};

/// One piece of a subtree job as a hollow engine is told it: what its search costs and
/// finds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HollowPiece {
    /// Nodes the search of the piece takes.
    pub nodes: u64,
    /// The solutions in it (of the job's depth, beginning with the piece's moves).
    pub solutions: Vec<Vec<Move>>,
    /// Its moves, in a job sent with `split` where the piece is split where it runs
    /// (empty: it is searched whole).
    pub moves: Vec<Move>,
}

/// The search a hollow engine is told: what each search finds and how long it takes.
pub trait HollowSearch: Send + Sync {
    /// Subtree job `work`'s pieces, in the order of [`proto::pieces`] (the order the
    /// runner claims them in): what each one costs and holds. Asked once a job.
    fn pieces(&self, work: &SubtreeWork) -> Vec<HollowPiece>;

    /// Nodes one thread searches a second: a piece of `n` nodes holds its thread for
    /// `n / rate` seconds (asleep: a hollow thread does not spin).
    fn rate(&self) -> f64;

    /// The nodes of each one-move extension of the piece `moves` at `depth`, in move
    /// order, given the piece's `nodes` (they add up to it): asked for the moves a piece
    /// split where it runs enters.
    fn children(&self, depth: u8, moves: &[Move], nodes: u64) -> Vec<u64>;

    /// A whole position, as [`crate::H48Solver::solve`] would answer it (the shallow
    /// search below a split position's first depth); it may hold the calling thread
    /// for as long as that search would take.
    fn position(
        &self,
        position: &Position,
        settings: &ValidSettings,
        stop: &StopToken,
    ) -> Result<PositionResult, Error>;
}

/// How far a hollow thread's work may run ahead of its schedule before it sleeps, at
/// least: a sleep costs some 60 µs more than asked (the kernel's timer slack), and a real
/// search visits pieces of a few dozen nodes in well under a microsecond, so each thread
/// keeps a schedule (the time its work so far would end) and sleeps only when it is this
/// far ahead of it ([`Pace::ahead`]), and at the end of its part of a job ([`settle`]).
const AHEAD: Duration = Duration::from_millis(2);

/// A thread that was this far behind its schedule was idle (waiting for work): its
/// schedule starts again from now.
const IDLE: Duration = Duration::from_micros(200);

/// The longest a hollow thread sleeps without looking at its stop, at least
/// ([`Pace::check`]).
const STOP_CHECK: Duration = Duration::from_millis(1);

/// How a hollow thread paces itself at a node rate: how far ahead of its schedule it may
/// run, and how often it looks at its stop while asleep. Both are what the real search
/// does in nodes ([`CHECK_EVERY`] between two looks at its stop), in the thread's time at
/// its rate, and never under [`AHEAD`] and [`STOP_CHECK`]: at a low rate (a slow
/// machine's, asked for to give a search more round trips) a thread looks at its stop as
/// seldom in nodes as the real one does, so a thousand hollow threads are not woken a
/// thousand times a second each (at 2e5 a second, 64 × 16 hollow threads starved two
/// cores at one look a millisecond).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pace {
    /// Ahead of its schedule by more than this, a thread sleeps.
    ahead: Duration,
    /// Asleep, a thread looks at its stop this often.
    check: Duration,
}

impl Pace {
    /// The pace at `rate` nodes a second.
    fn at(rate: f64) -> Pace {
        let every = Duration::from_secs_f64((CHECK_EVERY as f64 / rate.max(1e-9)).min(1e6));
        Pace {
            ahead: every.max(AHEAD),
            check: every.max(STOP_CHECK),
        }
    }
}

thread_local! {
    /// When the work this thread was given would end on the real search, and its pace.
    static DUE: Cell<Option<(Instant, Pace)>> = const { Cell::new(None) };
}

/// Charges the calling thread `nodes` at `rate` a second: its schedule grows by their
/// time, and the thread sleeps when it is further ahead of it than its [`Pace`] lets it.
/// Returns the stop, when `stop` says so.
pub fn hold(nodes: u64, rate: f64, stop: &StopToken) -> Option<Stop> {
    let now = Instant::now();
    let pace = Pace::at(rate);
    let start = match DUE.get() {
        Some((due, _)) if due + IDLE >= now => due,
        _ => now,
    };
    let secs = nodes as f64 / rate.max(1e-9);
    let due = start + Duration::from_secs_f64(secs.min(1e6));
    DUE.set(Some((due, pace)));
    match due > now + pace.ahead {
        true => sleep_until(due, pace.check, stop),
        false => stop.check(),
    }
}

/// Sleeps the calling thread until its schedule ([`hold`]) is met: its work so far ends
/// when the real search's would. Returns the stop, when `stop` says so.
pub fn settle(stop: &StopToken) -> Option<Stop> {
    match DUE.get() {
        Some((due, pace)) => sleep_until(due, pace.check, stop),
        None => stop.check(),
    }
}

/// Sleeps until `until`, looking at `stop` every `check`.
fn sleep_until(until: Instant, check: Duration, stop: &StopToken) -> Option<Stop> {
    loop {
        if let Some(s) = stop.check() {
            DUE.set(None);
            return Some(s);
        }
        let now = Instant::now();
        if now >= until {
            return None;
        }
        std::thread::sleep((until - now).min(check));
    }
}

/// The search of `piece` on the calling thread: charged its nodes ([`hold`]), then its
/// solutions (up to `max_solutions`), as [`crate::H48Solver`]'s search would report them;
/// with a `gate`, extension by extension, as far as the gate lets it. The thread's part
/// of a job ends with [`settle`].
pub(crate) fn search_piece(
    search: &dyn HollowSearch,
    depth: u8,
    piece: &HollowPiece,
    max_solutions: usize,
    stop: &StopToken,
    gate: Option<&Gate>,
) -> SearchOutcome {
    let rate = search.rate();
    let mut nodes = 0;
    let mut solutions = piece.solutions.clone();
    // A piece too small to be worth splitting is held whole, as the search holds one whose
    // root takes back moves first: unless it was handed back whole before it started.
    let gate = match gate.filter(|_| !piece.moves.is_empty()) {
        Some(g) if piece.nodes < whole_below(rate) => match g.keep_whole() {
            true => None,
            false => return handed_back(),
        },
        g => g,
    };
    let held = match gate {
        // Split where it runs: held for move by move on its first levels, as far as the
        // gate lets it; its solutions are those in what it entered.
        Some(g) => {
            let mut moves = piece.moves.clone();
            let at = Split {
                search,
                depth,
                gate: g,
                rate,
                stop,
            };
            let held = at.hold(&mut moves, piece.nodes, 0, &mut nodes);
            if let (Ok(false), Some(entered)) = (held, g.freeze()) {
                let mut kept: Vec<Vec<Move>> = Vec::new();
                let _ = proto::pieces::split_parts(&piece.moves, &entered, &mut |p, k| {
                    if k {
                        kept.push(p.to_vec());
                    }
                });
                solutions.retain(|s| kept.iter().any(|p| s.starts_with(p)));
            }
            held.map(|_| ())
        }
        None => {
            nodes = piece.nodes;
            match hold(piece.nodes, rate, stop) {
                Some(s) => Err(s),
                None => Ok(()),
            }
        }
    };
    if let Err(s) = held {
        return SearchOutcome {
            solutions: Vec::new(),
            nodes,
            lookups: 0,
            stop: s,
            invalid: 0,
        };
    }
    let stop = match solutions.len() > max_solutions {
        true => {
            solutions.truncate(max_solutions);
            Stop::Completed
        }
        false => Stop::Exhausted,
    };
    SearchOutcome {
        solutions,
        nodes,
        lookups: 0,
        stop,
        invalid: 0,
    }
}

/// Nodes below which a hollow piece, or a part of one, is held whole rather than split
/// (at `rate` a thread): 2 ms, two round trips at the 1 ms the hollow runs use. Smaller
/// parts would cost the hollow process more in look-ups of the trace than they show.
fn whole_below(rate: f64) -> u64 {
    (rate * 2e-3) as u64
}

/// What the search of a piece handed back whole before it started reports: nothing.
fn handed_back() -> SearchOutcome {
    SearchOutcome {
        solutions: Vec::new(),
        nodes: 0,
        lookups: 0,
        stop: Stop::Exhausted,
        invalid: 0,
    }
}

/// A hollow piece split where it runs, held for level by level.
struct Split<'a> {
    search: &'a dyn HollowSearch,
    depth: u8,
    gate: &'a Gate,
    rate: f64,
    stop: &'a StopToken,
}

impl Split<'_> {
    /// Holds the thread for `moves`' `nodes`, extension by extension on the gate's levels
    /// from `level` on, adding what it held for to `held`: `Ok(true)` when all of it was,
    /// `Ok(false)` when the gate refused a move (the rest was handed back).
    fn hold(
        &self,
        moves: &mut Vec<Move>,
        nodes: u64,
        level: usize,
        held: &mut u64,
    ) -> Result<bool, Stop> {
        if level >= proto::pieces::SPLIT_LEVELS
            || !proto::pieces::splittable(moves.len(), self.depth)
            || nodes < whole_below(self.rate)
        {
            *held += nodes;
            return match hold(nodes, self.rate, self.stop) {
                Some(s) => Err(s),
                None => Ok(true),
            };
        }
        let kids = self.search.children(self.depth, moves, nodes);
        let last = moves.last().copied();
        for (c, &kid) in (0u32..).zip(&kids) {
            if !self.gate.enter(level, c) {
                return Ok(false);
            }
            let Some(m) = proto::pieces::child_move(last, c) else {
                break;
            };
            moves.push(m);
            let whole = self.hold(moves, kid, level + 1, held)?;
            moves.pop();
            if !whole {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A hollow optimal engine serving the table `name` (what the worker's Hello says it
/// holds) with a [`HollowSearch`]. Cheap to clone.
#[derive(Clone)]
pub struct HollowEngine {
    /// The catalog table name jobs ask for.
    name: String,
    /// What each search finds and costs.
    search: Arc<dyn HollowSearch>,
}

impl HollowEngine {
    /// A hollow engine serving jobs that name `table`.
    pub fn new(table: &str, search: Arc<dyn HollowSearch>) -> HollowEngine {
        HollowEngine {
            name: table.to_string(),
            search,
        }
    }

    /// The table its jobs name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its search.
    pub fn search(&self) -> &dyn HollowSearch {
        self.search.as_ref()
    }
}

impl std::fmt::Debug for HollowEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HollowEngine")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_held_for_its_work_in_all_not_per_piece() {
        let stop = StopToken::new();
        DUE.set(None);
        // 10,000 pieces of 20 nodes at 2e8 a second: 1 ms of search, not 10,000 sleeps.
        let t = Instant::now();
        for _ in 0..10_000 {
            assert_eq!(hold(20, 2e8, &stop), None);
        }
        assert_eq!(settle(&stop), None);
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(1), "{took:?}");
        // Pieces of 2 ms each are slept one by one, the schedule kept across them.
        DUE.set(None);
        let t = Instant::now();
        for _ in 0..5 {
            hold(400_000, 2e8, &stop);
        }
        settle(&stop);
        assert!(
            t.elapsed() >= Duration::from_millis(10),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn a_slow_thread_looks_at_its_stop_as_seldom_in_nodes_as_the_search() {
        // Fast: the floors.
        assert_eq!(
            Pace::at(1e9),
            Pace {
                ahead: AHEAD,
                check: STOP_CHECK
            }
        );
        // At 2e5 a second, 4,096 nodes take 20.48 ms.
        let slow = Pace::at(2e5);
        assert_eq!(slow.check, Duration::from_micros(20_480));
        assert_eq!(slow.ahead, slow.check);
        // A thread paced so is still held for its work, and let go when stopped.
        DUE.set(None);
        let t = Instant::now();
        assert_eq!(hold(2_000, 2e5, &StopToken::new()), None);
        assert_eq!(settle(&StopToken::new()), None);
        assert!(
            t.elapsed() >= Duration::from_millis(10),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn a_stopped_thread_is_let_go() {
        let stop = StopToken::new();
        stop.cancel();
        DUE.set(None);
        assert_eq!(hold(2_000_000_000, 1.0, &stop), Some(Stop::Cancelled));
        assert_eq!(settle(&stop), Some(Stop::Cancelled));
    }
}
