//! What `cubeswarm bench refine-trace` searches and what it records: the heavy 5-move
//! prefixes of a recorded depth ([`heavy_prefixes`]), each searched anew as its 7-move
//! pieces ([`pieces`]), and the depth's [`DepthCells::finer`] made from the pieces'
//! counts ([`finer_entries`]). The search itself is the caller's (the H48 solver lives in
//! the worker crate); this is its bookkeeping.

use crate::trace::{moves_text, share, DepthCells, GRAIN};
use std::collections::BTreeMap;
use tables::{canonical, Move};

/// The default share of its depth's nodes a prefix must hold to be refined: 1/65536.
pub const REFINE_FRACTION: f64 = 1.0 / 65536.0;

/// Length of the pieces a heavy 5-move prefix is searched as.
pub const PIECE_LEN: usize = GRAIN + 3;

/// Whether `count` is at least `fraction` of `total` (and not 0).
fn heavy(count: u64, total: u64, fraction: f64) -> bool {
    count > 0 && count as f64 >= fraction * total as f64
}

/// The 5-move prefixes of `cells` whose recorded count (in [`DepthCells::fine`]) is
/// above 0 and at least `fraction` of the depth's nodes, heaviest first, with that count.
/// A depth cut short lists 0 for the subtrees it did not search: those are left out.
pub fn heavy_prefixes(cells: &DepthCells, fraction: f64) -> Vec<(Vec<Move>, u64)> {
    let total = cells.total();
    let seqs4 = canonical::sequences(GRAIN);
    let mut out: Vec<(Vec<Move>, u64)> = Vec::new();
    for (i, kids) in &cells.fine {
        let Some(p4) = seqs4.get(*i as usize) else {
            continue;
        };
        for (m, &c) in Move::ALL.iter().zip(kids) {
            if heavy(c, total, fraction) && canonical::can_follow(p4[GRAIN - 1], *m) {
                let mut p = p4.clone();
                p.push(*m);
                out.push((p, c));
            }
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// The canonical continuations of `prefix` to `len` moves, in canonical order.
pub fn pieces(prefix: &[Move], len: usize) -> Vec<Vec<Move>> {
    let mut out = vec![prefix.to_vec()];
    for _ in prefix.len()..len {
        out = (out.iter())
            .flat_map(|p| {
                let allowed = canonical::allowed_after(p.last().copied());
                (Move::ALL.iter())
                    .filter(move |m| allowed & (1 << m.index()) != 0)
                    .map(move |m| {
                        let mut q = p.clone();
                        q.push(*m);
                        q
                    })
            })
            .collect();
    }
    out
}

/// A heavy 5-move prefix searched as its pieces.
#[derive(Clone, Debug, PartialEq)]
pub struct Refined {
    /// The 5-move prefix.
    pub prefix: Vec<Move>,
    /// Its count in the trace.
    pub recorded: u64,
    /// Each of its [`PIECE_LEN`]-move pieces with the nodes of its own search.
    pub pieces: Vec<(Vec<Move>, u64)>,
}

/// A depth's [`DepthCells::finer`] from its refined prefixes: each refined 5-move prefix
/// with the sums of its 6-move children's pieces, and each 6-move child holding at
/// least `fraction` of `total` (the depth's nodes) with its pieces' counts. A 6-move
/// child's nodes are weighed as the replay costs them ([`share`]: its part of the
/// recorded count, in proportion to its siblings' searches), so that a refine by a
/// solver that searches fewer nodes than the recording's keeps the same entries. Sorted
/// by prefix, as a trace lists them.
pub fn finer_entries(refined: &[Refined], total: u64, fraction: f64) -> Vec<(String, Vec<u64>)> {
    let mut out: BTreeMap<Vec<Move>, Vec<u64>> = BTreeMap::new();
    for r in refined {
        // Children counts by parent prefix, for parents of 5 and 6 moves.
        let mut kids: BTreeMap<Vec<Move>, Vec<u64>> = BTreeMap::new();
        let pieces =
            (r.pieces.iter()).filter(|(p, _)| p.len() == PIECE_LEN && p.starts_with(&r.prefix));
        for (p, c) in pieces {
            for parent in [GRAIN + 1, GRAIN + 2] {
                let e = kids
                    .entry(p[..parent].to_vec())
                    .or_insert_with(|| vec![0; Move::COUNT]);
                e[p[parent].index()] += c;
            }
        }
        let Some(top) = kids.get(&r.prefix).cloned() else {
            continue;
        };
        for (p, k) in kids {
            if p.len() == GRAIN + 1 || heavy(share(r.recorded, &top, p[GRAIN + 1]), total, fraction)
            {
                out.insert(p, k);
            }
        }
    }
    // In the order of the sequences: a 5-move prefix just before its 6-move children.
    out.into_iter().map(|(p, k)| (moves_text(&p), k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables::parse_moves;

    fn moves(text: &str) -> Vec<Move> {
        parse_moves(text).unwrap()
    }

    #[test]
    fn the_pieces_of_a_prefix_are_its_canonical_continuations_in_order() {
        let p = moves("U R F D L");
        let all = pieces(&p, PIECE_LEN);
        // After L (a second face): 12 moves; after each of those, 15 or 12.
        assert_eq!(all.len(), 6 * 15 + 6 * 12);
        assert!(all
            .iter()
            .all(|q| q.starts_with(&p) && canonical::is_canonical(q)));
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(pieces(&p, p.len()), vec![p.clone()]);
    }

    #[test]
    fn heavy_prefixes_are_the_recorded_children_above_the_fraction_heaviest_first() {
        let seqs4 = canonical::sequences(GRAIN);
        let mut counts = vec![1u64; seqs4.len()];
        let mut kids = vec![0u64; Move::COUNT];
        // Prefix 7's children: F (index 6) 300 nodes, F2 (7) 500, R (3) 0.
        let p4 = &seqs4[7];
        let (f, f2) = (moves("F")[0], moves("F2")[0]);
        assert!(canonical::can_follow(p4[3], f));
        kids[f.index()] = 300;
        kids[f2.index()] = 500;
        counts[7] = 800;
        let cells = DepthCells {
            depth: 15,
            complete: false,
            counts,
            fine: vec![(7, kids)],
            finer: Vec::new(),
        };
        let total = cells.total();
        let with = |m: Move| {
            let mut p = p4.clone();
            p.push(m);
            p
        };
        assert_eq!(
            heavy_prefixes(&cells, 0.0),
            vec![(with(f2), 500), (with(f), 300)]
        );
        let bar = 400.0 / total as f64;
        assert_eq!(heavy_prefixes(&cells, bar), vec![(with(f2), 500)]);
    }

    #[test]
    fn finer_entries_sum_the_pieces_and_keep_the_heavy_six_move_prefixes() {
        let p5 = moves("U R F D L");
        // Every piece 1 node, but those under "U R F D L U" 100 each: 1,500 under "U",
        // 147 under the 11 others (5 first faces of 15 pieces, 6 second of 12).
        let heavy6 = moves("U R F D L U");
        let pieces: Vec<(Vec<Move>, u64)> = (pieces(&p5, PIECE_LEN).into_iter())
            .map(|p| {
                let c = if p.starts_with(&heavy6) { 100 } else { 1 };
                (p, c)
            })
            .collect();
        let refined = |recorded: u64| Refined {
            prefix: p5.clone(),
            recorded,
            pieces: pieces.clone(),
        };
        // Recorded as searched: of the 6-move prefixes only "U" holds 1% of 100,000.
        let entries = finer_entries(&[refined(1_647)], 100_000, 0.01);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].0, "U R F D L");
        assert_eq!(entries[1].0, "U R F D L U");
        let u = moves("U")[0];
        assert_eq!(entries[0].1[u.index()], 1500);
        assert_eq!(entries[0].1.iter().sum::<u64>(), 1500 + 5 * 15 + 6 * 12);
        assert_eq!(entries[1].1.iter().sum::<u64>(), 1500);
        assert_eq!(entries[1].1[u.index()], 0);
        // Recorded with 100 times the nodes (a solver that pruned less): the 6-move
        // prefixes weigh 100 times as much in the replay, and every one is kept, with
        // the counts of the search.
        let entries = finer_entries(&[refined(164_700)], 100_000, 0.01);
        assert_eq!(entries.len(), 13);
        assert_eq!(entries[0].1[u.index()], 1500);
        assert!(entries[1..]
            .iter()
            .all(|(p, _)| p.starts_with("U R F D L ")));
    }
}
