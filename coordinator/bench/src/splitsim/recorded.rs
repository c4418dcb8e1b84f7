//! The recorded search as the simulated executors see it: what each job costs and finds.
//!
//! A subtree job searches its prefixes in order, each for its recorded node count at the
//! job's depth, and stops after a prefix that brings its solutions up to what it asks
//! for. A prefix longer than the grain gets its parent's nodes split in proportion to
//! the parent's recorded children where the trace holds them (the 5-move children of
//! heavy 4-move prefixes; in a refined trace, the 6- and 7-move children of heavy 5- and
//! 6-move ones), else an equal share of them. Depths the trace does not hold (started
//! early past the optimal one) cost 13 times the deepest recorded depth's counts, and so
//! do the subtrees of an optimal depth the recording did not search (a trace recorded
//! without `--all` stops at its first solution).

use crate::trace::{rank, DepthIndex, Header, Trace, TraceError, GRAIN};
use proto::{Job, JobOutput, PositionResult, Stop, SubtreeResult, Work};
use tables::Move;

/// Node counts per prefix, by depth, for the prefixes of one length.
struct Level {
    /// The canonical prefixes of this length, in the scheduler's order (none for a length
    /// past [`FINEST_LISTED`]: too many to list).
    prefixes: Vec<Vec<Move>>,
    /// Each depth's counts (by depth), indexed as `prefixes` (a prefix's index there is
    /// its [`rank`]), made when first asked for.
    by_depth: Vec<Option<Vec<u64>>>,
    /// For a length past [`FINEST_LISTED`]: each recorded depth's counts, indexed for
    /// single look-ups, made when first asked for.
    indexed: Vec<Option<DepthIndex>>,
}

/// The longest prefixes whose counts are worked out for every prefix of their length at
/// once (577,368 of 5 moves; 6 would be some 7.7 million): longer ones are looked up one
/// by one.
const FINEST_LISTED: usize = GRAIN + 1;

impl Level {
    fn new(len: usize) -> Level {
        let prefixes = match len <= FINEST_LISTED {
            true => tables::canonical::sequences(len),
            false => Vec::new(),
        };
        Level {
            prefixes,
            by_depth: Vec::new(),
            indexed: Vec::new(),
        }
    }

    /// The index of the recorded `depth`, made when first asked for.
    fn indexed(&mut self, trace: &Trace, depth: u8) -> &DepthIndex {
        let d = usize::from(depth);
        if self.indexed.len() <= d {
            self.indexed.resize_with(d + 1, || None);
        }
        self.indexed[d].get_or_insert_with(|| {
            trace
                .depths
                .get(&depth)
                .map(DepthIndex::new)
                .unwrap_or_default()
        })
    }

    /// The count of `prefix` at the recorded `depth`.
    fn count(&mut self, trace: &Trace, depth: u8, prefix: &[Move]) -> u64 {
        self.indexed(trace, depth).count(prefix)
    }

    /// `nodes`, those of `prefix`'s first [`FINEST_LISTED`] moves, split below them as
    /// the recorded `depth` splits them.
    fn split(&mut self, trace: &Trace, depth: u8, prefix: &[Move], nodes: u64) -> u64 {
        (self.indexed(trace, depth)).split(prefix, FINEST_LISTED, nodes)
    }
}

/// What one job does on its slot: its cost and what it reports when it ends.
#[derive(Clone, Debug)]
pub(crate) struct JobRun {
    /// Its depth (0: the shallow job).
    pub depth: u8,
    /// Nodes it searches before it ends (its first `runs` pieces).
    pub nodes: u64,
    /// A shallow job's output (a subtree job's is made from its pieces).
    pub batch: Option<JobOutput>,
    /// A subtree job's pieces in the order it starts them (see [`proto::pieces`]).
    pub pieces: Vec<Piece>,
    /// The pieces it searches: all, or up to the one that brings its solutions up to
    /// what it asks for, or those it kept when it handed back the rest.
    pub runs: usize,
    /// Solutions it asks for at most.
    pub want: usize,
    /// Its units, the longest unit's moves and its piece levels (0s: a shallow job).
    pub shape: (u32, u8, u8),
    /// It was sent with `split`: a hand-back can take what a running piece has not
    /// entered (the pieces split where they run have their moves).
    pub split: bool,
}

/// One piece of a subtree job.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    /// Its prefix's index in the job.
    pub owner: u32,
    /// Its nodes.
    pub nodes: u64,
    /// The optimal depth's solutions in it.
    pub solutions: Vec<Vec<Move>>,
    /// Its moves, where its job was sent with `split` and it is split where it runs
    /// ([`proto::pieces::splittable`]; empty otherwise).
    pub moves: Vec<Move>,
}

