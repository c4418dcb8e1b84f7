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
//! halves meet. Children are generated first, their table entries prefetched, then
//! evaluated, so the cache misses of siblings overlap.

use super::cocsep::Cocsep;
use super::coords::{Coords, ESEP};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
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

/// `CAN_FOLLOW[p][m]` as a mask over `m`: may move `m` come right after move `p - 1`
/// (`p = 0`: nothing before)?
const fn follow_masks() -> [u32; 19] {
    let mut out = [0u32; 19];
    out[0] = (1 << 18) - 1;
    let mut p = 0;
    while p < 18 {
        let mut mask = 0u32;
        let mut m = 0;
        while m < 18 {
            let (fp, fm) = (p / 3, m / 3);
            if fp != fm && !(fp % 3 == fm % 3 && fp > fm) {
                mask |= 1 << m;
            }
            m += 1;
        }
        out[p + 1] = mask;
        p += 1;
    }
    out
}

/// `CAN_PRECEDE[f][m]` as a mask over `m`: may move `m` come right before move `f - 1`?
const fn precede_masks() -> [u32; 19] {
    let f = follow_masks();
    let mut out = [0u32; 19];
    out[0] = (1 << 18) - 1;
    let mut q = 0;
    while q < 18 {
        let mut mask = 0u32;
        let mut m = 0;
        while m < 18 {
            if f[m + 1] & (1 << q) != 0 {
                mask |= 1 << m;
            }
            m += 1;
        }
        out[q + 1] = mask;
        q += 1;
    }
    out
}

static FOLLOW: [u32; 19] = follow_masks();
static PRECEDE: [u32; 19] = precede_masks();
/// The 12 quarter turns.
const QUARTER: u32 = 0b101_101_101_101_101_101;

/// Is `b` allowed right after `a` in a canonical sequence?
#[inline]
pub fn can_follow(a: Move, b: Move) -> bool {
    FOLLOW[a.index() + 1] & (1 << b.index()) != 0
}

/// Whether a move sequence is canonical.
pub fn is_canonical(moves: &[Move]) -> bool {
    moves.windows(2).all(|w| can_follow(w[0], w[1]))
}

/// An estimate of a child: known (reused), or to be read at a probe.
#[derive(Clone, Copy)]
enum Est {
    Known(u8),
    At(Probe),
}

#[derive(Clone, Copy)]
struct Kid {
    m: Move,
    back: bool,
    n: Cube,
    i: Cube,
    hn: Est,
    hi: Est,
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
    /// Whether the whole subtree was searched.
    pub exhausted: bool,
    /// Solutions that failed verification (a bug if ever non-zero; they are dropped).
    pub invalid: u64,
}

struct State<'a, L> {
    p: &'a Pruner<L>,
    cube: Cube,
    front: [Move; MAX_DEPTH],
    nf: usize,
    back: [Move; MAX_DEPTH],
    nb: usize,
    max_solutions: usize,
    solutions: Vec<Vec<Move>>,
    cancel: &'a AtomicBool,
    stopped: bool,
    nodes: u64,
    lookups: u64,
    check_at: u64,
    invalid: u64,
}

/// Nodes between two looks at the cancel flag.
const CHECK_EVERY: u64 = 4096;

/// Finds up to `max_solutions` canonical solutions of exactly `depth` moves of `cube`
/// that start with `prefix` (see the module docs). `cube` must be a legal position.
pub fn search<L: Lookup>(
    p: &Pruner<L>,
    cube: &Cube,
    prefix: &[Move],
    depth: u8,
    max_solutions: usize,
    cancel: &AtomicBool,
) -> Found {
    let mut st = State {
        p,
        cube: *cube,
        front: [Move::ALL[0]; MAX_DEPTH],
        nf: 0,
        back: [Move::ALL[0]; MAX_DEPTH],
        nb: 0,
        max_solutions,
        solutions: Vec::new(),
        cancel,
        stopped: false,
        nodes: 0,
        lookups: 0,
        check_at: CHECK_EVERY,
        invalid: 0,
    };
    let depth = depth as usize;
    let done = |st: State<'_, L>, exhausted| Found {
        solutions: st.solutions,
        nodes: st.nodes,
        lookups: st.lookups,
        exhausted,
        invalid: st.invalid,
    };
    if max_solutions == 0 || cancel.load(Relaxed) {
        return done(st, false);
    }
    if depth > MAX_DEPTH || prefix.len() > depth || !is_canonical(prefix) {
        return done(st, true);
    }
    let mut n = *cube;
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
        return done(st, true);
    }
    let i = n.inverse();
    let hn = p.estimate(&n);
    let hi = p.estimate(&i);
    st.lookups += 2;
    st.nodes += 1;
    if hn.max(hi) <= r {
        let mf = FOLLOW[prefix.last().map_or(0, |m| m.index() + 1)];
        st.dfs(&n, &i, hn, hi, r, mf, PRECEDE[0]);
    }
    let exhausted = !st.stopped;
    done(st, exhausted)
}

