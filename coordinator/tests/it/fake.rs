//! The fake executors' answers, shared by the simulation and the scheduler tests: every
//! job is answered deterministically from the job alone, from a made-up truth about
//! each position (its distance, lower bound, and which subtrees hold its solutions).
#![allow(dead_code)]

use proto::{Job, JobOutput, JobResult, Method, PositionResult, Stop, SubtreeResult, Work};
use std::hash::{Hash, Hasher};
use tables::{Move, Position};

pub const TABLE: &str = "tbl";
pub const PREFIX_LEN: usize = 2;

pub fn hash<T: Hash>(t: T) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// The fake truth about a position: its distance and where its solutions are.
pub struct Truth {
    pub distance: u8,
    pub lower_bound: u8,
    /// Prefix indices holding a solution at `distance`.
    pub at_distance: Vec<usize>,
    /// Prefix indices holding a solution at `distance + 1`.
    pub beyond: Vec<usize>,
}

pub fn truth(p: &Position, all_mode: bool, prefixes: &[Vec<Move>]) -> Truth {
    let h = hash(p.cube());
    let distance = 8 + (h % 9) as u8; // 8..=16
    let lower_bound = distance - ((h >> 8) % 3) as u8;
    let n = prefixes.len();
    let k = if all_mode { 2 } else { 1 };
    let at_distance = (0..k).map(|i| (hash((h, i)) as usize) % n).collect();
    let beyond = (0..3).map(|i| (hash((h, i, 7)) as usize) % n).collect();
    Truth {
        distance,
        lower_bound,
        at_distance,
        beyond,
    }
}

pub fn filler(len: usize, salt: u64) -> Vec<Move> {
    // Any moves: the scheduler never checks them, the records are compared.
    (0..len)
        .map(|i| Move::ALL[(hash((salt, i)) % 18) as usize])
        .collect()
}

/// `start` followed by `len` canonical moves chosen by `salt`.
pub fn extend(start: &[Move], len: usize, salt: u64) -> Vec<Move> {
    let mut s = start.to_vec();
    for i in 0..len {
        let mask = tables::canonical::allowed_after(s.last().copied());
        let allowed: Vec<Move> = Move::ALL
            .into_iter()
            .filter(|m| mask & (1 << m.index()) != 0)
            .collect();
        s.push(allowed[(hash((salt, i)) % allowed.len() as u64) as usize]);
    }
    s
}

/// The solutions a whole search finds at the distance: those the subtrees hold (the
/// same whichever way the position is searched), sorted, as many as asked.
fn whole_solutions(t: &Truth, prefixes: &[Vec<Move>], max: Option<u32>) -> Vec<Vec<Move>> {
    let mut sols: Vec<Vec<Move>> = (t.at_distance.iter())
        .map(|&idx| {
            extend(
                &prefixes[idx],
                t.distance as usize - prefixes[idx].len(),
                idx as u64,
            )
        })
        .collect();
    sols.sort();
    sols.dedup();
    sols.truncate(max.map_or(usize::MAX, |m| m as usize));
    sols
}

