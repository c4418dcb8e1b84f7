//! Iterative deepening over the search primitive, one position split into move-prefix
//! subtrees on a rayon pool.

use super::search::{is_canonical, MAX_DEPTH};
use super::{H48Error, H48Solver, SearchOutcome};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tables::{format_moves, Cube, Move};

/// How to solve.
#[derive(Clone, Debug)]
pub struct OptimalOptions {
    /// How many solutions: `Some(n)` = up to n of the shortest length found, `None` = all
    /// solutions of that length.
    pub max_solutions: Option<usize>,
    /// Shortest length tried.
    pub min_length: u8,
    /// Longest length tried (at most 30).
    pub max_length: u8,
    /// Threads for this position (at least 1).
    pub threads: usize,
    /// Stop cleanly after this long.
    pub time_limit: Option<Duration>,
    /// Stop cleanly when this becomes true.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for OptimalOptions {
    fn default() -> Self {
        OptimalOptions {
            max_solutions: Some(1),
            min_length: 0,
            max_length: 20,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            time_limit: None,
            cancel: None,
        }
    }
}

/// What [`H48Solver::solve`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptimalResult {
    /// Solutions, all of one length, sorted; each verified.
    pub solutions: Vec<Vec<Move>>,
    /// Whether the solutions are proved optimal (every shorter length is impossible or
    /// was searched completely).
    pub optimal: bool,
    /// Positions generated.
    pub nodes: u64,
    /// Main-table lookups.
    pub lookups: u64,
    /// The longest length proved to have no solution, counting from the first length tried
    /// (lengths below the lower bound are proved by the bound itself): "no solution of this
    /// length or shorter exists".
    pub depth_exhausted: Option<u8>,
    /// Whether the time limit stopped the search.
    pub timed_out: bool,
}

impl OptimalResult {
    /// A one-line summary, e.g. for a timeout: "no solution shorter than 18 found;
    /// stopped after 60 s".
    pub fn summary(&self, elapsed: Duration) -> String {
        match (self.solutions.first(), self.timed_out) {
            (Some(s), _) => format!(
                "{} ({} moves{})",
                format_moves(s),
                s.len(),
                if self.optimal { ", optimal" } else { "" }
            ),
            (None, true) => format!(
                "no solution shorter than {} found; stopped after {:.1} s",
                self.depth_exhausted.map_or(0, |d| d + 1),
                elapsed.as_secs_f64()
            ),
            (None, false) => "no solution found".to_string(),
        }
    }
}

/// All canonical move sequences of length `len`.
pub fn canonical_prefixes(len: usize) -> Vec<Vec<Move>> {
    let mut out: Vec<Vec<Move>> = vec![Vec::new()];
    for _ in 0..len {
        out = out
            .into_iter()
            .flat_map(|p| {
                Move::ALL.iter().filter_map(move |&m| {
                    let mut q = p.clone();
                    q.push(m);
                    is_canonical(&q).then_some(q)
                })
            })
            .collect();
    }
    out
}

/// Below this depth one thread searches the whole tree (it takes milliseconds).
const SPLIT_FROM_DEPTH: u8 = 12;
/// Tasks each thread interleaves: two hide most of the table latency (h48h3k2, depth 16
/// of the first nissy-set position, one thread: 1.31-1.36 s against 1.42-1.55 s for one
/// task at a time; three are no better).
const LANES: usize = 2;
/// Length of the prefixes (tasks) a depth is split into: 43,254 canonical ones, fine
/// enough to order them well and to keep both cores busy to the end.
const PREFIX_LEN: usize = 4;

/// The tasks of a split depth, computed once.
fn tasks() -> &'static [Vec<Move>] {
    static TASKS: std::sync::OnceLock<Vec<Vec<Move>>> = std::sync::OnceLock::new();
    TASKS.get_or_init(|| canonical_prefixes(PREFIX_LEN))
}

/// The order in which the tasks of the next depth are searched: most promising first.
///
/// A subtree that held many nodes at the previous depth holds many positions close to
/// solved, so it is likelier to hold a solution at this one (a heuristic of Chen Shuang's,
/// as in nissy-core and vcube); this only matters for the last depth, which stops at the
/// first solution. Prefixes ending in U, R or F have 15 continuations instead of 12 and
/// so more nodes for the same promise: their counts are scaled by sqrt(2/3), the factor
/// nissy-core uses.
fn ranked_order(counts: &[AtomicU64], tasks: &[Vec<Move>]) -> Vec<u32> {
    let rank = |i: usize| {
        let n = counts[i].load(Relaxed) as f64;
        match tasks[i].last() {
            Some(m) if m.face_index() < 3 => n * 0.8165,
            _ => n,
        }
    };
    let ranks: Vec<f64> = (0..tasks.len()).map(rank).collect();
    let mut order: Vec<u32> = (0..tasks.len() as u32).collect();
    order.sort_by(|&a, &b| {
        ranks[b as usize]
            .total_cmp(&ranks[a as usize])
            .then(a.cmp(&b))
    });
    order
}

