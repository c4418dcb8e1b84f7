//! Canonical move sequences: the one rule every search and the coordinator's splitter
//! share.
//!
//! A sequence is canonical when no face is turned twice in a row and two moves on
//! opposite faces (which commute) appear only in one order: a move of U, R or F may be
//! followed by one of D, L or B, never the reverse. Every position reachable in `n` moves
//! is reachable by a canonical sequence of at most `n` moves, so searches only walk
//! canonical sequences.

use crate::moves::Move;

/// `AFTER[f]`: bit mask over the 18 move indices of the moves that may follow a move of
/// face `f` (`f` = [`START`]: the start of a sequence, where every move may come).
pub const AFTER: [u32; 7] = after_masks();

/// The index of [`AFTER`] for "no move yet": the start of a sequence.
pub const START: usize = 6;

const fn after_masks() -> [u32; 7] {
    let mut out = [0u32; 7];
    out[START] = (1 << 18) - 1;
    let mut f = 0;
    while f < 6 {
        let mut mask = 0u32;
        let mut m = 0;
        while m < 18 {
            let g = m / 3;
            // Not the same face; of two opposite faces, only the lower index first.
            if g != f && !(g % 3 == f % 3 && f > g) {
                mask |= 1 << m;
            }
            m += 1;
        }
        out[f] = mask;
        f += 1;
    }
    out
}

/// Bit mask of the moves allowed after `last` (`None`: the start of a sequence).
#[inline(always)]
pub fn allowed_after(last: Option<Move>) -> u32 {
    AFTER[last.map_or(START, Move::face_index)]
}

/// Is `b` allowed right after `a` in a canonical sequence?
#[inline(always)]
pub fn can_follow(a: Move, b: Move) -> bool {
    AFTER[a.face_index()] & (1 << b.index()) != 0
}

/// Whether a move sequence is canonical.
pub fn is_canonical(moves: &[Move]) -> bool {
    moves.windows(2).all(|w| can_follow(w[0], w[1]))
}

/// All canonical sequences of exactly `len` moves, in lexicographic order of move
/// indices (1, 18, 243, 3240, 43254 sequences for lengths 0 to 4).
pub fn sequences(len: usize) -> Vec<Vec<Move>> {
    let mut out: Vec<Vec<Move>> = vec![Vec::new()];
    for _ in 0..len {
        let mut next = Vec::with_capacity(out.len() * 27 / 2);
        for p in &out {
            let mask = allowed_after(p.last().copied());
            for m in Move::ALL {
                if mask & (1 << m.index()) != 0 {
                    let mut q = p.clone();
                    q.push(m);
                    next.push(q);
                }
            }
        }
        out = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cube;
    use std::collections::HashSet;

    #[test]
    fn counts_follow_the_known_recurrence() {
        let counts: Vec<usize> = (0..=4).map(|n| sequences(n).len()).collect();
        assert_eq!(counts, vec![1, 18, 243, 3240, 43254]);
        assert!(sequences(3).iter().all(|s| is_canonical(s)));
    }

    #[test]
    fn canonical_sequences_reach_every_position_of_their_length() {
        // Every position at distance <= 3 is reached by a canonical sequence of <= 3
        // moves: compare against all 18^3 raw sequences.
        let mut canon = HashSet::new();
        for n in 0..=3 {
            for s in sequences(n) {
                canon.insert(Cube::from_moves(&s));
            }
        }
        for a in Move::ALL {
            for b in Move::ALL {
                for c in Move::ALL {
                    assert!(canon.contains(&Cube::from_moves(&[a, b, c])));
                }
            }
        }
    }

    #[test]
    fn the_rule_is_what_it_says() {
        let m = |s: &str| crate::parse_moves(s).unwrap();
        assert!(is_canonical(&m("U D R L F B")));
        assert!(!is_canonical(&m("D U")));
        assert!(!is_canonical(&m("U U2")));
        assert!(is_canonical(&m("U D2 R")));
        assert!(!can_follow(m("L")[0], m("R'")[0]));
    }
}