impl<L: Lookup> State<'_, L> {
    /// `FOLLOW`/`PRECEDE` row of the last front move (0: none).
    #[inline(always)]
    fn last_front(&self) -> usize {
        if self.nf > 0 {
            self.front[self.nf - 1].index() + 1
        } else {
            0
        }
    }

    /// `FOLLOW`/`PRECEDE` row of the first back move, the last one made (0: none).
    #[inline(always)]
    fn first_back(&self) -> usize {
        if self.nb > 0 {
            self.back[self.nb - 1].index() + 1
        } else {
            0
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
        }
    }

    /// Searches below a node with `r >= 1` moves left and estimates `hn, hi <= r`.
    ///
    /// `mf` and `mb` are the moves still allowed as the next front and the next back
    /// move: canonical after the last move on that side, and without half turns when an
    /// ancestor (since that side last moved) had a tight estimate on the other side.
    /// That restriction holds until the side moves: if the inverse needs `r` moves, the
    /// first of the remaining front moves cannot be a half turn, whatever back moves come
    /// before it (it would be the last move solving the inverse into the target group,
    /// which contains the half turns). The side with fewer allowed moves is expanded.
    fn dfs(&mut self, n: &Cube, i: &Cube, hn: u8, hi: u8, r: u8, mf: u32, mb: u32) {
        if self.nodes >= self.check_at {
            self.check_at = self.nodes + CHECK_EVERY;
            if self.cancel.load(Relaxed) {
                self.stopped = true;
            }
        }
        if self.stopped {
            return;
        }
        let mf = if hi == r { mf & QUARTER } else { mf };
        let mb = if hn == r { mb & QUARTER } else { mb };
        let back = mb.count_ones() < mf.count_ones();
        let mut allowed = if back { mb } else { mf };
        if r == 1 {
            // The move also meets the other half.
            allowed &= if back {
                FOLLOW[self.last_front()]
            } else {
                PRECEDE[self.first_back()]
            };
        }
        let rr = r - 1;
        let p = self.p;
        let mut kids: [std::mem::MaybeUninit<Kid>; 18] = [std::mem::MaybeUninit::uninit(); 18];
        let mut nk = 0;
        while allowed != 0 {
            let mi = allowed.trailing_zeros() as usize;
            allowed &= allowed - 1;
            let m = Move::ALL[mi];
            let mc = &MOVE_CUBES[mi];
            let minv = &MOVE_CUBES[m.inverse().index()];
            let (n2, i2) = if back {
                (mc.compose(n), i.compose(minv))
            } else {
                (n.compose(mc), minv.compose(i))
            };
            self.nodes += 1;
            if rr == 0 {
                if n2.is_solved() {
                    if back {
                        self.back[self.nb] = m;
                        self.nb += 1;
                        self.record(None);
                        self.nb -= 1;
                    } else {
                        self.record(Some(m));
                    }
                    if self.stopped {
                        return;
                    }
                }
                continue;
            }
            if rr == 1 {
                // One move must solve the child: compare it with the 18 move cubes
                // instead of reading tables.
                if !is_one_move(&n2) {
                    continue;
                }
                // A half turn is in the target group (estimate 0), a quarter turn is not
                // (estimate 1): the same values the tables hold.
                let h = if is_half_turn(&n2) { 0 } else { 1 };
                kids[nk].write(Kid {
                    m,
                    back,
                    n: n2,
                    i: i2,
                    hn: Est::Known(h),
                    hi: Est::Known(h),
                });
                nk += 1;
                continue;
            }
            let half = m.is_half();
            let hn2 = if back && half {
                Est::Known(hn)
            } else {
                let w = p.corner_word(&n2);
                let cd = (w >> 18) as u8;
                if cd > rr {
                    continue;
                }
                let idx = p.index(&n2, w);
                p.table.prefetch(idx);
                Est::At(Probe { cd, idx })
            };
            let hi2 = if !back && half {
                Est::Known(hi)
            } else {
                let w = p.corner_word(&i2);
                let cd = (w >> 18) as u8;
                if cd > rr {
                    continue;
                }
                let idx = p.index(&i2, w);
                p.table.prefetch(idx);
                Est::At(Probe { cd, idx })
            };
            kids[nk].write(Kid {
                m,
                back,
                n: n2,
                i: i2,
                hn: hn2,
                hi: hi2,
            });
            nk += 1;
        }
        for k in kids.iter().take(nk) {
            // SAFETY: the first `nk` entries were written in the loop above.
            let k = unsafe { k.assume_init_ref() };
            let hn2 = match k.hn {
                Est::Known(v) => v,
                Est::At(pr) => {
                    self.lookups += 1;
                    pr.cd.max(p.table.value(pr.idx, pr.cd))
                }
            };
            if hn2 > rr {
                continue;
            }
            let hi2 = match k.hi {
                Est::Known(v) => v,
                Est::At(pr) => {
                    self.lookups += 1;
                    pr.cd.max(p.table.value(pr.idx, pr.cd))
                }
            };
            if hi2 > rr {
                continue;
            }
            if k.back {
                self.back[self.nb] = k.m;
                self.nb += 1;
                self.dfs(&k.n, &k.i, hn2, hi2, rr, mf, PRECEDE[k.m.index() + 1]);
                self.nb -= 1;
            } else {
                self.front[self.nf] = k.m;
                self.nf += 1;
                self.dfs(&k.n, &k.i, hn2, hi2, rr, FOLLOW[k.m.index() + 1], mb);
                self.nf -= 1;
            }
            if self.stopped {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
