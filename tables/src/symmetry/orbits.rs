//! One move prefix per class: the subtrees a search of a symmetric position may skip, and
//! its solutions made whole again from those it kept.
//!
//! Let `G` be the symmetries that fix the position `c` ([`SelfSymmetry::fixing`]). At the
//! node reached by prefix `P` (the position `c·P`), take `H(P)`: the symmetries of `G` that
//! fix `P` as a cube (so `t(c·P) = c·P`) and, below the root, the face of `P`'s last move.
//! For `t` in `H(P)` and a continuation `X` solving `c·P`, `P · t(X)` (each move
//! conjugated) solves `c` too, and put back in canonical order (two moves on one axis
//! swapped where needed) it is still canonical: `t` keeps the moves allowed after `P`'s
//! last one. These transforms, at every level of the prefix, connect the solutions into
//! sets whose members an unreduced search would all find.
//!
//! [`PrefixOrbits::classes`] joins the prefixes the transforms connect into classes
//! ([`PrefixClasses`]), and [`PrefixClasses::keep`] picks which to search: one per class
//! (the cheapest, by whatever cost the caller measured), plus what the solutions that
//! straddle the prefix's end with two moves on one axis need. [`PrefixOrbits::regenerate`]
//! then closes the kept subtrees' solutions under the transforms: the result is exactly
//! the set an unreduced search finds (the tests compare the two).
//!
//! The symmetries that map `c` to its inverse are not used: they carry a solution's
//! prefix to another solution's suffix, which no prefix subtree holds.

use super::{symmetries, SelfSymmetry, SymSet};
use crate::canonical::can_follow;
use crate::{Cube, Move};
use std::collections::{HashMap, HashSet};

/// A position's symmetry as the prefix tree of its search sees it. See the module
/// documentation.
#[derive(Clone, Debug)]
pub struct PrefixOrbits {
    cube: Cube,
    /// The symmetries that fix the position (the identity alone: no reduction).
    group: SymSet,
}

impl PrefixOrbits {
    /// The reduction for position `cube` (48 conjugations).
    pub fn of(cube: &Cube) -> PrefixOrbits {
        let SelfSymmetry { fixing, .. } = symmetries().of_cube(cube);
        PrefixOrbits {
            cube: *cube,
            group: fixing,
        }
    }

    /// The same position searched whole: every prefix kept, solutions left as found.
    pub fn none(cube: &Cube) -> PrefixOrbits {
        PrefixOrbits {
            cube: *cube,
            group: SymSet(1),
        }
    }

    /// The symmetries that fix the position.
    pub fn group(&self) -> SymSet {
        self.group
    }

    /// Whether no prefix is ever skipped (the position has no symmetry but the identity).
    pub fn is_trivial(&self) -> bool {
        self.group.len() <= 1
    }

    /// `H(P)`: the symmetries of the group that fix `prefix` as a cube and the face of its
    /// last move (the identity always among them).
    pub fn node_group(&self, prefix: &[Move]) -> SymSet {
        if self.is_trivial() {
            return SymSet(1);
        }
        let s = symmetries();
        let p = Cube::from_moves(prefix);
        let mut out = SymSet(1);
        for t in self.group.iter().filter(|&t| t != 0) {
            let face_kept = prefix
                .last()
                .is_none_or(|&u| s.conj_move[t][u.index()].face_index() == u.face_index());
            if face_kept && s.conjugate(&p, t) == p {
                out.0 |= 1 << t;
            }
        }
        out
    }

    /// The classes of the canonical prefixes of `len` moves (see [`PrefixClasses`]).
    pub fn classes(&self, len: usize) -> PrefixClasses {
        let prefixes = crate::canonical::sequences(len);
        let n = prefixes.len();
        if self.is_trivial() || len == 0 {
            return PrefixClasses {
                class: (0..n as u32).collect(),
                classes: n as u32,
                pairs: Vec::new(),
            };
        }
        let index: HashMap<u64, u32> = (prefixes.iter())
            .enumerate()
            .map(|(i, p)| (code(p), i as u32))
            .collect();
        let groups = self.node_generators(len);
        let mut buf = Vec::with_capacity(len + 1);
        // Prefixes: one class per connected set under the transforms.
        let mut joined = Joined::new(n);
        for (i, p) in prefixes.iter().enumerate() {
            self.for_images(p, len, &groups, &mut buf, |image| {
                if let Some(&j) = index.get(&code(image)) {
                    joined.join(i, j as usize);
                }
            });
        }
        let (class, classes) = joined.labels();
        // Pairs: a prefix ending in a U, R or F move, then a move of the opposite face.
        let mut pair_seqs: Vec<Vec<Move>> = Vec::new();
        for p in prefixes.iter() {
            let u = p[len - 1];
            if u.face_index() < 3 {
                for v in 0..3 {
                    let mut q = p.clone();
                    q.push(Move::ALL[(u.face_index() + 3) * 3 + v]);
                    pair_seqs.push(q);
                }
            }
        }
        let pair_index: HashMap<u64, usize> = (pair_seqs.iter())
            .enumerate()
            .map(|(i, p)| (code(p), i))
            .collect();
        let mut joined = Joined::new(pair_seqs.len());
        for (i, q) in pair_seqs.iter().enumerate() {
            self.for_images(q, len, &groups, &mut buf, |image| {
                if let Some(&j) = pair_index.get(&code(image)) {
                    joined.join(i, j);
                }
            });
        }
        let (label, count) = joined.labels();
        let mut pairs: Vec<Vec<(u32, Move)>> = vec![Vec::new(); count as usize];
        for (i, q) in pair_seqs.iter().enumerate() {
            if let Some(&p) = index.get(&code(&q[..len])) {
                pairs[label[i] as usize].push((p, q[len]));
            }
        }
        for members in &mut pairs {
            members.sort_unstable();
            members.dedup();
        }
        PrefixClasses {
            class,
            classes,
            pairs,
        }
    }

