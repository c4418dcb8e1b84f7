//! One depth's counts looked up prefix by prefix ([`DepthIndex`]): a prefix's own count
//! where the trace records it, else an equal share of its deepest recorded ancestor's.

use super::{DepthCells, GRAIN};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use tables::{canonical, parse_moves, Move};

/// A hasher for the integer keys of [`DepthIndex`]: one multiply (a replay looks up some
/// ten thousand pieces a job, and SipHash was a third of its time).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Maps keyed by an integer, hashed by [`KeyHasher`].
type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The key of a canonical sequence in [`DepthIndex`]'s maps: its length and its [`rank`]
/// (`None`: not canonical).
fn key(p: &[Move]) -> Option<u64> {
    Some(((p.len() as u64) << 56) | rank(p)? as u64)
}

/// Canonical continuations of `r` moves after a move of the first face of its axis (U, R
/// or F: 15 moves may follow) and after one of the second (D, L or B: 12 may follow), for
/// `r` up to [`MAX_RANKED`] - 1.
const CONTINUATIONS: [(u64, u64); MAX_RANKED] = {
    // After a first face: the other two first faces (6 moves) and the three second faces
    // (9); after a second face: the two first faces of the other axes (6) and the other
    // two second faces (6).
    let mut t = [(1, 1); MAX_RANKED];
    let mut r = 1;
    while r < MAX_RANKED {
        let (first, second) = t[r - 1];
        t[r] = (6 * first + 9 * second, 6 * first + 6 * second);
        r += 1;
    }
    t
};

/// The longest sequences [`rank`] ranks (13^12 fits a `u64` many times over).
const MAX_RANKED: usize = 12;

/// The moves of the first face of each axis (U, R, F: face index below 3), as bits.
const FIRST_FACES: u32 = (1 << 9) - 1;

/// The index of the canonical sequence `p` in [`canonical::sequences`]`(p.len())`,
/// worked out without listing them (`None`: `p` is not canonical, or longer than
/// [`MAX_RANKED`]).
pub fn rank(p: &[Move]) -> Option<usize> {
    if p.len() > MAX_RANKED {
        return None;
    }
    let mut rank = 0u64;
    let mut last = None;
    for (k, m) in p.iter().enumerate() {
        let allowed = canonical::allowed_after(last);
        if allowed & (1 << m.index()) == 0 {
            return None;
        }
        let (first, second) = CONTINUATIONS[p.len() - k - 1];
        let before = allowed & ((1 << m.index()) - 1);
        rank += u64::from((before & FIRST_FACES).count_ones()) * first
            + u64::from((before & !FIRST_FACES).count_ones()) * second;
        last = Some(*m);
    }
    usize::try_from(rank).ok()
}

/// One depth's counts, indexed for the look-up of single prefixes of [`GRAIN`] moves or
/// more.
#[derive(Clone, Debug, Default)]
pub struct DepthIndex {
    /// Nodes of each [`GRAIN`]-move prefix, by its [`rank`].
    counts: Vec<u64>,
    /// The recorded children of heavy [`GRAIN`]-move prefixes, by the prefix's rank.
    fine: KeyMap<u32, Vec<u64>>,
    /// The recorded children of heavy longer prefixes ([`DepthCells::finer`]), by the
    /// prefix's [`key`].
    finer: KeyMap<u64, Vec<u64>>,
}

impl DepthIndex {
    /// The index of `cells` (a malformed `finer` entry, which [`super::Trace::parse`]
    /// refuses, is left out).
    pub fn new(cells: &DepthCells) -> DepthIndex {
        DepthIndex {
            counts: cells.counts.clone(),
            fine: cells.fine.iter().cloned().collect(),
            finer: (cells.finer.iter())
                .filter_map(|(text, kids)| Some((key(&parse_moves(text).ok()?)?, kids.clone())))
                .collect(),
        }
    }

    /// The nodes of `prefix` (a canonical sequence of at least [`GRAIN`] moves), worked
    /// out move by move from its [`GRAIN`]-move ancestor's count: a child whose parent
    /// has its children recorded gets the parent's nodes split in proportion to them
    /// ([`share`]: its recorded count itself where they sum to the parent's, as a
    /// recording's 5-move counts do), any other an equal share of its parent's (split
    /// evenly over the moves that may follow). 0 for a sequence that is not canonical or
    /// shorter than [`GRAIN`].
    ///
    /// Proportions rather than the counts themselves: `bench refine-trace` counts the 6-
    /// and 7-move children with today's solver, and a solver that prunes better than the
    /// recording's searched some heavy prefixes in a fifth of the nodes; their counts
    /// give the split of the recorded nodes, not their number.
    pub fn count(&self, prefix: &[Move]) -> u64 {
        let Some(i) = prefix.get(..GRAIN).and_then(rank) else {
            return 0;
        };
        self.split(prefix, GRAIN, self.counts.get(i).copied().unwrap_or(0))
    }