impl JobRun {
    /// Keeps only the first `kept` pieces (the rest were handed back).
    pub fn keep(&mut self, kept: usize) {
        if kept < self.runs {
            self.runs = kept;
            self.nodes = self.pieces[..kept].iter().map(|p| p.nodes).sum();
        }
    }

    /// Piece `k` keeps only the parts its search entered (`entered`, as a
    /// [`proto::PieceSplit`] says), which hold `nodes`: its solutions are theirs.
    pub fn keep_entered(&mut self, k: usize, entered: &[u32], nodes: u64) {
        let Some(p) = self.pieces.get_mut(k) else {
            return;
        };
        let mut kept: Vec<Vec<Move>> = Vec::new();
        let _ = proto::pieces::split_parts(&p.moves, entered, &mut |q, keep| {
            if keep {
                kept.push(q.to_vec());
            }
        });
        p.solutions
            .retain(|s| kept.iter().any(|q| s.starts_with(q)));
        p.nodes = nodes;
        p.moves.clear();
        self.nodes = self.pieces[..self.runs].iter().map(|p| p.nodes).sum();
    }

    /// What it reports, and whether it holds an optimal solution.
    pub fn output(&self) -> (JobOutput, bool) {
        if let Some(out) = &self.batch {
            return (out.clone(), false);
        }
        let mut found = 0usize;
        let mut out: Vec<SubtreeResult> = Vec::new();
        for p in &self.pieces[..self.runs] {
            let mut sols = p.solutions.clone();
            let room = self.want - found;
            let stop = if sols.len() > room {
                sols.truncate(room);
                Stop::Completed
            } else {
                Stop::Exhausted
            };
            found += sols.len();
            match out.last_mut() {
                Some(r) if r.prefix == p.owner => {
                    r.nodes += p.nodes;
                    r.solutions.extend(sols);
                    if stop == Stop::Completed {
                        r.stop = stop;
                    }
                }
                _ => out.push(SubtreeResult {
                    prefix: p.owner,
                    solutions: sols,
                    nodes: p.nodes,
                    lookups: 0,
                    stop,
                }),
            }
        }
        (JobOutput::Subtrees(out), found > 0)
    }
}

/// What the parts of a piece split where it runs cost (the replay's one mapping,
/// [`Recorded`], and test stand-ins).
pub trait Costs {
    /// The nodes of each one-move extension of a piece (its depth, moves and nodes), in
    /// move order, adding up to its nodes.
    fn children(&mut self, depth: u8, moves: &[Move], nodes: u64) -> Vec<u64>;
    /// The nodes of `moves`' subtree at `depth` as a unit of a job of its own.
    fn cost(&mut self, depth: u8, moves: &[Move]) -> u64;
}

impl Costs for Recorded<'_> {
    fn children(&mut self, depth: u8, moves: &[Move], nodes: u64) -> Vec<u64> {
        // The depth's counts were had for the piece itself: no error is left to meet.
        Recorded::children(self, depth, moves, nodes).unwrap_or_default()
    }

    fn cost(&mut self, depth: u8, moves: &[Move]) -> u64 {
        Recorded::cost(self, depth, moves).unwrap_or(0)
    }
}

/// `total` split in proportion to `weights` (in equal parts where they are all 0),
/// rounded so that the parts add up to it.
fn shares(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&x| u128::from(x)).sum();
    let denom = match sum {
        0 => weights.len() as u128,
        _ => sum,
    };
    let mut cum = 0u128;
    let mut given = 0u64;
    (weights.iter())
        .map(|&w| {
            cum += match sum {
                0 => 1,
                _ => u128::from(w),
            };
            let upto = (u128::from(total) * cum / denom.max(1)) as u64;
            let share = upto - given;
            given = upto;
            share
        })
        .collect()
}

/// The trace as job costs and outputs.
pub(crate) struct Recorded<'t> {
    trace: &'t Trace,
    /// The trace's solutions, sorted.
    solutions: Vec<Vec<Move>>,
    /// The optimal depth (`u8::MAX` when the trace found none).
    optimal: u8,
    /// Node counts of the scheduler's prefixes and of their one-move children (split
    /// prefixes), by length (up to [`FINEST_LISTED`] + 1, which serves every longer one).
    levels: Vec<Option<Level>>,
    /// The last 5-move prefix a longer one was costed under, at its depth: its nodes and
    /// the depth that splits them ([`stand_in`]).
    head: Option<(u8, Vec<Move>, u64, Option<u8>)>,
}