pub(super) fn solve(
    solver: &H48Solver,
    cube: &Cube,
    opts: &OptimalOptions,
) -> Result<OptimalResult, H48Error> {
    cube.check()?;
    if opts.min_length > opts.max_length {
        return Err(H48Error::InvalidOptions(
            "min_length is larger than max_length",
        ));
    }
    if opts.max_length as usize > MAX_DEPTH {
        return Err(H48Error::InvalidOptions("max_length is larger than 30"));
    }
    if opts.max_solutions == Some(0) {
        return Err(H48Error::InvalidOptions("max_solutions is 0"));
    }
    let want = opts.max_solutions.unwrap_or(usize::MAX);
    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("h48-{i}"))
        .build()
        .ok();
    let start = Instant::now();
    let halt = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    let nodes = AtomicU64::new(0);
    let lookups = AtomicU64::new(0);
    let invalid = AtomicU64::new(0);
    let lb = solver.lower_bound(cube);
    let first = lb.max(opts.min_length);
    let mut result = OptimalResult::default();
    if lb > 0 && opts.min_length <= lb {
        // Lengths below the lower bound are impossible: proved without searching.
        result.depth_exhausted = Some((lb - 1).min(opts.max_length));
    }

    let tasks = tasks();
    let counts: Vec<AtomicU64> = tasks.iter().map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            while !finished.load(Relaxed) {
                if opts.time_limit.is_some_and(|t| start.elapsed() >= t) {
                    timed_out.store(true, Relaxed);
                    halt.store(true, Relaxed);
                    return;
                }
                if opts.cancel.as_ref().is_some_and(|c| c.load(Relaxed)) {
                    halt.store(true, Relaxed);
                    return;
                }
                std::thread::park_timeout(Duration::from_millis(2));
            }
        });
        for d in first..=opts.max_length {
            if halt.load(Relaxed) {
                break;
            }
            let found = Mutex::new(Vec::<Vec<Move>>::new());
            let count = AtomicUsize::new(0);
            let all_done = AtomicBool::new(true);
            let gather = |out: SearchOutcome| {
                nodes.fetch_add(out.nodes, Relaxed);
                lookups.fetch_add(out.lookups, Relaxed);
                invalid.fetch_add(out.invalid, Relaxed);
                if !out.exhausted {
                    all_done.store(false, Relaxed);
                }
                if !out.solutions.is_empty() {
                    let total = count.fetch_add(out.solutions.len(), Relaxed) + out.solutions.len();
                    if let Ok(mut f) = found.lock() {
                        f.extend(out.solutions);
                    }
                    if total >= want {
                        halt.store(true, Relaxed);
                    }
                }
            };
            if d < SPLIT_FROM_DEPTH {
                gather(solver.search(cube, &[], d, want, &halt));
            } else {
                // Every thread takes the next task in rank order, so the most promising
                // subtrees are searched first whatever the number of threads.
                // Each thread interleaves `LANES` tasks (see `search_lanes`).
                let order = ranked_order(&counts, tasks);
                let next = AtomicUsize::new(0);
                let work = || {
                    let mut take = || {
                        let &i = order.get(next.fetch_add(1, Relaxed))?;
                        let remaining = want.saturating_sub(count.load(Relaxed));
                        if remaining == 0 || halt.load(Relaxed) {
                            all_done.store(false, Relaxed);
                            return None;
                        }
                        Some((i as usize, &tasks[i as usize][..], remaining))
                    };
                    let mut done = |i: usize, out: SearchOutcome| {
                        counts[i].store(out.nodes, Relaxed);
                        gather(out);
                    };
                    solver.search_lanes(cube, d, LANES, &halt, &mut take, &mut done);
                };
                match &pool {
                    Some(pool) if threads > 1 => {
                        pool.broadcast(|_| work());
                    }
                    _ => work(),
                }
            }
            let mut sols = found.into_inner().unwrap_or_default();
            if !sols.is_empty() {
                sols.sort();
                sols.truncate(want);
                result.solutions = sols;
                result.optimal = opts.min_length <= lb;
                break;
            }
            if !all_done.load(Relaxed) {
                break;
            }
            result.depth_exhausted = Some(d);
        }
        finished.store(true, Relaxed);
        watcher.thread().unpark();
    });
    result.nodes = nodes.load(Relaxed);
    result.lookups = lookups.load(Relaxed);
    result.timed_out = timed_out.load(Relaxed);
    for s in &result.solutions {
        if !cube.apply_moves(s).is_solved() || s.len() > opts.max_length as usize {
            return Err(H48Error::Internal {
                solution: format_moves(s),
            });
        }
    }
    if invalid.load(Relaxed) > 0 {
        return Err(H48Error::Internal {
            solution: "(dropped by the search)".into(),
        });
    }
    Ok(result)
}
