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
//! Each solution is produced once: the side taken at a node is a function of the node,
//! and moves are kept canonical (no two moves on one face in a row; of two moves on
//! opposite faces in a row, the U/R/F one first), including where the front and back
//! halves meet.
//!
//! Memory: a node's children are generated in two passes (all corner words first, so
//! those reads overlap, then the corner bounds and the main-table indices), and the
//! entries of their first estimates are prefetched; the second estimate's index is only
//! computed, and its entry prefetched, for the children whose first estimate passed. The
//! depth-first search keeps an explicit stack, so that [`search_lanes`] can interleave
//! several tasks on one thread and switch to another task while the prefetched entries
//! arrive. Nothing allocates per node.

use super::cocsep::Cocsep;
use super::coords::{Coords, ESEP};
use crate::StopToken;
use proto::Stop;
use tables::canonical::{allowed_after, is_canonical, AFTER, START};
use tables::moves::MOVE_CUBES;
use tables::packed::{Packed2, Packed4};
use tables::{Cube, Move};

/// A pruning table as the search reads it.
pub trait Lookup: Sync + Send {
    /// Starts loading the entry's cache line.
    fn prefetch(&self, idx: u64);
    /// The lower bound stored at `idx`, or `fallback` when the entry only says "at most
    /// the base" (2-bit tables).
    fn value(&self, idx: u64, fallback: u8) -> u8;
    /// The lower bound stored at `idx`, or `None` when a fallback table has to be read
    /// ([`Lookup::fallback`]; only tables with one).
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        Some(self.value(idx, 0))
    }
    /// Starts loading the fallback entry for `idx`.
    #[inline(always)]
    fn prefetch_fallback(&self, _idx: u64) {}
    /// The fallback's lower bound for `idx`, when [`Lookup::first`] said `None`.
    #[inline(always)]
    fn fallback(&self, _idx: u64) -> u8 {
        0
    }
}

impl Lookup for Packed4 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        Packed4::prefetch(self, idx)
    }
    #[inline(always)]
    fn value(&self, idx: u64, _fallback: u8) -> u8 {
        self.get(idx)
    }
}

impl Lookup for Packed2 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        Packed2::prefetch(self, idx)
    }
    #[inline(always)]
    fn value(&self, idx: u64, fallback: u8) -> u8 {
        match self.get(idx) {
            0 => fallback,
            s => self.base() + s,
        }
    }
}

/// A 2-bit h48hNk2 table whose "at most the base" entries fall back on h48h0k4 (the h0
/// entry `idx >> N` covers the hN entry, so it is a lower bound too, and usually within
/// one or two of the base, where the corner bound is often three or four below).
pub struct K2WithH0 {
    /// The main table.
    pub k2: Packed2,
    /// h48h0k4.
    pub h0: Packed4,
    /// N, the shift from an hN index to its h0 index.
    pub shift: u32,
}

impl Lookup for K2WithH0 {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        self.k2.prefetch(idx)
    }
    #[inline(always)]
    fn value(&self, idx: u64, fallback: u8) -> u8 {
        match self.k2.get(idx) {
            0 => fallback.max(self.h0.get(idx >> self.shift)),
            s => self.k2.base() + s,
        }
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        match self.k2.get(idx) {
            0 => None,
            s => Some(self.k2.base() + s),
        }
    }
    #[inline(always)]
    fn prefetch_fallback(&self, idx: u64) {
        self.h0.prefetch(idx >> self.shift)
    }
    #[inline(always)]
    fn fallback(&self, idx: u64) -> u8 {
        self.h0.get(idx >> self.shift)
    }
}

/// Everything the search reads: fast coordinates, cocsep and the main table.
pub struct Pruner<L> {
    /// Coordinate helper tables.
    pub coords: Coords,
    /// The corner table.
    pub cocsep: Cocsep,
    /// The main table.
    pub table: L,
    /// Edge-orientation bits N of the table.
    pub eo_bits: u32,
}

