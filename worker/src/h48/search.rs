//! The search primitive: IDA* at one fixed depth below a move prefix (seed 001).
//!
//! A node holds both the position `N` and its inverse `I = N⁻¹`, so the inverse estimate
//! never needs an inversion. A solution `S` of the original cube `c` is built from both
//! ends: front moves `A` (a prefix of `S`) and back moves `b1, b2, …` (`b1` the last move
//! of `S`, `b2` the one before, …). Then `N = bk…b1 · c · A`, and
//!
//! - a front move `a` makes `N' = N · a` and `I' = a⁻¹ · I` (a premove on the inverse);
//! - a back move `b` makes `N' = b · N` and `I' = I · b⁻¹`.
//!
//! The H48 coordinate only depends on the coset `H · x` (H = the target subgroup, which
//! contains the six half turns), so a half turn as front move leaves the inverse's
//! coordinate unchanged and a half turn as back move leaves the normal one unchanged:
//! their last estimate is reused without a lookup.
//!
//! Tight bounds: with `r` moves left, if the inverse estimate equals `r`, the next front
//! move cannot be a half turn (otherwise the inverse's coset would be `r - 1` away); if
//! the normal estimate equals `r`, the next back move cannot be one. The restriction
//! holds until that side moves, so each node carries the allowed front and back moves
//! and expands the side with fewer of them (the NISS-style switch; seed 001, and
//! nissy-core does the same).
//!
//! Shared estimates: a move made before a position (a back move, for the normal cube; a
//! front move, for the inverse) changes its coordinate only through the coset `H · m`, so
//! the quarter turns `U` and `U' = U2 · U` of a face give one estimate on that side. It
//! is read once for both, and first. The face's half turn is one move from either: when
//! that shared estimate is two or more over the bound, the half turn is pruned unread.
//! (Its own estimate on that side is the parent's, which passed; a coset estimate, unlike
//! the distance, can change by more than one under a move made before the position, so
//! this prunes nodes the half turn's own estimates keep.)
//!
//! Each solution is produced once: the side taken at a node is a function of the node,
//! and moves are kept canonical (no two moves on one face in a row; of two moves on
//! opposite faces in a row, the U/R/F one first), including where the front and back
//! halves meet.
//!
//! Memory: a node's children are generated in two passes over the faces it may turn (all
//! corner words first, so those reads overlap, then the corner bounds and the main-table
//! indices), and the entries of their first estimates are prefetched; only the children
//! the corner bounds keep are written to the frame. The second estimate's index is only
//! computed, and its entry prefetched, for the children whose first estimate passed.
//! Each lane step's prefetches are issued back to back once its indices are all
//! computed, two steps' together from h7 on (`estimate::Burst`, `merge_steps`: on a
//! host that maps the VM's memory in small pages, a prefetch holds the core up for its
//! page walk, and walks issued together overlap). Tasks are taken a few ahead of their
//! start, so that their roots' entries are prefetched too ([`AHEAD`]). A
//! child keeps only its move and estimates: its cubes are made from the node's where an
//! estimate or its own expansion needs them (most children never do). The
//! depth-first search keeps an explicit stack, so that [`search_lanes`] can interleave
//! several tasks on one thread and switch to another task while the prefetched entries
//! arrive. Nothing allocates per node.
//!
//! # Layout
//! - this file: the search's entry points ([`search`],
//!   [`search_lanes`]) and a lane's stack machine (start, step, finish);
//! - `ahead`: the tasks taken ahead of their start, and their prefetched roots;
//! - `lookup`: [`Lookup`] and [`Pruner`], what is read (the tables and their fallbacks);
//! - `estimate`: a child's estimates, resolved one memory step at a time, and the child;
//! - `expand`: a node's expansion into its children;
//! - `frame`: one level of the explicit stack;
//! - `gate`: a piece split where it runs (its first levels' moves, frozen by a hand-back);
//! - `masks`: the canonical order's masks for back moves, and the move cubes' tests;
//! - `path`: the node's path and what the search found so far;
//! - `tests`: the module's tests.

mod ahead;
mod estimate;
mod expand;
mod frame;
mod gate;
mod lookup;
mod masks;
mod path;

