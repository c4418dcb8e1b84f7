//! `twophase-p1m`, the optional phase-1 move table: for each entry of the phase-1 pruning
//! table, how each of the 18 moves changes the distance.
//!
//! # Why
//! Without it, a phase-1 node's children are each located in the 70 MB pruning table (an
//! index of six small-table reads, then a read that misses the caches) to learn their
//! distances, and about one in four passes. With it, the node's own entry gives all 18
//! children's distances, and only the children that pass are located: those that will be
//! expanded in turn, for their own entry. One random read per expanded node instead of
//! about five, and no index work for the children that fail. The search tree is the same
//! (the distances are the same), so node and probe counts do not change.
//!
//! # Layout
//! 64430 · 2187 entries of 32 bits, indexed like `twophase-p1` (FlipUDSlice class,
//! conjugated twist). The position of an entry is its class representative with that
//! twist; for each move `m` (indices into `Move::ALL`) a digit `d = distance(child) -
//! distance + 1` in 0..=2. Bits 0–9, 10–19 and 20–29 hold moves 0–5, 6–11 and 12–17 in base
//! 3 (move `6g + k` has weight `3^k` in group `g`); bits 30–31 hold the distance mod 3, the
//! field the header's distribution counts (checked against `twophase-p1`'s distribution
//! when the table is opened). A node of the search reaches its entry through two UD
//! symmetries (see [`TwoPhaseTables::p1m_locate`]); its move `m` is the representative's
//! move `S₂ S₁ m S₁⁻¹ S₂⁻¹`.
//!
//! 563.6 MB: built from the other two-phase tables by `cubeswarm tables build twophase-p1m`
//! (18 s on two cores), and used by the solver whenever it is in the tables
//! directory.

use super::*;
use ::tables::packed::{prefetch, TableBytes};
use ::tables::tablefile::write_table_with;

/// Name of the phase-1 move table file.
pub const P1M_NAME: &str = "twophase-p1m";

/// Entries (those of `twophase-p1`).
pub(crate) const N_P1M: u64 = (N_FS_CLASSES * N_TWIST) as u64;

/// `DEC3[v]`, `v < 729`: the six base-3 digits of `v`, two bits each (digit `k` at bits
/// `2k`).
const DEC3: [u16; 729] = {
    let mut t = [0u16; 729];
    let mut v = 0;
    while v < 729 {
        let (mut x, mut k, mut out) = (v, 0, 0u16);
        while k < 6 {
            out |= ((x % 3) as u16) << (2 * k);
            x /= 3;
            k += 1;
        }
        t[v] = out;
        v += 1;
    }
    t
};

/// The entry of a position of distance `h` whose 18 children have distances `children`
/// (each within one of `h`, as in any breadth-first distance table).
pub(crate) fn encode(h: u8, children: &[u8; 18]) -> u32 {
    let mut e = u32::from(h % 3) << 30;
    for g in 0..3 {
        let mut v = 0u32;
        for k in (0..6).rev() {
            let digit = u32::from((children[6 * g + k] + 1).saturating_sub(h).min(2));
            v = v * 3 + digit;
        }
        e |= v << (10 * g);
    }
    e
}

/// The digits of an entry, two bits per move in the representative's frame (move `m` at
/// bits `2m`).
#[inline(always)]
pub(crate) fn decode(e: u32) -> u64 {
    u64::from(DEC3[(e & 1023) as usize % 729])
        | u64::from(DEC3[((e >> 10) & 1023) as usize % 729]) << 12
        | u64::from(DEC3[((e >> 20) & 1023) as usize % 729]) << 24
}

/// The move table, mapped or copied into huge pages, and the move permutations of the
/// symmetry pairs.
pub(crate) struct P1Moves {
    bytes: TableBytes,
    /// `perm[s1 · 16 + s2][m]`: the representative's move for a node's move `m`, for a
    /// node conjugated to its representative by `S₁` then `S₂`.
    perm: Vec<[u8; 18]>,
}

impl P1Moves {
    /// Wraps the body of an opened `twophase-p1m` file (its header already checked).
    pub(crate) fn new(file: TableFile, copy: bool) -> Result<P1Moves, Error> {
        let bytes = file.into_bytes()?;
        let bytes = if copy { bytes.to_huge_pages() } else { bytes };
        let syms = ::tables::symmetries();
        let perm = (0..NSYM_UD * NSYM_UD)
            .map(|p| {
                let (s1, s2) = (p / NSYM_UD, p % NSYM_UD);
                std::array::from_fn(|m| {
                    let m1 = syms.conj_move[s1][m];
                    syms.conj_move[s2][m1.index()].index() as u8
                })
            })
            .collect();
        Ok(P1Moves { bytes, perm })
    }

    /// Entry `i` (`i < N_P1M`).
    #[inline(always)]
    pub(crate) fn get(&self, i: u64) -> u32 {
        let b = self.bytes.as_slice();
        let o = i as usize * 4;
        match b.get(o..o + 4) {
            Some(w) => u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
            None => 0,
        }
    }

    /// Starts loading entry `i`'s cache line (a hint).
    #[inline(always)]
    pub(crate) fn prefetch(&self, i: u64) {
        prefetch(self.bytes.as_slice(), i as usize * 4)
    }

    /// The move permutation of symmetry pair `p` (from [`TwoPhaseTables::p1m_locate`]).
    #[inline(always)]
    pub(crate) fn perm(&self, p: u8) -> &[u8; 18] {
        &self.perm[p as usize]
    }