impl<'t> Recorded<'t> {
    pub fn new(trace: &'t Trace) -> Recorded<'t> {
        Recorded {
            trace,
            solutions: {
                let mut s = trace.solutions();
                s.sort_unstable();
                s
            },
            optimal: trace.header.optimal.unwrap_or(u8::MAX),
            levels: Vec::new(),
            head: None,
        }
    }

    /// The trace's header.
    pub fn header(&self) -> &'t Header {
        &self.trace.header
    }

    /// The optimal depth (`u8::MAX` when the trace found none).
    pub fn optimal(&self) -> u8 {
        self.optimal
    }

    /// What `job` does on a slot.
    pub fn run(&mut self, job: &Job) -> Result<JobRun, TraceError> {
        let h = self.header();
        let w = match &job.work {
            Work::Batch { items, .. } => {
                let line = items.first().map_or(1, |i| i.line);
                return Ok(JobRun {
                    depth: 0,
                    nodes: h.shallow_nodes,
                    pieces: Vec::new(),
                    runs: 0,
                    want: 0,
                    shape: (0, 0, 0),
                    split: false,
                    batch: Some(JobOutput::Batch(vec![Ok(shallow_result(h, line))])),
                });
            }
            Work::Subtrees(w) => w,
        };
        let want = w.max_solutions.map_or(usize::MAX, |n| n as usize);
        let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
        let mut pieces = Vec::new();
        let mut moves = Vec::new();
        let mut weights = Vec::new();
        for (i, p) in w.prefixes.iter().enumerate() {
            let l = proto::pieces::levels_for(p.len(), w.depth, levels);
            moves.clear();
            proto::pieces::for_each_piece(p, l, &mut |q| moves.push(q.to_vec()));
            // The unit's own count is what the replay of it whole costs; its pieces
            // share it as their own counts do (finer counts only say how it is spread:
            // at an optimal depth recorded in part, a level's extrapolation of the
            // subtrees not searched differs from another's).
            let unit = self.cost(w.depth, p)?;
            weights.clear();
            for q in &moves {
                weights.push(self.cost(w.depth, q)?);
            }
            let shares = shares(unit, &weights);
            for (q, share) in moves.iter().zip(shares) {
                let sols: Vec<Vec<Move>> = match w.depth == self.optimal {
                    // Sorted: the solutions that begin with `q` are one run from its place.
                    true => {
                        let from =
                            (self.solutions).partition_point(|s| s.as_slice() < q.as_slice());
                        (self.solutions[from..].iter())
                            .take_while(|s| s.starts_with(q))
                            .cloned()
                            .collect()
                    }
                    false => Vec::new(),
                };
                let split = w.split && proto::pieces::splittable(q.len(), w.depth);
                pieces.push(Piece {
                    owner: i as u32,
                    nodes: share,
                    solutions: sols,
                    moves: if split { q.clone() } else { Vec::new() },
                });
            }
        }
        // Pieces run in order until the job holds what it asks for.
        let mut found = 0usize;
        let mut runs = pieces.len();
        for (k, p) in pieces.iter().enumerate() {
            found += p.solutions.len();
            if found >= want {
                runs = k + 1;
                break;
            }
        }
        let nodes = pieces[..runs].iter().map(|p| p.nodes).sum();
        Ok(JobRun {
            depth: w.depth,
            nodes,
            batch: None,
            pieces,
            runs,
            want,
            shape: (
                w.prefixes.len() as u32,
                w.prefixes.iter().map(Vec::len).max().unwrap_or(0) as u8,
                levels,
            ),
            split: w.split,
        })
    }

    /// The nodes of each one-move extension of `piece` (in move order) at `depth`, given
    /// the piece's: split as their own counts split them.
    pub fn children(
        &mut self,
        depth: u8,
        piece: &[Move],
        nodes: u64,
    ) -> Result<Vec<u64>, TraceError> {
        let last = piece.last().copied();
        let moves: Vec<Move> = (0..proto::pieces::children(last))
            .map_while(|c| proto::pieces::child_move(last, c))
            .collect();
        let weights = match piece.len() >= FINEST_LISTED {
            // Past the listed lengths, the children's costs are the piece's split one move
            // further, as `cost` splits them: worked out together.
            true => {
                let (five, stand_in) = self.head(depth, &piece[..FINEST_LISTED])?;
                let trace = self.trace;
                let level = self.level(FINEST_LISTED + 1);
                let index = match stand_in {
                    Some(d) => level.indexed(trace, d),
                    None => &DepthIndex::default(),
                };
                let own = index.split(piece, FINEST_LISTED, five);
                index.steps(piece, own, &moves)
            }
            false => {
                let mut kid = piece.to_vec();
                let mut weights = Vec::with_capacity(moves.len());
                for &m in &moves {
                    kid.push(m);
                    weights.push(self.cost(depth, &kid)?);
                    kid.pop();
                }
                weights
            }
        };
        Ok(shares(nodes, &weights))
    }