    /// Generators of `H(P)` (the identity left out) for every canonical prefix `P` of
    /// fewer than `len` moves, by [`code`]: the transforms' closure under them is their
    /// closure under the whole group.
    fn node_generators(&self, len: usize) -> HashMap<u64, Vec<u8>> {
        let mut out = HashMap::new();
        for k in 0..len {
            for p in crate::canonical::sequences(k) {
                let g = generators(self.node_group(&p));
                if !g.is_empty() {
                    out.insert(code(&p), g);
                }
            }
        }
        out
    }

    /// Calls `f` with the image of `moves` under each generator of `H(P)` for its prefixes
    /// `P` of fewer than `len` moves, in canonical order (`buf` holds it).
    fn for_images(
        &self,
        moves: &[Move],
        len: usize,
        groups: &HashMap<u64, Vec<u8>>,
        buf: &mut Vec<Move>,
        mut f: impl FnMut(&[Move]),
    ) {
        let s = symmetries();
        for k in 0..len.min(moves.len()) {
            let Some(gens) = groups.get(&code(&moves[..k])) else {
                continue;
            };
            for &t in gens {
                buf.clear();
                buf.extend_from_slice(moves);
                for m in &mut buf[k..] {
                    *m = s.conj_move[usize::from(t)][m.index()];
                }
                if put_in_canonical_order(buf) {
                    f(buf);
                }
            }
        }
    }

    /// Every solution of the unreduced search, from the solutions found under the kept
    /// prefixes of `len` moves (see [`PrefixClasses`]): their closure under each
    /// `H(P)` along their first `len` moves, each image checked to solve the position.
    /// Sorted, without duplicates; `found` itself when the position has no symmetry.
    pub fn regenerate(&self, found: &[Vec<Move>], len: usize) -> Vec<Vec<Move>> {
        let mut all: Vec<Vec<Move>> = found.to_vec();
        if !self.is_trivial() {
            let groups = self.node_generators(len);
            let mut seen: HashSet<Vec<Move>> = all.iter().cloned().collect();
            let mut buf = Vec::new();
            let mut i = 0;
            while i < all.len() {
                let sol = all[i].clone();
                i += 1;
                self.for_images(&sol, len, &groups, &mut buf, |image| {
                    // An image of a solution solves the position; checked all the same,
                    // as every solution reported is.
                    if !seen.contains(image) && self.cube.apply_moves(image).is_solved() {
                        seen.insert(image.to_vec());
                        all.push(image.to_vec());
                    }
                });
            }
        }
        all.sort();
        all.dedup();
        all
    }
}

/// A sequence's key: its move indices plus one, in base 19.
fn code(moves: &[Move]) -> u64 {
    moves.iter().fold(0, |a, m| a * 19 + m.index() as u64 + 1)
}

/// A few symmetries of `h` that generate it (the identity left out).
fn generators(h: SymSet) -> Vec<u8> {
    let s = symmetries();
    let mut made = SymSet(1);
    let mut out = Vec::new();
    for t in h.iter() {
        if made.contains(t) {
            continue;
        }
        out.push(t as u8);
        // Close the subgroup under products with the new generator.
        made.0 |= 1 << t;
        loop {
            let mut more = made;
            for a in made.iter() {
                for b in made.iter() {
                    more.0 |= 1 << s.mult[a][b];
                }
            }
            if more == made {
                break;
            }
            made = more;
        }
    }
    out
}

/// The canonical prefixes of one length, in classes: a search that keeps one prefix of
/// each class, and for each class of pairs one of its pairs' subtrees (or a whole prefix
/// it holds), finds, once [regenerated](PrefixOrbits::regenerate), every solution.
///
/// A solution whose moves at the prefix's end and right after it are not on one axis is
/// carried by the transforms to solutions under every prefix of its prefix's class. One
/// whose prefix ends in a U, R or F move followed by a move of the opposite face (a
/// "pair") may be carried to one whose canonical order puts the pair's other move last in
/// the prefix: such solutions follow their (prefix + one move) sequence's own class.
#[derive(Clone, Debug)]
pub struct PrefixClasses {
    /// The class of each prefix, by its index in [`crate::canonical::sequences`].
    class: Vec<u32>,
    /// How many classes.
    classes: u32,
    /// Each class of pair sequences: its prefixes' indices and the moves after them.
    pairs: Vec<Vec<(u32, Move)>>,
}

