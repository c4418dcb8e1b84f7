//! One move prefix per orbit: the subtrees a search of a symmetric position may skip, and
//! its solutions made whole again from those it kept.
//!
//! Let `G` be the symmetries that fix the position `c` ([`SelfSymmetry::fixing`]). The
//! prefixes form a tree; at the node reached by prefix `P` (the position `c·P`), take
//! `H(P)`: the symmetries of `G` that fix `P` as a cube (so `t(c·P) = c·P`) and, below the
//! root, the face of `P`'s last move. For `t` in `H(P)` and a continuation `X` solving
//! `c·P`, `P · t(X)` (each move conjugated) solves `c` too, and put back in canonical order
//! (two moves on one axis swapped where needed) it is still canonical: `t` keeps the
//! moves allowed after `P`'s last one. So the children `P·m` and `P·t(m)` hold the same
//! solutions up to `t`, and [`PrefixOrbits::prefixes`] keeps, at each node, the allowed
//! moves in index order, skipping every image under `H(P)` of a move already kept.
//!
//! Nothing is lost: a solution under a skipped child `P·t(m)` is carried by `t⁻¹` to one
//! under `P·m` or, where canonical order swaps the first two moves, under `P·y` with `y`
//! the U, R or F move of `m`'s axis; both come before `t(m)` in index order. Each such
//! step lowers the solution in lexicographic order while keeping its prefix, so repeating
//! it at each level ends under a kept prefix. [`PrefixOrbits::regenerate`] walks the same
//! steps the other way: the closure of the kept subtrees' solutions under every `H(P)`
//! along their prefixes is exactly the set an unreduced search finds.
//!
//! The symmetries that map `c` to its inverse are not used: they carry a solution's
//! prefix to another solution's suffix, which no prefix subtree holds.

use super::{symmetries, SelfSymmetry, SymSet};
use crate::canonical::{allowed_after, can_follow};
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

    /// The canonical prefixes of `len` moves, one per orbit (see the module
    /// documentation), in lexicographic order of move indices: every canonical sequence
    /// of `len` moves when the position has no symmetry.
    pub fn prefixes(&self, len: usize) -> Vec<Vec<Move>> {
        if self.is_trivial() {
            return crate::canonical::sequences(len);
        }
        let s = symmetries();
        let mut out: Vec<Vec<Move>> = vec![Vec::new()];
        for _ in 0..len {
            let mut next = Vec::with_capacity(out.len() * 14);
            for p in &out {
                let h = self.node_group(p);
                let mut open = allowed_after(p.last().copied());
                for m in Move::ALL {
                    if open & (1 << m.index()) == 0 {
                        continue;
                    }
                    let mut q = p.clone();
                    q.push(m);
                    next.push(q);
                    for t in h.iter() {
                        open &= !(1 << s.conj_move[t][m.index()].index());
                    }
                }
            }
            out = next;
        }
        out
    }

    /// Every solution of the unreduced search, from the solutions found under the kept
    /// prefixes of `len` moves ([`PrefixOrbits::prefixes`]): their closure under each
    /// `H(P)` along their first `len` moves. Sorted, without duplicates; `found` itself
    /// when the position has no symmetry.
    pub fn regenerate(&self, found: &[Vec<Move>], len: usize) -> Vec<Vec<Move>> {
        let mut all: Vec<Vec<Move>> = found.to_vec();
        if !self.is_trivial() {
            let s = symmetries();
            let mut seen: HashSet<Vec<Move>> = all.iter().cloned().collect();
            let mut groups: HashMap<Vec<Move>, SymSet> = HashMap::new();
            let mut i = 0;
            while i < all.len() {
                let sol = all[i].clone();
                i += 1;
                for k in 0..len.min(sol.len()) {
                    let h = *groups
                        .entry(sol[..k].to_vec())
                        .or_insert_with(|| self.node_group(&sol[..k]));
                    for t in h.iter().filter(|&t| t != 0) {
                        let mut image = sol.clone();
                        for m in &mut image[k..] {
                            *m = s.conj_move[t][m.index()];
                        }
                        let Some(image) = canonical_order(image) else {
                            continue;
                        };
                        debug_assert!(self.cube.apply_moves(&image).is_solved());
                        if seen.insert(image.clone()) {
                            all.push(image);
                        }
                    }
                }
            }
        }
        all.sort();
        all.dedup();
        all
    }
}

/// `moves` with each pair of moves on opposite faces put in canonical order (the U, R or
/// F one first), or `None` when no order is canonical (a face turned twice in a row).
pub fn canonical_order(mut moves: Vec<Move>) -> Option<Vec<Move>> {
    for i in 1..moves.len() {
        let (a, b) = (moves[i - 1], moves[i]);
        if a.axis() == b.axis() && a.face_index() > b.face_index() {
            moves.swap(i - 1, i);
        }
    }
    moves
        .windows(2)
        .all(|w| can_follow(w[0], w[1]))
        .then_some(moves)
}

#[cfg(test)]
mod tests;