    /// The nodes of the [`FINEST_LISTED`]-move `head` at `depth` and the depth whose
    /// counts split them below it ([`stand_in`]): worked out once for the pieces below one
    /// head (a job's pieces come in order, the ones below one head together).
    fn head(&mut self, depth: u8, head: &[Move]) -> Result<(u64, Option<u8>), TraceError> {
        if let Some((d, h, five, s)) = &self.head {
            if *d == depth && h.as_slice() == head {
                return Ok((*five, *s));
            }
        }
        let five = self.cost(depth, head)?;
        let trace = self.trace;
        let s = stand_in(trace, self.level(FINEST_LISTED + 1), depth, head);
        self.head = Some((depth, head.to_vec(), five, s));
        Ok((five, s))
    }

    /// The nodes of `prefix`'s subtree at `depth`.
    fn cost(&mut self, depth: u8, prefix: &[Move]) -> Result<u64, TraceError> {
        if prefix.len() > FINEST_LISTED {
            let (five, stand_in) = self.head(depth, &prefix[..FINEST_LISTED])?;
            let trace = self.trace;
            // One level for every length past the listed ones: its look-ups serve all.
            let level = self.level(FINEST_LISTED + 1);
            return Ok(match stand_in {
                Some(d) => level.split(trace, d, prefix, five),
                None => DepthIndex::default().split(prefix, FINEST_LISTED, five),
            });
        }
        let trace = self.trace;
        let level = self.level(prefix.len());
        let d = usize::from(depth);
        if level.by_depth.len() <= d {
            level.by_depth.resize(d + 1, None);
        }
        if level.by_depth[d].is_none() {
            level.by_depth[d] = Some(depth_costs(trace, depth, &level.prefixes)?);
        }
        let costs = level.by_depth[d].as_deref().unwrap_or_default();
        Ok(rank(prefix)
            .and_then(|i| costs.get(i).copied())
            .unwrap_or(0))
    }

    /// Works out now what the jobs of `depth` will look up first (the counts of every
    /// prefix up to [`FINEST_LISTED`] moves), so that a hollow worker does not stall on
    /// it mid-run.
    pub fn warm(&mut self, depth: u8) -> Result<(), TraceError> {
        for len in 1..=FINEST_LISTED {
            let first = tables::canonical::sequences(len).into_iter().next();
            if let Some(p) = first {
                self.cost(depth, &p)?;
            }
        }
        let trace = self.trace;
        self.level(FINEST_LISTED + 1).indexed(trace, depth);
        Ok(())
    }

    /// The level of prefixes of `len` moves, made when first asked for.
    fn level(&mut self, len: usize) -> &mut Level {
        if self.levels.len() <= len {
            self.levels.resize_with(len + 1, || None);
        }
        self.levels[len].get_or_insert_with(|| Level::new(len))
    }
}

/// The answer of the shallow job (the position searched whole below the split depth),
/// for input line `line`: as the recording's, no solution below the split depth.
pub(crate) fn shallow_result(h: &Header, line: u64) -> PositionResult {
    PositionResult {
        line,
        solutions: Vec::new(),
        optimal: false,
        lower_bound: h.lower_bound,
        depth_exhausted: Some(h.split_depth.saturating_sub(1)),
        nodes: h.shallow_nodes,
        lookups: 0,
        micros: 0,
        stop: Stop::Exhausted,
    }
}

/// The recorded depth whose counts split the subtree of `head` (a 5-move prefix) at
/// `depth` below it ([`DepthIndex::split`]): the depth itself where it searched `head`,
/// else (a depth cut short before it, or not recorded) the deepest recorded depth below,
/// whose counts [`depth_costs`] grew; `None` when there is none. A prefix longer than
/// [`FINEST_LISTED`] gets `head`'s nodes split below it as that depth splits them.
fn stand_in(trace: &Trace, level: &mut Level, depth: u8, head: &[Move]) -> Option<u8> {
    let searched = trace
        .depths
        .get(&depth)
        .is_some_and(|cells| cells.complete || level.count(trace, depth, head) > 0);
    let below = trace.depths.range(..depth).next_back().map(|(&d, _)| d);
    if searched {
        Some(depth)
    } else {
        below
    }
}