pub use self::gate::Gate;
pub use self::lookup::{Fallback, K2With, Lookup, Probe, Pruner, H0};
use self::masks::{is_half_turn, is_one_move, PRECEDE, QUARTER};

use self::ahead::{Root, Task, AHEAD};
use self::estimate::{child_inverse, child_normal, Burst, Child, Estimate, MERGE_MAX};
use self::expand::expand;
use self::frame::{Frame, ALL_KIDS, EMPTY_FRAME};
use self::path::Path;
use crate::StopToken;
use proto::pieces::SPLIT_LEVELS;
use proto::Stop;
use tables::canonical::{allowed_after, is_canonical, AFTER, START};
use tables::{Cube, Move};

/// Maximum solution length handled.
pub const MAX_DEPTH: usize = proto::MAX_LENGTH as usize;

/// What one call of the primitive found.
pub struct Found {
    /// Solutions (verified), in the order found.
    pub solutions: Vec<Vec<Move>>,
    /// Positions generated.
    pub nodes: u64,
    /// Main-table lookups.
    pub lookups: u64,
    /// [`Stop::Exhausted`] when the whole subtree was searched, [`Stop::Completed`] when
    /// `max_solutions` were found first, else what the stop token said.
    pub stop: Stop,
    /// Solutions that failed verification (a bug if ever non-zero; they are dropped).
    pub invalid: u64,
}

/// Main tables from this size on have the prefetches of two lane steps issued together.
const MERGE_FROM: u64 = 2 << 30;

/// How many lane steps in a row have their prefetches issued together, for a main table
/// of `bytes` and `lanes` lanes.
///
/// Each step's prefetches are issued back to back ([`Burst`]); a step's burst costs about
/// one page walk's wait however many prefetches it holds. With the table in tens of
/// thousands of host pages (h7, 3.8 GB: the host's page tables no longer stay in the
/// caches) a walk is long enough that two steps' prefetches in one burst pay: 10–30% more
/// nodes a second on one thread. Below that, the first step's prefetches issued a step
/// later arrive too late: 8% fewer at h3 and h5, 2–7% at h6 (1.9 GB) (docs/performance.md,
/// "choices the search makes"). A lane must come back to its prefetches at least a step
/// after they are issued, so a merge needs three lanes.
fn merge_steps(bytes: u64, lanes: usize) -> usize {
    if bytes >= MERGE_FROM && lanes >= 3 {
        MERGE_MAX
    } else {
        1
    }
}

/// Nodes between two looks at the stop token (a hollow thread looks as often, in its
/// time: `hollow`).
pub(crate) const CHECK_EVERY: u64 = 4096;

/// One depth-first search (one task: a prefix at a depth) in an explicit stack, so that
/// several can run interleaved on one thread (see [`search_lanes`]).
struct Lane<'a> {
    path: Path<'a>,
    /// `frames[..top]` are live; `top == 0`: the task is finished.
    frames: Box<[Frame]>,
    top: usize,
    /// The task's id (given by the caller).
    id: usize,
    /// The task's gate, through which front moves on its first [`SPLIT_LEVELS`] levels are
    /// entered (see [`search_lanes_gated`]).
    gate: Option<&'a Gate>,
}

/// Finds up to `max_solutions` canonical solutions of exactly `depth` moves of `cube`
/// that start with `prefix` (see the module docs). `cube` must be a legal position.
pub fn search<L: Lookup>(
    p: &Pruner<L>,
    cube: &Cube,
    prefix: &[Move],
    depth: u8,
    max_solutions: usize,
    stop: &StopToken,
) -> Found {
    let mut task = Some((0, prefix, max_solutions));
    let mut out = None;
    search_lanes(
        p,
        cube,
        depth,
        1,
        stop,
        &mut || task.take(),
        &mut |_| true,
        &mut |_, f| out = Some(f),
    );
    out.unwrap_or(Found {
        solutions: Vec::new(),
        nodes: 0,
        lookups: 0,
        stop: Stop::Cancelled,
        invalid: 0,
    })
}

