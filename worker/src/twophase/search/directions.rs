//! The directions searched: the position or its inverse, conjugated by the three
//! symmetries about the URF–DBL diagonal, each with up to two premoves.

use super::*;

/// One of the six directions.
#[derive(Clone, Copy)]
pub(super) struct Direction {
    /// The position searched: the original or its inverse, conjugated by `sym`.
    pub(super) cube: Cube,
    /// 0, 16 or 32: identity, URF3, URF3².
    pub(super) sym: usize,
    /// Whether `cube` comes from the inverse position.
    pub(super) inverse: bool,
    /// Root phase-1 coordinates.
    pub(super) flip: u16,
    pub(super) slice: u16,
    pub(super) twist: u16,
    /// Exact phase-1 distance of the root.
    pub(super) h1: u8,
    /// Moves applied before the position (in this direction's frame), appended to every
    /// solution: `pre[..npre]`.
    pub(super) pre: [u8; 2],
    /// Number of premoves (0..=2).
    pub(super) npre: u8,
}

/// The premoves tried: quarter turns of R, L, F and B (a phase-2 move as premove would
/// only give solutions the plain direction finds anyway).
pub(super) const PREMOVES: [u8; 8] = [3, 5, 6, 8, 12, 14, 15, 17];

/// Two-move premoves join the search this many levels after the first level at which
/// any direction could produce a phase-1 solution.
pub(super) const TWO_PREMOVES_AFTER: u8 = 0;

/// Adds the directions with `npre` premoves (0, 1 or 2) to each base position: the
/// premove sequences are canonical and made of quarter turns of R, L, F and B only.
pub(super) fn add_directions(
    t: &TwoPhaseTables,
    bases: &[(Cube, usize, bool)],
    npre: u8,
    dirs: &mut Vec<Direction>,
) {
    let mut seqs: Vec<[u8; 2]> = Vec::new();
    match npre {
        0 => seqs.push([0, 0]),
        1 => seqs.extend(PREMOVES.iter().map(|&p| [p, 0])),
        _ => {
            for &a in &PREMOVES {
                for &b in &PREMOVES {
                    if AFTER[a as usize / 3] & (1 << b) != 0 {
                        seqs.push([a, b]);
                    }
                }
            }
        }
    }
    let first = dirs.len();
    for &(base, sym, inverse) in bases {
        for pre in &seqs {
            // The premoves p come first: the position searched is p · base, and a
            // solution s of it gives s + p for the base.
            let c = pre[..npre as usize]
                .iter()
                .fold(Cube::SOLVED, |c, &m| c.apply_move(Move::ALL[m as usize]))
                .compose(&base);
            let (flip, slice, twist) = (
                Flip.index(&c) as u16,
                UdSlice.index(&c) as u16,
                Twist.index(&c) as u16,
            );
            // The distance is read below, once every entry has been prefetched.
            t.p1.prefetch(t.p1_index(flip, slice, twist));
            dirs.push(Direction {
                cube: c,
                sym,
                inverse,
                flip,
                slice,
                twist,
                h1: 0,
                pre: *pre,
                npre,
            });
        }
    }
    for d in &mut dirs[first..] {
        d.h1 = t.p1.get(t.p1_index(d.flip, d.slice, d.twist));
    }
}
