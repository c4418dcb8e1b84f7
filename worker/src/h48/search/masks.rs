//! The canonical order's masks for moves made at the back ([`PRECEDE`]), the quarter
//! turns, and the tests of a cube one move from solved.

use tables::canonical::{AFTER, START};
use tables::moves::MOVE_CUBES;
use tables::{Cube, Move};

/// `PRECEDE[f]`: bit mask of the moves that may come right before a move of face `f` in
/// a canonical sequence (`f` = [`START`]: no move after it yet, so every move), derived
/// from the rule's [`AFTER`] masks. The search grows solutions from both ends: a back
/// move is prepended to the moves already at the back.
pub(super) const PRECEDE: [u32; 7] = {
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
pub(super) const QUARTER: u32 = 0b101_101_101_101_101_101;

/// Is `c` one move away from solved (one of the 18 move cubes)?
#[inline(always)]
pub(super) fn is_one_move(c: &Cube) -> bool {
    MOVE_CUBES.iter().any(|m| m == c)
}

/// Is `c` one of the six half-turn cubes?
#[inline(always)]
pub(super) fn is_half_turn(c: &Cube) -> bool {
    Move::HALF_TURNS.iter().any(|m| MOVE_CUBES[m.index()] == *c)
}