impl PrefixClasses {
    /// How many prefixes.
    pub fn len(&self) -> usize {
        self.class.len()
    }

    /// Whether there are no prefixes.
    pub fn is_empty(&self) -> bool {
        self.class.is_empty()
    }

    /// How many classes (the fewest prefixes a search may keep).
    pub fn classes(&self) -> usize {
        self.classes as usize
    }

    /// The class of prefix `i` (numbered from 0 in order of their first prefix).
    pub fn class_of(&self, i: u32) -> usize {
        self.class
            .get(i as usize)
            .map_or(usize::MAX, |&c| c as usize)
    }

    /// What to search (see [`Kept`]): in each class the prefix of least `cost` (the
    /// lowest index among equals), and for each class of pairs none of
    /// whose prefixes is kept, the pair (prefix and move) whose prefix costs least.
    pub fn keep(&self, cost: impl Fn(u32) -> u64) -> Kept {
        let cost = |i: u32| (cost(i), i);
        let mut best: Vec<Option<(u64, u32)>> = vec![None; self.classes as usize];
        for (i, &c) in self.class.iter().enumerate() {
            let key = cost(i as u32);
            let b = &mut best[c as usize];
            if b.is_none_or(|b| key < b) {
                *b = Some(key);
            }
        }
        let mut kept = vec![false; self.class.len()];
        for (_, i) in best.into_iter().flatten() {
            kept[i as usize] = true;
        }
        let mut pairs = Vec::new();
        for members in &self.pairs {
            if members.iter().any(|&(i, _)| kept[i as usize]) {
                continue;
            }
            if let Some(&p) = members.iter().min_by_key(|&&(i, m)| (cost(i), m)) {
                pairs.push(p);
            }
        }
        pairs.sort_unstable();
        Kept {
            prefixes: (0..self.class.len() as u32)
                .filter(|&i| kept[i as usize])
                .collect(),
            pairs,
        }
    }
}

/// The subtrees a search keeps ([`PrefixClasses::keep`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Prefixes, by index in [`crate::canonical::sequences`], in increasing order.
    pub prefixes: Vec<u32>,
    /// Subtrees one move below a prefix not kept, in increasing order: the prefix's index
    /// and the move (of the face opposite its last move's).
    pub pairs: Vec<(u32, Move)>,
}

impl Kept {
    /// Whether `moves` lies in a kept subtree (`len`: the prefixes' length).
    pub fn holds(&self, prefixes: &[Vec<Move>], len: usize, moves: &[Move]) -> bool {
        let under = |i: u32| {
            prefixes
                .get(i as usize)
                .is_some_and(|p| moves.starts_with(p))
        };
        self.prefixes.iter().any(|&i| under(i))
            || (self.pairs.iter()).any(|&(i, m)| under(i) && moves.get(len) == Some(&m))
    }
}

/// Union-find over `0..n`.
struct Joined {
    parent: Vec<u32>,
}

impl Joined {
    fn new(n: usize) -> Joined {
        Joined {
            parent: (0..n as u32).collect(),
        }
    }

    fn root(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let up = self.parent[self.parent[x] as usize];
            self.parent[x] = up;
            x = up as usize;
        }
        x
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        self.parent[a.max(b)] = a.min(b) as u32;
    }

    /// Each element's class, numbered from 0 in order of first element, and the count.
    fn labels(mut self) -> (Vec<u32>, u32) {
        let n = self.parent.len();
        let mut label = vec![u32::MAX; n];
        let mut next = 0u32;
        let out = (0..n)
            .map(|i| {
                let r = self.root(i);
                if label[r] == u32::MAX {
                    label[r] = next;
                    next += 1;
                }
                label[r]
            })
            .collect();
        (out, next)
    }
}

/// `moves` with each pair of moves on opposite faces put in canonical order (the U, R or
/// F one first), or `None` when no order is canonical (a face turned twice in a row).
pub fn canonical_order(mut moves: Vec<Move>) -> Option<Vec<Move>> {
    put_in_canonical_order(&mut moves).then_some(moves)
}

/// [`canonical_order`] in place: whether the result is canonical.
fn put_in_canonical_order(moves: &mut [Move]) -> bool {
    for i in 1..moves.len() {
        let (a, b) = (moves[i - 1], moves[i]);
        if a.axis() == b.axis() && a.face_index() > b.face_index() {
            moves.swap(i - 1, i);
        }
    }
    moves.windows(2).all(|w| can_follow(w[0], w[1]))
}

#[cfg(test)]
mod tests;