/// Runs the tasks that `next` hands out — `(id, prefix, max_solutions)`, each one call of
/// [`search`] at `depth` — with up to `lanes` of them interleaved on this thread, and
/// gives each result to `done` with its id as soon as that task is finished. A task is
/// taken some way ahead of its start (its entries prefetched); `admit` is asked as it
/// starts, in the order taken, and once it says no that task and every later one is
/// dropped (handed back: see [`crate::runner`]).
///
/// Interleaving hides memory latency: after a lane expands a node (generating the
/// children and prefetching their table entries) the thread switches to the next lane,
/// and by the time it comes back the entries have arrived. Each lane searches in exactly
/// the order [`search`] would; only the tasks' results arrive in a different order.
#[allow(clippy::too_many_arguments)]
pub fn search_lanes<'t, L: Lookup>(
    p: &Pruner<L>,
    cube: &Cube,
    depth: u8,
    lanes: usize,
    stop: &StopToken,
    next: &mut dyn FnMut() -> Option<(usize, &'t [Move], usize)>,
    admit: &mut dyn FnMut(usize) -> bool,
    done: &mut dyn FnMut(usize, Found),
) {
    let mut gated = || next().map(|(id, prefix, max)| (id, prefix, max, None));
    search_lanes_gated(p, cube, depth, lanes, stop, &mut gated, admit, done)
}

/// A task of [`search_lanes_gated`]: id, prefix, most solutions, gate (if split).
pub type GatedTask<'t> = (usize, &'t [Move], usize, Option<&'t Gate>);