    /// The nodes of `prefix` given `nodes`, those of its first `from` moves (at least
    /// [`GRAIN`]), split move by move below them as [`DepthIndex::count`] does.
    pub fn split(&self, prefix: &[Move], from: usize, nodes: u64) -> u64 {
        let mut c = nodes;
        for k in from.max(GRAIN)..prefix.len() {
            let parent = &prefix[..k];
            c = step(parent, self.kids(parent), c, prefix[k]);
        }
        c
    }

    /// `nodes`, those of `prefix` (at least [`GRAIN`] moves), split to each of its
    /// one-move extensions by `moves` as [`DepthIndex::split`] splits them: one look-up
    /// for all (a hollow worker asks this for every part of a piece split where it runs).
    pub fn steps(&self, prefix: &[Move], nodes: u64, moves: &[Move]) -> Vec<u64> {
        let kids = self.kids(prefix);
        (moves.iter())
            .map(|&m| step(prefix, kids, nodes, m))
            .collect()
    }

    /// The recorded children of `prefix` (at least [`GRAIN`] moves), where the trace
    /// holds them.
    fn kids(&self, prefix: &[Move]) -> Option<&Vec<u64>> {
        match prefix.len() {
            GRAIN => (rank(prefix))
                .and_then(|i| u32::try_from(i).ok())
                .and_then(|i| self.fine.get(&i)),
            _ => key(prefix).and_then(|x| self.finer.get(&x)),
        }
    }
}

/// `nodes`, those of `prefix`, split to its extension by `m`: in proportion to its
/// recorded children `kids`, else in equal shares over the moves that may follow.
fn step(prefix: &[Move], kids: Option<&Vec<u64>>, nodes: u64, m: Move) -> u64 {
    match kids {
        Some(kids) => share(nodes, kids, m),
        None => {
            let n = canonical::allowed_after(prefix.last().copied()).count_ones();
            nodes / u64::from(n.max(1))
        }
    }
}

/// `nodes` split in proportion to `kids` (18 counts by move): `m`'s part, rounded down
/// (0 where every count is 0).
pub fn share(nodes: u64, kids: &[u64], m: Move) -> u64 {
    let sum: u128 = kids.iter().map(|&k| u128::from(k)).sum();
    let kid = u128::from(kids.get(m.index()).copied().unwrap_or(0));
    match sum {
        0 => 0,
        _ => u64::try_from(u128::from(nodes) * kid / sum).unwrap_or(u64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_is_the_index_in_the_canonical_order() {
        // Up to the longest prefixes the replay lists whole (`splitsim::recorded`).
        for len in 0..=GRAIN + 1 {
            for (i, s) in canonical::sequences(len).iter().enumerate() {
                assert_eq!(rank(s), Some(i), "{s:?}");
            }
        }
        let u = parse_moves("U").unwrap()[0];
        let d = parse_moves("D").unwrap()[0];
        assert_eq!(rank(&[u, u]), None);
        assert_eq!(rank(&[d, u]), None);
        assert_eq!(rank(&[u, d]), Some(6));
    }

    #[test]
    fn a_share_is_in_proportion_to_the_recorded_counts() {
        let [u, r, f] = [0, 3, 6].map(|i| Move::ALL[i]);
        let mut kids = vec![0; 18];
        kids[u.index()] = 300;
        kids[r.index()] = 100;
        // Children that sum to the parent: their own counts.
        assert_eq!(share(400, &kids, u), 300);
        assert_eq!(share(400, &kids, f), 0);
        // Counted on another scale: the parent's nodes in the same proportions.
        assert_eq!(share(4_000, &kids, u), 3_000);
        assert_eq!(share(1_000, &kids, r), 250);
        assert_eq!(share(u64::MAX, &kids, u), u64::MAX / 4 * 3 + 2);
        assert_eq!(share(1_000, &[0; 18], u), 0);
    }
}
