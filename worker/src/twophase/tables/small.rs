//! The small tables the two-phase solver computes in memory when it opens (move,
//! conjugation and symmetry tables, the two small pruning tables): a second or so.

use super::*;

/// The tables computed in memory at open.
pub(super) struct SmallTables {
    pub(super) slice_sym: Vec<u16>,
    /// Raw UDSlice of each UDSlice class's representative.
    pub(super) slice_rep: Vec<u16>,
    pub(super) flip_conj: Vec<u16>,
    pub(super) slice_flip_conj: Vec<u16>,
    pub(super) s4_conj: Vec<u8>,
    pub(super) slice_twist: Vec<u8>,
    pub(super) twist_move: Vec<u16>,
    pub(super) flip_move: Vec<u16>,
    pub(super) slice_move: Vec<u16>,
    pub(super) twist_conj: Vec<u16>,
    pub(super) cp_move: Vec<u16>,
    pub(super) e8_move: Vec<u16>,
    pub(super) s4_move: Vec<u8>,
    pub(super) cpsym: Vec<u32>,
    pub(super) e8_conj: Vec<u16>,
    pub(super) cs_prune: Vec<u8>,
}

/// A move table restricted to the phase-2 moves, 16 bits.
fn phase2_moves<C: Coord>(coord: &C) -> Vec<u16> {
    let full = MoveTable::new(coord);
    (0..coord.size())
        .flat_map(|x| {
            let full = &full;
            PHASE2_MOVES
                .iter()
                .map(move |&m| full.get(x, Move::ALL[m as usize]) as u16)
        })
        .collect()
}

fn u16_moves<C: Coord>(coord: &C) -> Vec<u16> {
    MoveTable::new(coord)
        .as_slice()
        .iter()
        .map(|&v| v as u16)
        .collect()
}

fn u16_transform<C: Coord>(coord: &C) -> Vec<u16> {
    let t = TransformTable::new(coord, NSYM_UD);
    (0..NSYM_UD)
        .flat_map(|s| {
            let t = &t;
            (0..coord.size()).map(move |x| t.get(s, x) as u16)
        })
        .collect()
}

/// The two tables of [`TwoPhaseTables::flip_conj`]: the flip of a conjugated position is
/// `P[s][flip] ^ M[s][slice]`, with `M[s][u]` the conjugated flip of a position with flip
/// 0 and UDSlice `u`, and `P[s][f]` that of flip `f` and the solved UDSlice, less the
/// solved slice's `M`. (That the flip splits this way is checked on random positions in
/// the tests.)
pub(super) fn flip_conjugation() -> (Vec<u16>, Vec<u16>) {
    let syms = ::tables::symmetries();
    let solved = UdSlice.index(&Cube::SOLVED) as usize;
    let m: Vec<u16> = (0..NSYM_UD)
        .flat_map(|s| (0..N_SLICE as u32).map(move |u| (s, u)))
        .map(|(s, u)| Flip.index(&syms.conjugate(&UdSlice.to_cube(u), s)) as u16)
        .collect();
    let p: Vec<u16> = (0..NSYM_UD)
        .flat_map(|s| (0..N_FLIP as u32).map(move |f| (s, f)))
        .map(|(s, f)| {
            Flip.index(&syms.conjugate(&Flip.to_cube(f), s)) as u16 ^ m[s * N_SLICE + solved]
        })
        .collect();
    (p, m)
}

impl SmallTables {
    pub(super) fn new() -> SmallTables {
        let ((twist_move, flip_move), (slice_move, twist_conj)) = rayon::join(
            || rayon::join(|| u16_moves(&Twist), || u16_moves(&Flip)),
            || rayon::join(|| u16_moves(&UdSlice), || u16_transform(&Twist)),
        );
        let ((cp_move, e8_move), (e8_conj, corner_slice)) = rayon::join(
            || rayon::join(|| phase2_moves(&CornerPerm), || phase2_moves(&Edge8Perm)),
            || {
                rayon::join(
                    || u16_transform(&Edge8Perm),
                    || SymComposite::new(CornerPerm, Slice4Perm, NSYM_UD),
                )
            },
        );
        let cpsym: Vec<u32> = (0..N_PERM8 as u32)
            .map(|c| corner_slice.sym.class_of(c) << 4 | corner_slice.sym.ttrep(c) as u32)
            .collect();
        let s4_conj: Vec<u8> = (0..NSYM_UD)
            .flat_map(|s| (0..N_SLICE4 as u32).map(move |x| (s, x)))
            .map(|(s, x)| corner_slice.b_trans.get(s, x) as u8)
            .collect();
        let quiet = |name: &str| BfsOptions {
            name: name.into(),
            ..BfsOptions::default()
        };
        let cs = bfs::generate(&Phase2Space(corner_slice), &quiet("twophase corner-slice"));
        let cs_prune: Vec<u8> = (0..cs.table.len()).map(|i| cs.table.get(i)).collect();
        let slice_twist_space = SymComposite::new(UdSlice, Twist, NSYM_UD);
        let slice_sym: Vec<u16> = (0..495)
            .map(|x| {
                (slice_twist_space.sym.class_of(x) << 4 | slice_twist_space.sym.ttrep(x) as u32)
                    as u16
            })
            .collect();
        let slice_twist = bfs::generate(&slice_twist_space, &quiet("twophase slice-twist"))
            .table
            .as_bytes()
            .to_vec();
        let slice_rep: Vec<u16> = (0..slice_twist_space.sym.classes())
            .map(|c| slice_twist_space.sym.rep(c) as u16)
            .collect();
        let (flip_conj, slice_flip_conj) = flip_conjugation();
        let s4 = phase2_moves(&Slice4Perm);
        let s4_move: Vec<u8> = s4.iter().map(|&v| v as u8).collect();
        SmallTables {
            slice_sym,
            slice_rep,
            flip_conj,
            slice_flip_conj,
            s4_conj,
            slice_twist,
            twist_move,
            flip_move,
            slice_move,
            twist_conj,
            cp_move,
            e8_move,
            s4_move,
            cpsym,
            e8_conj,
            cs_prune,
        }
    }
}