/// [`search_lanes`], each task with its [`Gate`] where it has one: on such a task's first
/// [`SPLIT_LEVELS`] levels, while its path is front moves only, each front move is
/// entered through the gate (in move order, as a node takes them), and the search of the
/// task ends once the gate refuses (a hand-back froze it: the moves not entered are
/// searched elsewhere). Nothing else changes: a node still takes the side with fewer
/// moves, and below one that takes back moves its part of the task is kept whole.
#[allow(clippy::too_many_arguments)]
pub fn search_lanes_gated<'t, L: Lookup>(
    p: &Pruner<L>,
    cube: &Cube,
    depth: u8,
    lanes: usize,
    stop: &StopToken,
    next: &mut dyn FnMut() -> Option<GatedTask<'t>>,
    admit: &mut dyn FnMut(usize) -> bool,
    done: &mut dyn FnMut(usize, Found),
) {
    let lanes = lanes.max(1);
    // Lanes are made once and reused: each holds a stack of some 60 kB.
    let mut pool: Vec<Lane<'_>> = Vec::with_capacity(lanes);
    let mut running = 0;
    let mut more = true;
    // The prefetches of `merge` lane steps in a row, issued together after the last.
    let merge = merge_steps(p.table.bytes(), lanes);
    let mut burst = Burst::new();
    let mut steps = 0;
    // Tasks taken ahead of their start (`AHEAD`): `ahead[head..head + queued]`, modulo.
    let mut ahead: [Option<Task<'t>>; AHEAD] = [None; AHEAD];
    let (mut head, mut queued) = (0, 0);
    let mut source = true;
    loop {
        // Fill the free lanes (`pool[running..]`) with new tasks; a task may finish at
        // its start.
        while more && running < lanes {
            while source && queued < AHEAD {
                match next() {
                    Some((id, prefix, max_solutions, gate)) => {
                        ahead[(head + queued) % AHEAD] = Some(Task {
                            id,
                            prefix,
                            max_solutions,
                            gate,
                            root: Root::prefetched(p, cube, prefix, depth),
                        });
                        queued += 1;
                    }
                    None => source = false,
                }
            }
            let Some(task) = (queued > 0).then(|| ahead[head].take()).flatten() else {
                more = false;
                break;
            };
            head = (head + 1) % AHEAD;
            queued -= 1;
            let Task {
                id,
                prefix,
                max_solutions,
                gate,
                root,
            } = task;
            if !admit(id) {
                // Handed back before it started: so is every task after it.
                (source, more) = (false, false);
                break;
            }
            if pool.len() == running {
                pool.push(Lane::new(cube, stop));
            }
            let lane = &mut pool[running];
            lane.reset(id, max_solutions, gate);
            if lane.start(p, prefix, depth, root.as_ref()) {
                running += 1;
            } else {
                done(id, lane.finish());
            }
        }
        if running == 0 {
            return;
        }
        let mut k = 0;
        while k < running {
            let going = if merge == 1 {
                pool[k].step(p)
            } else {
                let going = pool[k].advance(p, &mut burst);
                steps += 1;
                if steps == merge {
                    burst.issue(p);
                    steps = 0;
                }
                going
            };
            if going {
                k += 1;
            } else {
                let found = pool[k].finish();
                done(pool[k].id, found);
                running -= 1;
                pool.swap(k, running);
            }
        }
    }
}

impl<'a> Lane<'a> {
    fn new(cube: &Cube, stop: &'a StopToken) -> Self {
        Lane {
            path: Path {
                cube: *cube,
                front: [Move::ALL[0]; MAX_DEPTH],
                nf: 0,
                back: [Move::ALL[0]; MAX_DEPTH],
                nb: 0,
                max_solutions: 0,
                solutions: Vec::new(),
                stop,
                stopped: false,
                why: Stop::Exhausted,
                nodes: 0,
                lookups: 0,
                check_at: CHECK_EVERY,
                invalid: 0,
            },
            frames: vec![EMPTY_FRAME; MAX_DEPTH + 1].into_boxed_slice(),
            top: 0,
            id: 0,
            gate: None,
        }
    }

    /// Makes the lane ready for task `id` (with its gate, if any).
    fn reset(&mut self, id: usize, max_solutions: usize, gate: Option<&'a Gate>) {
        let st = &mut self.path;
        st.nf = 0;
        st.nb = 0;
        st.max_solutions = max_solutions;
        st.solutions = Vec::new();
        st.stopped = false;
        st.why = Stop::Exhausted;
        st.nodes = 0;
        st.lookups = 0;
        st.check_at = CHECK_EVERY;
        st.invalid = 0;
        self.top = 0;
        self.id = id;
        self.gate = gate;
    }

    /// Sets up the root of the task (`root`: made ahead by [`Root::prefetched`] for this
    /// prefix and depth); false if it is already finished.
    fn start<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        prefix: &[Move],
        depth: u8,
        root: Option<&Root>,
    ) -> bool {
        let st = &mut self.path;
        if let Some(why) = (st.max_solutions == 0)
            .then_some(Stop::Completed)
            .or_else(|| st.stop.check())
        {
            st.stopped = true;
            st.why = why;
            return false;
        }
        let depth = depth as usize;
        if depth > MAX_DEPTH || prefix.len() > depth || !is_canonical(prefix) {
            return false;
        }
        for &m in prefix {
            st.front[st.nf] = m;
            st.nf += 1;
        }
        let r = (depth - prefix.len()) as u8;
        let root = match root {
            Some(root) => *root,
            None => {
                let root = Root::of(p, &st.cube, prefix);
                if r == 0 {
                    if root.n.is_solved() {
                        st.record(None);
                    }
                    return false;
                }
                root
            }
        };
        let (n, i) = (root.n, root.i);
        let hn = root.pn.cd.max(p.table.value(&root.pn));
        let hi = root.pi.cd.max(p.table.value(&root.pi));
        st.lookups += 2;
        st.nodes += 1;
        if hn.max(hi) > r {
            return false;
        }
        let mf = allowed_after(prefix.last().copied());
        let mut burst = Burst::new();
        expand(
            p,
            st,
            &mut self.frames[0],
            &n,
            &i,
            hn,
            hi,
            r,
            mf,
            PRECEDE[START],
            0,
            &mut burst,
        );
        burst.issue(p);
        self.top = 1;
        // A root that takes back moves first cannot hand back front-move parts: its piece
        // is searched whole, unless it was handed back whole before it started.
        let f = &self.frames[0];
        if let (Some(g), true) = (self.gate, f.mb.count_ones() < f.mf.count_ones()) {
            self.gate = None;
            if !g.keep_whole() {
                self.top = 0;
                return false;
            }
        }
        true
    }

    /// The result of a finished (or stopped) lane.
    fn finish(&mut self) -> Found {
        Found {
            stop: self.path.why,
            solutions: std::mem::take(&mut self.path.solutions),
            nodes: self.path.nodes,
            lookups: self.path.lookups,
            invalid: self.path.invalid,
        }
    }

    /// Advances the search until it has prefetched a new node's children (true: come
    /// back later) or finished (false).
    fn step<L: Lookup>(&mut self, p: &Pruner<L>) -> bool {
        let mut burst = Burst::new();
        let going = self.advance(p, &mut burst);
        burst.issue(p);
        going
    }

    /// [`Lane::step`], the prefetches added to `burst` for the caller to issue.
    #[inline(always)]
    fn advance<L: Lookup>(&mut self, p: &Pruner<L>, burst: &mut Burst) -> bool {
        let gate = self.gate;
        let st = &mut self.path;
        while self.top > 0 {
            if st.stopped {
                self.top = 0;
                break;
            }
            let t = self.top - 1;
            let (below, above) = self.frames.split_at_mut(t + 1);
            let f = &mut below[t];
            if !f.resolved {
                // Every live child's estimates move one memory step on: those whose
                // entries arrived are read, and the next entries are prefetched. Children
                // over the bound drop out; come back when something was prefetched.
                let rr = f.rr;
                let mut kept = 0;
                let mut waiting = false;
                for j in 0..f.nl as usize {
                    let kj = f.live[j];
                    // SAFETY: `live` holds indices of children written by `expand`.
                    let k = unsafe { f.children[kj as usize].assume_init_mut() };
                    let face = k.face as usize;
                    // A half turn is one move from its face's quarter turns: it is at least
                    // their shared estimate less one away.
                    if !k.quarter {
                        if let Estimate::Known(v) = f.shared[face] {
                            if v > rr + 1 {
                                continue;
                            }
                        }
                    }
                    let done = match k.resolve(
                        p,
                        &mut f.shared[face],
                        &f.pn,
                        &f.pi,
                        rr,
                        &mut st.lookups,
                        burst,
                    ) {
                        Some(false) => continue,
                        Some(true) => true,
                        None => false,
                    };
                    waiting |= !done;
                    f.live[kept] = kj;
                    kept += 1;
                }
                f.nl = kept as u8;
                if waiting {
                    return true;
                }
                f.resolved = true;
            }
            if f.next == f.nl {
                match f.via {
                    1 => st.nf -= 1,
                    2 => st.nb -= 1,
                    _ => {}
                }
                self.top = t;
                continue;
            }
            let kj = f.live[f.next as usize] as usize;
            f.next += 1;
            // SAFETY: `live` holds indices of children written by `expand`.
            let k = unsafe { f.children[kj].assume_init_mut() };
            if let Some(g) = gate.filter(|_| t < SPLIT_LEVELS && st.nb == 0 && !k.back) {
                // A front move on a gated task's first levels, all front moves (below a
                // node that takes back moves first, its part is kept whole), entered in
                // move order; once the gate refuses, the rest was handed back.
                let last = st.nf.checked_sub(1).map(|i| st.front[i]);
                let c = (allowed_after(last) & ((1u32 << k.m.index()) - 1)).count_ones();
                if !g.enter(t, c) {
                    f.next = f.nl;
                    continue;
                }
            }
            // Both estimates are known and within the bound (resolved above).
            let (hn2, hi2) = k.values(&f.shared[k.face as usize]);
            let n2 = child_normal(&f.pn, k.m, k.back);
            let i2 = child_inverse(&f.pi, k.m, k.back);
            let (mf, mb, via) = if k.back {
                st.back[st.nb] = k.m;
                st.nb += 1;
                (f.mf, PRECEDE[k.m.face_index()], 2)
            } else {
                st.front[st.nf] = k.m;
                st.nf += 1;
                (AFTER[k.m.face_index()], f.mb, 1)
            };
            let fetched = expand(
                p,
                st,
                &mut above[0],
                &n2,
                &i2,
                hn2,
                hi2,
                f.rr,
                mf,
                mb,
                via,
                burst,
            );
            self.top = t + 2;
            if fetched {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests;