/// The deterministic answer to a job.
pub fn answer(job: &Job, all_mode: bool, prefixes: &[Vec<Move>]) -> JobOutput {
    match &job.work {
        Work::Batch { settings, items } => JobOutput::Batch(
            items
                .iter()
                .map(|it| {
                    let h = hash(it.position.cube());
                    if settings.method == Method::TwoPhase {
                        return PositionResult {
                            line: it.line,
                            solutions: vec![filler(15 + (h % 5) as usize, h)],
                            optimal: false,
                            lower_bound: 0,
                            depth_exhausted: None,
                            nodes: h % 1000,
                            lookups: h % 77,
                            micros: 10,
                            stop: Stop::Completed,
                        };
                    }
                    let t = truth(&it.position, all_mode, prefixes);
                    let (lo, hi) = (settings.min_length, settings.max_length);
                    let found = t.distance >= lo && t.distance <= hi;
                    PositionResult {
                        line: it.line,
                        solutions: if found {
                            whole_solutions(&t, prefixes, settings.max_solutions)
                        } else {
                            vec![]
                        },
                        optimal: found && lo <= t.lower_bound,
                        lower_bound: t.lower_bound,
                        depth_exhausted: if found {
                            Some(t.distance - 1)
                        } else {
                            Some(hi.max(t.lower_bound.saturating_sub(1)).min(hi))
                        },
                        nodes: h % 500,
                        lookups: 0,
                        micros: 5,
                        stop: if found {
                            Stop::Completed
                        } else {
                            Stop::Exhausted
                        },
                    }
                })
                .map(Ok)
                .collect(),
        ),
        Work::Subtrees(w) => {
            let t = truth(&w.position, all_mode, prefixes);
            let mut out = Vec::new();
            let mut total = 0usize;
            for (i, p) in w.prefixes.iter().enumerate() {
                if w.max_solutions.is_some_and(|m| total >= m as usize) {
                    break;
                }
                // A unit is a prefix or (a heavy prefix, split) one of its descendants:
                // a prefix's solution lies in the one descendant it starts with.
                let top = &p[..prefixes[0].len().min(p.len())];
                let idx = prefixes
                    .iter()
                    .position(|q| q == top)
                    .expect("known prefix");
                let mut sols = Vec::new();
                let holds = |list: &[usize]| list.contains(&idx);
                let within = |salt: u64| {
                    let s = extend(top, w.depth as usize - top.len(), salt);
                    s.starts_with(p).then_some(s)
                };
                if w.depth == t.distance && holds(&t.at_distance) {
                    sols.extend(within(idx as u64));
                }
                if w.depth == t.distance + 1 && holds(&t.beyond) {
                    sols.extend(within(999 + idx as u64));
                }
                total += sols.len();
                out.push(SubtreeResult {
                    prefix: i as u32,
                    nodes: hash((idx, p.len(), w.depth, hash(w.position.cube()))) % 100 + 1,
                    lookups: 1,
                    stop: if sols.is_empty() {
                        Stop::Exhausted
                    } else {
                        Stop::Completed
                    },
                    solutions: sols,
                });
            }
            JobOutput::Subtrees(out)
        }
    }
}

pub fn poisoned(job: &Job) -> JobOutput {
    // What a cancelled job might say: partial, and wrong.
    match &job.work {
        Work::Batch { items, .. } => JobOutput::Batch(
            items
                .iter()
                .take(1)
                .map(|it| PositionResult {
                    line: it.line,
                    solutions: vec![filler(3, 4242)],
                    optimal: true,
                    lower_bound: 0,
                    depth_exhausted: None,
                    nodes: 1,
                    lookups: 0,
                    micros: 0,
                    stop: Stop::Cancelled,
                })
                .map(Ok)
                .collect(),
        ),
        Work::Subtrees(_) => JobOutput::Subtrees(vec![SubtreeResult {
            prefix: 0,
            solutions: vec![filler(5, 4243)],
            nodes: 1,
            lookups: 0,
            stop: Stop::Cancelled,
        }]),
    }
}

/// A job's result with `output`.
pub fn result(job: &Job, output: Result<JobOutput, proto::JobError>) -> JobResult {
    JobResult {
        id: job.id,
        attempt: job.attempt,
        micros: 1,
        output,
    }
}

/// Whether `s` is a solution the fake executors could give `p` (the simulation's stand-in
/// for applying the moves: its positions' made-up truths are not the cube's).
pub fn solves(p: &Position, s: &[Move]) -> bool {
    static PREFIXES: std::sync::OnceLock<Vec<Vec<Move>>> = std::sync::OnceLock::new();
    let prefixes = PREFIXES.get_or_init(|| tables::canonical::sequences(PREFIX_LEN));
    let h = hash(p.cube());
    // Two-phase, then a whole optimal search, then the subtrees of either mode (the
    // all-solutions mode's are a superset).
    if s == filler(15 + (h % 5) as usize, h) {
        return true;
    }
    let t = truth(p, true, prefixes);
    if s == filler(t.distance as usize, h) {
        return true;
    }
    let at = |list: &[usize], len: usize, salt: u64| {
        list.iter().any(|&i| {
            len >= PREFIX_LEN && s == extend(&prefixes[i], len - PREFIX_LEN, salt + i as u64)
        })
    };
    at(&t.at_distance, t.distance as usize, 0) || at(&t.beyond, t.distance as usize + 1, 999)
}

/// A wrong answer to `job`, in the right shape: what a rogue executor says.
pub fn wrong(job: &Job) -> JobOutput {
    match &job.work {
        Work::Batch { items, .. } => JobOutput::Batch(
            items
                .iter()
                .map(|it| PositionResult {
                    line: it.line,
                    solutions: vec![filler(1, 4244)],
                    optimal: true,
                    lower_bound: 1,
                    depth_exhausted: Some(0),
                    nodes: 1,
                    lookups: 0,
                    micros: 0,
                    stop: Stop::Completed,
                })
                .map(Ok)
                .collect(),
        ),
        Work::Subtrees(w) => JobOutput::Subtrees(
            w.prefixes
                .iter()
                .enumerate()
                .map(|(i, p)| SubtreeResult {
                    prefix: i as u32,
                    // The right length and prefix, not a solution.
                    solutions: vec![extend(p, (w.depth as usize).saturating_sub(p.len()), 4245)],
                    nodes: 1,
                    lookups: 0,
                    stop: Stop::Completed,
                })
                .collect(),
        ),
    }
}