/// Where the main-table entry of a position is, and its corner bound.
#[derive(Clone, Copy, Default)]
struct Probe {
    /// Corner distance (a lower bound on its own).
    cd: u8,
    /// Main-table index.
    idx: u64,
}

impl<L: Lookup> Pruner<L> {
    /// The corner bound and the main-table index of `c`.
    #[inline(always)]
    fn corner_word(&self, c: &Cube) -> u32 {
        self.cocsep.get(self.coords.cocsep_raw(c))
    }

    #[inline(always)]
    fn index(&self, c: &Cube, w: u32) -> u64 {
        let class = (w & 0xfff) as u64;
        let t = (w >> 12 & 63) as usize;
        let (esep, eo) = self.coords.edges(c, t);
        ((class * ESEP as u64 + esep as u64) << self.eo_bits)
            | super::coords::eo_part(eo, self.eo_bits)
    }

    /// The full estimate of one position (no early exit).
    pub fn estimate(&self, c: &Cube) -> u8 {
        let w = self.corner_word(c);
        let cd = (w >> 18) as u8;
        cd.max(self.table.value(self.index(c, w), cd))
    }

    /// The table index of `c` (for tests and tools).
    pub fn table_index(&self, c: &Cube) -> u64 {
        self.index(c, self.corner_word(c))
    }
}

/// `PRECEDE[f]`: bit mask of the moves that may come right before a move of face `f` in
/// a canonical sequence (`f` = [`START`]: no move after it yet, so every move), derived
/// from the rule's [`AFTER`] masks. The search grows solutions from both ends: a back
/// move is prepended to the moves already at the back.
const PRECEDE: [u32; 7] = {
    let mut out = [0u32; 7];
    out[START] = (1 << 18) - 1;
    let mut f = 0;
    while f < 6 {
        let mut mask = 0u32;
        let mut m = 0;
        while m < 18 {
            if AFTER[m / 3] & (1 << (3 * f)) != 0 {
                mask |= 1 << m;
            }
            m += 1;
        }
        out[f] = mask;
        f += 1;
    }
    out
};

/// The 12 quarter turns.
const QUARTER: u32 = 0b101_101_101_101_101_101;

/// An estimate of a child, resolved one memory step at a time.
#[derive(Clone, Copy)]
enum Est {
    /// Known (reused from the parent, or read).
    Known(u8),
    /// The corner word is read; the main-table index is not computed yet.
    Word(u32),
    /// The main-table entry is prefetched.
    At(Probe),
    /// The main table said "at most the base": the fallback entry is prefetched.
    Fallback(Probe),
    /// Nothing computed yet (the inverse cube is not made yet).
    Later,
}