    /// The table's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

impl TwoPhaseTables {
    /// The pruning index of raw phase-1 coordinates and the pair of symmetries
    /// (`s1 · 16 + s2`) that conjugates the position to its entry's position.
    #[inline(always)]
    pub(crate) fn p1m_locate(&self, flip: u16, slice: u16, twist: u16) -> (u64, u8) {
        let (ss, t) = self.slice_class_twist(slice, twist);
        let (i, s2) = self.p1_index_sym_from(flip, slice, ss, t);
        (i, ((ss & 15) * NSYM_UD + s2) as u8)
    }

    /// The distances of the 18 children of raw phase-1 coordinates, from `twophase-p1`.
    pub(crate) fn p1_children(&self, flip: u16, slice: u16, twist: u16) -> [u8; 18] {
        let (f, s, t) = (flip as usize * 18, slice as usize * 18, twist as usize * 18);
        std::array::from_fn(|m| {
            self.p1.get(self.p1_index(
                self.flip_move[f + m],
                self.slice_move[s + m],
                self.twist_move[t + m],
            ))
        })
    }

    /// Distance and children's distances of raw phase-1 coordinates read through the move
    /// table (`None` without one).
    pub(crate) fn p1m_children(&self, flip: u16, slice: u16, twist: u16) -> Option<[u8; 18]> {
        let p1m = self.p1m.as_ref()?;
        let h = self.p1.get(self.p1_index(flip, slice, twist));
        let (i, p) = self.p1m_locate(flip, slice, twist);
        let d = decode(p1m.get(i));
        let perm = p1m.perm(p);
        Some(std::array::from_fn(|m| {
            (h + ((d >> (2 * perm[m])) & 3) as u8).saturating_sub(1)
        }))
    }

    /// Checks an opened move table against `twophase-p1` on positions whose children it
    /// reads both ways: the 18 one-move positions and 200 random ones (a table built from
    /// other tables, or damaged, fails this).
    pub(crate) fn check_p1m(&self) -> Result<(), Error> {
        let mut rng = ::tables::SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        let cubes = Move::ALL
            .iter()
            .map(|&m| Cube::SOLVED.apply_move(m))
            .chain((0..200).map(|_| Cube::random(&mut rng)));
        for c in cubes {
            let (f, s, t) = (
                Flip.index(&c) as u16,
                UdSlice.index(&c) as u16,
                Twist.index(&c) as u16,
            );
            if self.p1m_children(f, s, t) != Some(self.p1_children(f, s, t)) {
                return Err(Error::BadTable {
                    name: P1M_NAME.into(),
                    reason: "its children's distances disagree with twophase-p1: the tables \
                             do not belong together"
                        .into(),
                });
            }
        }
        Ok(())
    }
}

/// Builds `twophase-p1m` into `dir` from the other two-phase tables there (built first if
/// missing), reporting to `progress`.
pub(super) fn build(dir: &Path, progress: &dyn Progress) -> Result<(), Error> {
    for name in TwoPhaseTables::missing(dir) {
        TwoPhaseTables::build(dir, name, progress)?;
    }
    let t = TwoPhaseTables::open_with(dir, TableMemory::HugePages)?;
    // The representative of each FlipUDSlice class: the raw value whose symmetry is the
    // identity (each class's first raw value, see `SymCoord`).
    let fsym = decode_fsym(&TableFile::open(table_path(dir, FSYM_NAME), FSYM_NAME)?)?;
    let mut reps = vec![u32::MAX; N_FS_CLASSES];
    for (raw, &v) in fsym.iter().enumerate() {
        if v & 15 == 0 && reps[(v >> 4) as usize] == u32::MAX {
            reps[(v >> 4) as usize] = raw as u32;
        }
    }
    drop(fsym);
    let meta = TableMeta {
        depth_shift: 30,
        depth_width: 2,
        ..TableMeta::new(P1M_NAME, N_P1M, 32)
    };
    let per_chunk = (::tables::tablefile::BODY_CHUNK / 4) as u64;
    progress.start("twophase-p1m", N_P1M);
    let start = Instant::now();
    write_table_with(&table_path(dir, P1M_NAME), &meta, &|chunk, out| {
        for (k, w) in out.chunks_exact_mut(4).enumerate() {
            let i = chunk as u64 * per_chunk + k as u64;
            let (class, twist) = ((i / N_TWIST as u64) as usize, (i % N_TWIST as u64) as u16);
            let raw = reps[class];
            let (flip, slice) = ((raw % N_FLIP as u32) as u16, (raw / N_FLIP as u32) as u16);
            let e = encode(t.p1.get(i), &t.p1_children(flip, slice, twist));
            w.copy_from_slice(&e.to_le_bytes());
        }
        progress.inc((out.len() / 4) as u64);
    })?;
    progress.finish(&format!(
        "twophase-p1m written in {:.1} s",
        start.elapsed().as_secs_f64()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every distance and every choice of children within one of it survives the
        /// encoding: the digits decode to the children's distances, and the top bits hold
        /// the distance mod 3.
        #[test]
        fn entries_decode_to_the_childrens_distances(
            h in 0u8..13,
            deltas in proptest::array::uniform18(0u8..3),
        ) {
            let children: [u8; 18] = std::array::from_fn(|m| (h + deltas[m]).saturating_sub(1));
            let e = encode(h, &children);
            prop_assert_eq!(e >> 30, u32::from(h % 3));
            let d = decode(e);
            for (m, &kid) in children.iter().enumerate() {
                let digit = ((d >> (2 * m)) & 3) as u8;
                prop_assert_eq!((h + digit).saturating_sub(1), kid);
            }
        }
    }

    #[test]
    fn a_field_past_the_digits_range_decodes_without_panicking() {
        // 1023 is not a six-digit base-3 number; a damaged entry still reads as digits.
        let d = decode(u32::MAX);
        assert!(d < 1 << 36);
    }
}