/// The nodes of each of `prefixes` at `depth`, where the trace holds them, else from
/// the deepest recorded depth below it.
fn depth_costs(trace: &Trace, depth: u8, prefixes: &[Vec<Move>]) -> Result<Vec<u64>, TraceError> {
    let below = trace.depths.range(..depth).next_back().map(|(&d, _)| d);
    let grown = |d: u8| 13u64.saturating_pow(u32::from(depth - d));
    Ok(match trace.depths.get(&depth) {
        Some(cells) if cells.complete => trace.costs(depth, prefixes)?,
        // Cut short after the solution: the subtrees not searched (0 nodes; a searched
        // one counts its root) cost 13 times their previous depth's.
        Some(_) => {
            let mut c = trace.costs(depth, prefixes)?;
            if let Some(d) = below {
                let before = trace.costs(d, prefixes)?;
                for (x, b) in c.iter_mut().zip(before) {
                    if *x == 0 {
                        *x = b.saturating_mul(grown(d));
                    }
                }
            }
            c
        }
        None => match below {
            Some(d) => (trace.costs(d, prefixes)?.into_iter())
                .map(|c| c.saturating_mul(grown(d)))
                .collect(),
            None => vec![0; prefixes.len()],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{DepthCells, VERSION};
    use std::collections::BTreeMap;
    use tables::{canonical, parse_moves};

    /// Depth 13 whole: "U R F D" 90,000 nodes, all under "U R F D L", refined (80,000
    /// under "U R F D L U", 7,000 of them under "U R F D L U F2"); depth 14 cut short,
    /// holding only "U R F L" (50,000).
    fn trace() -> Trace {
        let n4 = canonical::sequences(GRAIN).len();
        let at = |p: &str| rank(&parse_moves(p).unwrap()).unwrap();
        let mut counts = vec![0; n4];
        counts[at("U R F D")] = 90_000;
        let mut fine = vec![0; 18];
        fine[parse_moves("L").unwrap()[0].index()] = 90_000;
        let mut kids5 = vec![0; 18];
        kids5[parse_moves("U").unwrap()[0].index()] = 80_000;
        kids5[parse_moves("F").unwrap()[0].index()] = 10_000;
        let mut kids6 = vec![0; 18];
        kids6[parse_moves("F2").unwrap()[0].index()] = 7_000;
        kids6[parse_moves("R").unwrap()[0].index()] = 73_000;
        let d13 = DepthCells {
            depth: 13,
            complete: true,
            counts,
            fine: vec![(at("U R F D") as u32, fine)],
            finer: vec![
                ("U R F D L".to_string(), kids5),
                ("U R F D L U".to_string(), kids6),
            ],
        };
        let mut counts = vec![0; n4];
        counts[at("U R F L")] = 50_000;
        let d14 = DepthCells {
            depth: 14,
            complete: false,
            counts,
            ..DepthCells::default()
        };
        Trace {
            header: Header {
                split_depth: 13,
                lower_bound: 13,
                ..crate::trace::test_header(VERSION)
            },
            depths: BTreeMap::from([(13, d13), (14, d14)]),
            jobs: Vec::new(),
        }
    }

    #[test]
    fn prefixes_past_five_moves_cost_their_recorded_counts_at_the_depth_that_stands_in() {
        let t = trace();
        let mut r = Recorded::new(&t);
        let mut cost = |depth: u8, p: &str| r.cost(depth, &parse_moves(p).unwrap()).unwrap();
        assert_eq!(cost(13, "U R F D L"), 90_000);
        assert_eq!(cost(13, "U R F D L U"), 80_000);
        assert_eq!(cost(13, "U R F D L U F2"), 7_000);
        // Below the recorded counts: equal shares (after F2, 15 moves may follow).
        assert_eq!(cost(13, "U R F D L U F2 D"), 7_000 / 15);
        // Depth 14 did not search "U R F D": its subtrees cost 13 times depth 13's, the
        // refined ones included; the one subtree it did search costs what it recorded.
        assert_eq!(cost(14, "U R F D L U"), 80_000 * 13);
        assert_eq!(cost(14, "U R F D L U F2"), 7_000 * 13);
        assert_eq!(cost(14, "U R F D L"), 90_000 * 13);
        assert_eq!(cost(14, "U R F L"), 50_000);
        // Depth 15, not recorded: depth 14's counts, 13 times (0 where it searched none).
        assert_eq!(cost(15, "U R F D L U F2"), 0);
        assert_eq!(cost(15, "U R F L"), 50_000 * 13);
        assert_eq!(cost(15, "U R F L U R"), 50_000 / 12 * 13 / 15);
        // Depth 12, with no depth below: nothing.
        assert_eq!(cost(12, "U R F D L U F2"), 0);
    }
}