impl Est {
    /// Moves the estimate of `c` one step on: reads what an earlier step prefetched, or
    /// computes an index and prefetches its entry. Returns the estimate once known, `None`
    /// while it waits for a prefetched entry.
    #[inline(always)]
    fn advance<L: Lookup>(&mut self, p: &Pruner<L>, c: &Cube, lookups: &mut u64) -> Option<u8> {
        match *self {
            Est::Known(v) => return Some(v),
            Est::Word(w) => {
                let idx = p.index(c, w);
                p.table.prefetch(idx);
                *self = Est::At(Probe {
                    cd: (w >> 18) as u8,
                    idx,
                });
                return None;
            }
            Est::At(pr) => {
                *lookups += 1;
                match p.table.first(pr.idx) {
                    Some(v) => *self = Est::Known(pr.cd.max(v)),
                    None => {
                        p.table.prefetch_fallback(pr.idx);
                        *self = Est::Fallback(pr);
                        return None;
                    }
                }
            }
            Est::Fallback(pr) => *self = Est::Known(pr.cd.max(p.table.fallback(pr.idx))),
            // Made into `Word` before it gets here; 0 is a valid bound if it did not.
            Est::Later => *self = Est::Known(0),
        }
        match *self {
            Est::Known(v) => Some(v),
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
struct Kid {
    m: Move,
    back: bool,
    n: Cube,
    /// The inverse: computed only once the child's normal estimate has passed (most
    /// children are pruned by it), unless that estimate is reused.
    i: Cube,
    i_ready: bool,
    hn: Est,
    hi: Est,
}

/// The inverse of the child of a node (whose inverse is `i`) by move `m` on the back or
/// the front side.
#[inline(always)]
fn child_inverse(i: &Cube, m: Move, back: bool) -> Cube {
    let minv = &MOVE_CUBES[m.inverse().index()];
    if back {
        i.compose(minv)
    } else {
        minv.compose(i)
    }
}

impl Kid {
    /// Makes the inverse cube if it is not made yet (`pi`: the parent's inverse), then
    /// moves the inverse estimate one step on (see [`Est::advance`]); a corner bound
    /// over `rr` gives `Some(u8::MAX)`.
    #[inline(always)]
    fn inverse_estimate<L: Lookup>(
        &mut self,
        p: &Pruner<L>,
        pi: &Cube,
        rr: u8,
        lookups: &mut u64,
    ) -> Option<u8> {
        if !self.i_ready {
            self.i = child_inverse(pi, self.m, self.back);
            self.i_ready = true;
            if let Est::Later = self.hi {
                let w = p.corner_word(&self.i);
                if (w >> 18) as u8 > rr {
                    return Some(u8::MAX);
                }
                self.hi = Est::Word(w);
            }
        }
        self.hi.advance(p, &self.i, lookups)
    }
}

/// Is `c` one move away from solved (one of the 18 move cubes)?
#[inline(always)]
fn is_one_move(c: &Cube) -> bool {
    MOVE_CUBES.iter().any(|m| m == c)
}

/// Is `c` one of the six half-turn cubes?
#[inline(always)]
fn is_half_turn(c: &Cube) -> bool {
    Move::HALF_TURNS.iter().any(|m| MOVE_CUBES[m.index()] == *c)
}

/// Maximum solution length handled.
pub const MAX_DEPTH: usize = 30;

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

/// The path of the node being searched and what the search found so far.
struct Path<'a> {
    cube: Cube,
    front: [Move; MAX_DEPTH],
    nf: usize,
    back: [Move; MAX_DEPTH],
    nb: usize,
    max_solutions: usize,
    solutions: Vec<Vec<Move>>,
    stop: &'a StopToken,
    stopped: bool,
    /// Why the search stopped (`Exhausted` while it has not).
    why: Stop,
    nodes: u64,
    lookups: u64,
    check_at: u64,
    invalid: u64,
}

/// Nodes between two looks at the stop token.
const CHECK_EVERY: u64 = 4096;

/// One level of the explicit depth-first stack: the children of a node, generated with
/// their table entries prefetched, and which of them comes next.
#[derive(Clone, Copy)]
struct Frame {
    kids: [std::mem::MaybeUninit<Kid>; 18],
    /// The next child to evaluate.
    next: u8,
    /// Moves left below the children.
    rr: u8,
    /// The node's allowed front and back moves (tight-bound restrictions applied).
    mf: u32,
    mb: u32,
    /// The move that led to the node: 0 none (the root), 1 a front move, 2 a back move.
    via: u8,
    /// The node's inverse (children's inverses are made from it when needed).
    pi: Cube,
    /// `live[..nl]`: the children still in the running, in order.
    live: [u8; 18],
    nl: u8,
    /// Whether every live child's estimates are known (and within the bound).
    resolved: bool,
}

/// `0, 1, …, 17`: every child live.
const ALL_KIDS: [u8; 18] = {
    let mut a = [0u8; 18];
    let mut j = 0;
    while j < 18 {
        a[j] = j as u8;
        j += 1;
    }
    a
};

const EMPTY_FRAME: Frame = Frame {
    kids: [std::mem::MaybeUninit::uninit(); 18],
    next: 0,
    rr: 0,
    mf: 0,
    mb: 0,
    via: 0,
    pi: Cube::SOLVED,
    live: [0; 18],
    nl: 0,
    resolved: false,
};

/// One depth-first search (one task: a prefix at a depth) in an explicit stack, so that
/// several can run interleaved on one thread (see [`search_lanes`]).
struct Lane<'a> {
    path: Path<'a>,
    /// `frames[..top]` are live; `top == 0`: the task is finished.
    frames: Box<[Frame]>,
    top: usize,
    /// The task's id (given by the caller).
    id: usize,
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
    search_lanes(p, cube, depth, 1, stop, &mut || task.take(), &mut |_, f| {
        out = Some(f)
    });
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
/// gives each result to `done` with its id as soon as that task is finished.
///
/// Interleaving hides memory latency: after a lane expands a node (generating the
/// children and prefetching their table entries) the thread switches to the next lane,
/// and by the time it comes back the entries have arrived. Each lane searches in exactly
/// the order [`search`] would; only the tasks' results arrive in a different order.
pub fn search_lanes<'t, L: Lookup>(
    p: &Pruner<L>,
    cube: &Cube,
    depth: u8,
    lanes: usize,
    stop: &StopToken,
    next: &mut dyn FnMut() -> Option<(usize, &'t [Move], usize)>,
    done: &mut dyn FnMut(usize, Found),
) {
    let lanes = lanes.max(1);
    // Lanes are made once and reused: each holds a stack of some 60 kB.
    let mut pool: Vec<Lane<'_>> = Vec::with_capacity(lanes);
    let mut running = 0;
    let mut more = true;
    loop {
        // Fill the free lanes (`pool[running..]`) with new tasks; a task may finish at
        // its start.
        while more && running < lanes {
            let Some((id, prefix, max_solutions)) = next() else {
                more = false;
                break;
            };
            if pool.len() == running {
                pool.push(Lane::new(cube, stop));
            }
            let lane = &mut pool[running];
            lane.reset(id, max_solutions);
            if lane.start(p, prefix, depth) {
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
            if pool[k].step(p) {
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
        }
    }

    /// Makes the lane ready for task `id`.
    fn reset(&mut self, id: usize, max_solutions: usize) {
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
    }

    /// Sets up the root of the task; false if it is already finished.
    fn start<L: Lookup>(&mut self, p: &Pruner<L>, prefix: &[Move], depth: u8) -> bool {
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
        let mut n = st.cube;
        for &m in prefix {
            n = n.apply_move(m);
            st.front[st.nf] = m;
            st.nf += 1;
        }
        let r = (depth - prefix.len()) as u8;
        if r == 0 {
            if n.is_solved() {
                st.record(None);
            }
            return false;
        }
        let i = n.inverse();
        let hn = p.estimate(&n);
        let hi = p.estimate(&i);
        st.lookups += 2;
        st.nodes += 1;
        if hn.max(hi) > r {
            return false;
        }
        let mf = allowed_after(prefix.last().copied());
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
        );
        self.top = 1;
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
                    let k = unsafe { f.kids[kj as usize].assume_init_mut() };
                    let done = match k.hn.advance(p, &k.n, &mut st.lookups) {
                        Some(v) if v > rr => continue,
                        Some(_) => match k.inverse_estimate(p, &f.pi, rr, &mut st.lookups) {
                            Some(v) if v > rr => continue,
                            Some(_) => true,
                            None => false,
                        },
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
            let k = unsafe { f.kids[kj].assume_init_mut() };
            // Both estimates are known and within the bound (resolved above).
            let (Some(hn2), Some(hi2)) = (
                k.hn.advance(p, &k.n, &mut st.lookups),
                k.inverse_estimate(p, &f.pi, f.rr, &mut st.lookups),
            ) else {
                continue;
            };
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
                &k.n,
                &k.i,
                hn2,
                hi2,
                f.rr,
                mf,
                mb,
                via,
            );
            self.top = t + 2;
            if fetched {
                return true;
            }
        }
        false
    }
}

impl Path<'_> {
    /// `AFTER`/`PRECEDE` row of the last front move: its face ([`START`]: none).
    #[inline(always)]
    fn last_front(&self) -> usize {
        if self.nf > 0 {
            self.front[self.nf - 1].face_index()
        } else {
            START
        }
    }

    /// `AFTER`/`PRECEDE` row of the first back move, the last one made: its face
    /// ([`START`]: none).
    #[inline(always)]
    fn first_back(&self) -> usize {
        if self.nb > 0 {
            self.back[self.nb - 1].face_index()
        } else {
            START
        }
    }

    /// Records `front + [m] + reversed back` after checking it solves the cube.
    #[cold]
    fn record(&mut self, m: Option<Move>) {
        let mut s: Vec<Move> = self.front[..self.nf].to_vec();
        s.extend(m);
        s.extend(self.back[..self.nb].iter().rev());
        if !self.cube.apply_moves(&s).is_solved() {
            self.invalid += 1;
            return;
        }
        self.solutions.push(s);
        if self.solutions.len() >= self.max_solutions {
            self.stopped = true;
            self.why = Stop::Completed;
        }
    }
}

/// Expands a node with `r >= 1` moves left and estimates `hn, hi <= r` into frame `f`:
/// generates its children (recording those that solve the cube), and prefetches the
/// table entries the children's estimates need. Returns whether anything was prefetched.
///
/// `mf` and `mb` are the moves still allowed as the next front and the next back move:
/// canonical after the last move on that side, and without half turns when an ancestor
/// (since that side last moved) had a tight estimate on the other side. That restriction
/// holds until the side moves: if the inverse needs `r` moves, the first of the remaining
/// front moves cannot be a half turn, whatever back moves come before it (it would be the
/// last move solving the inverse into the target group, which contains the half turns).
/// The side with fewer allowed moves is expanded.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn expand<L: Lookup>(
    p: &Pruner<L>,
    st: &mut Path<'_>,
    f: &mut Frame,
    n: &Cube,
    i: &Cube,
    hn: u8,
    hi: u8,
    r: u8,
    mf: u32,
    mb: u32,
    via: u8,
) -> bool {
    f.next = 0;
    f.via = via;
    f.pi = *i;
    f.nl = 0;
    f.resolved = false;
    if st.nodes >= st.check_at {
        st.check_at = st.nodes + CHECK_EVERY;
        if let Some(why) = st.stop.check() {
            st.stopped = true;
            st.why = why;
        }
    }
    if st.stopped {
        return false;
    }
    let mf = if hi == r { mf & QUARTER } else { mf };
    let mb = if hn == r { mb & QUARTER } else { mb };
    f.mf = mf;
    f.mb = mb;
    let back = mb.count_ones() < mf.count_ones();
    let mut allowed = if back { mb } else { mf };
    if r == 1 {
        // The move also meets the other half.
        allowed &= if back {
            AFTER[st.last_front()]
        } else {
            PRECEDE[st.first_back()]
        };
    }
    let rr = r - 1;
    f.rr = rr;
    let mut nk = 0;
    let mut fetched = false;
    let child = |mi: usize| {
        let mc = &MOVE_CUBES[mi];
        let minv = &MOVE_CUBES[Move::ALL[mi].inverse().index()];
        if back {
            (mc.compose(n), i.compose(minv))
        } else {
            (n.compose(mc), minv.compose(i))
        }
    };
    if rr == 0 {
        // The children are leaves.
        while allowed != 0 {
            let mi = allowed.trailing_zeros() as usize;
            allowed &= allowed - 1;
            st.nodes += 1;
            if !child(mi).0.is_solved() {
                continue;
            }
            let m = Move::ALL[mi];
            if back {
                st.back[st.nb] = m;
                st.nb += 1;
                st.record(None);
                st.nb -= 1;
            } else {
                st.record(Some(m));
            }
            if st.stopped {
                break;
            }
        }
    } else if rr == 1 {
        // One move must solve each child: compare it with the 18 move cubes instead of
        // reading tables.
        while allowed != 0 {
            let mi = allowed.trailing_zeros() as usize;
            allowed &= allowed - 1;
            st.nodes += 1;
            let (n2, i2) = child(mi);
            if !is_one_move(&n2) {
                continue;
            }
            // A half turn is in the target group (estimate 0), a quarter turn is not
            // (estimate 1): the same values the tables hold.
            let h = if is_half_turn(&n2) { 0 } else { 1 };
            f.kids[nk].write(Kid {
                m: Move::ALL[mi],
                back,
                n: n2,
                i: i2,
                i_ready: true,
                hn: Est::Known(h),
                hi: Est::Known(h),
            });
            nk += 1;
        }
    } else {
        // Two passes, so that the corner-table reads of all children overlap: the
        // children and their corner words, then the corner bounds, the main-table
        // indices and their prefetches.
        let mut words = [(0u32, 0u32); 18];
        let mut all = 0;
        while allowed != 0 {
            let mi = allowed.trailing_zeros() as usize;
            allowed &= allowed - 1;
            let m = Move::ALL[mi];
            let half = m.is_half();
            // A half turn leaves the coset of one side unchanged: its estimate is kept.
            // The normal estimate is looked at first, and the inverse cube only made
            // once it has passed, except when the normal estimate is the kept one.
            let kid = if back && half {
                let n2 = MOVE_CUBES[mi].compose(n);
                let i2 = child_inverse(i, m, back);
                words[all] = (u32::MAX, p.corner_word(&i2));
                Kid {
                    m,
                    back,
                    n: n2,
                    i: i2,
                    i_ready: true,
                    hn: Est::Known(hn),
                    hi: Est::Known(hi),
                }
            } else {
                let n2 = if back {
                    MOVE_CUBES[mi].compose(n)
                } else {
                    n.compose(&MOVE_CUBES[mi])
                };
                words[all] = (p.corner_word(&n2), u32::MAX);
                Kid {
                    m,
                    back,
                    n: n2,
                    i: Cube::SOLVED,
                    i_ready: false,
                    hn: Est::Known(hn),
                    hi: if half { Est::Known(hi) } else { Est::Later },
                }
            };
            f.kids[all].write(kid);
            all += 1;
        }
        st.nodes += all as u64;
        // The children stay where they are; `live` lists those the corner bound keeps.
        let mut nl = 0;
        for (j, &(wn, wi)) in words[..all].iter().enumerate() {
            let w = wn & wi;
            let cd = (w >> 18) as u8;
            if cd > rr {
                continue;
            }
            // SAFETY: written in the pass above.
            let k = unsafe { f.kids[j].assume_init_mut() };
            let idx = p.index(if wn != u32::MAX { &k.n } else { &k.i }, w);
            p.table.prefetch(idx);
            fetched = true;
            if wn != u32::MAX {
                k.hn = Est::At(Probe { cd, idx });
            } else {
                k.hi = Est::At(Probe { cd, idx });
            }
            f.live[nl] = j as u8;
            nl += 1;
        }
        f.nl = nl as u8;
        return fetched;
    }
    f.nl = nk as u8;
    f.live = ALL_KIDS;
    fetched
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::canonical::can_follow;

    #[test]
    fn canonical_rules() {
        let m = |s: &str| tables::parse_moves(s).unwrap();
        assert!(is_canonical(&m("U D R L F B")));
        assert!(!is_canonical(&m("D U")));
        assert!(!is_canonical(&m("U U2")));
        assert!(is_canonical(&m("U R U")));
        // 18 first moves, then 15 or 12 after each.
        let two = Move::ALL
            .iter()
            .flat_map(|&a| Move::ALL.iter().map(move |&b| [a, b]))
            .filter(|s| is_canonical(s))
            .count();
        assert_eq!(two, 243);
    }

    #[test]
    fn precede_is_the_canonical_rule_read_backwards() {
        for a in Move::ALL {
            for b in Move::ALL {
                let before = PRECEDE[b.face_index()] & (1 << a.index()) != 0;
                assert_eq!(before, can_follow(a, b), "{a} {b}");
            }
            assert_ne!(PRECEDE[START] & (1 << a.index()), 0);
        }
    }
}