/// The answer of a job that kept its first `kept` pieces (all: `None`): only its
/// prefixes with a piece kept, and only the solutions in those pieces.
pub fn kept_answer(
    j: &Job,
    kept: Option<&u32>,
    all_mode: bool,
    prefixes: &[Vec<Move>],
) -> JobOutput {
    let kept = kept.map(|&k| (k, Vec::new()));
    split_answer(j, kept.as_ref(), all_mode, prefixes)
}

/// What a job answered a request to hand back with: the pieces it kept, and its running
/// pieces split where they run.
pub type Kept = (u32, Vec<proto::PieceSplit>);

/// A fake executor's answer to a request to hand back job `j`: half its pieces kept;
/// with `running` and a job sent with `split`, its splittable pieces split too, in turn
/// handed back whole, kept in part on one level and on two: at once with every piece
/// kept (a job of odd id), or at a second request (`before`: the first answer) after a
/// first that handed back the half not claimed (even), as a worker answers.
pub fn split_of(j: &Job, running: bool, before: Option<&Kept>) -> Kept {
    let n = pieces_of(j);
    let Work::Subtrees(w) = &j.work else {
        return ((n / 2) as u32, Vec::new());
    };
    if !(running && w.split) {
        return ((n / 2) as u32, Vec::new());
    }
    let kept = match before {
        Some(b) => b.0,
        None if j.id.0.is_multiple_of(2) => return ((n / 2) as u32, Vec::new()),
        None => n as u32,
    };
    let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
    let mut split = Vec::new();
    let mut k = 0u32;
    for p in &w.prefixes {
        let l = proto::pieces::levels_for(p.len(), w.depth, levels);
        proto::pieces::for_each_piece(p, l, &mut |q| {
            if k < kept && proto::pieces::splittable(q.len(), w.depth) {
                let entered = match k % 3 {
                    0 => Vec::new(),
                    1 => vec![2],
                    _ => vec![3, 1],
                };
                split.push(proto::PieceSplit { piece: k, entered });
            }
            k += 1;
        });
    }
    (kept, split)
}

/// The answer of a job that kept what `kept` says (all: `None`): only its prefixes with
/// a part kept, and only the solutions in those parts.
pub fn split_answer(
    j: &Job,
    kept: Option<&Kept>,
    all_mode: bool,
    prefixes: &[Vec<Move>],
) -> JobOutput {
    let out = answer(j, all_mode, prefixes);
    let (Some((k, split)), Work::Subtrees(w), JobOutput::Subtrees(rs)) = (kept, &j.work, &out)
    else {
        return out;
    };
    let k = *k;
    let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
    let mut at = 0u32;
    let kept_pieces: Vec<Vec<Vec<Move>>> = (w.prefixes.iter())
        .map(|p| {
            let l = proto::pieces::levels_for(p.len(), w.depth, levels);
            let mut mine = Vec::new();
            proto::pieces::for_each_piece(p, l, &mut |q| {
                match split.iter().find(|s| s.piece == at) {
                    _ if at >= k => {}
                    None => mine.push(q.to_vec()),
                    Some(s) => {
                        let _ = proto::pieces::split_parts(q, &s.entered, &mut |part, keep| {
                            if keep {
                                mine.push(part.to_vec());
                            }
                        });
                    }
                }
                at += 1;
            });
            mine
        })
        .collect();
    let rs = (rs.iter())
        .filter(|r| {
            kept_pieces
                .get(r.prefix as usize)
                .is_some_and(|m| !m.is_empty())
        })
        .map(|r| {
            let mine = &kept_pieces[r.prefix as usize];
            let mut r = r.clone();
            r.solutions
                .retain(|s| mine.iter().any(|q| s.starts_with(q)));
            if r.solutions.is_empty() {
                r.stop = proto::Stop::Exhausted;
            }
            r
        })
        .collect();
    JobOutput::Subtrees(rs)
}

/// How many pieces a job is searched as (0 for a batch job).
pub fn pieces_of(j: &Job) -> usize {
    match &j.work {
        Work::Subtrees(w) => {
            let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
            proto::pieces::total(&w.prefixes, w.depth, levels)
        }
        Work::Batch { .. } => 0,
    }
}
