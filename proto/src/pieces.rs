//! A subtree job's pieces: each of its prefixes searched as its canonical extensions by a
//! few front moves, one search each, so that what the job has not started is a list the
//! worker can hand back ([`Handback`]) while it finishes what it has.
//!
//! Both ends enumerate the same pieces in the same order ([`for_each_piece`]): the
//! job's prefixes in their order, each one's extensions in move order (depth first). A
//! worker asked to hand back answers with the number of pieces it has started, and the
//! coordinator takes every piece from there on. The H48 search grows its path on either
//! side of the cube (front moves and the inverse's), so the unstarted part of a running
//! search is not a set of prefixes; its pieces, each a whole search, are.

use crate::job::JobId;
use tables::{canonical, Move};

/// Most moves a job's pieces add to its prefixes (12 to 15 pieces a move: up to 2,646
/// a prefix).
///
/// *Why* 3: a piece is searched whole by one thread, so a job's end waits for its
/// heaviest piece. A unit ranked on older counts can hold ten times its prediction
/// (19b-all's depth 18 at 1,024 threads: one 4-move prefix of 4.0e6 nodes, whose 6-move
/// pieces of 1.14e6, 8.3e5 and 5.4e5 nodes ran 38, 28 and 18 ms on one thread each while
/// the other 1,021 waited); a third move cuts those a further 12 to 15 ways. The
/// scheduler asks for 2 unless configured (`coordinator::Config::piece_levels`, and why).
pub const MAX_PIECE_LEVELS: u8 = 3;

/// The moves a prefix of `prefix_len` moves is extended by for its pieces at `depth`,
/// when the job asks for `asked`: at most [`MAX_PIECE_LEVELS`], and short of the depth
/// by at least one move (a piece as long as the depth is a leaf, not a search).
pub fn levels_for(prefix_len: usize, depth: u8, asked: u8) -> u8 {
    let room = usize::from(depth).saturating_sub(prefix_len + 1);
    asked
        .min(MAX_PIECE_LEVELS)
        .min(u8::try_from(room).unwrap_or(u8::MAX))
}

/// Calls `f` with each piece of `prefix` (its canonical extensions by `levels` moves, in
/// move order), reusing one buffer.
pub fn for_each_piece(prefix: &[Move], levels: u8, f: &mut dyn FnMut(&[Move])) {
    let mut buf = prefix.to_vec();
    extend(&mut buf, levels, f);
}

fn extend(buf: &mut Vec<Move>, levels: u8, f: &mut dyn FnMut(&[Move])) {
    if levels == 0 {
        f(buf);
        return;
    }
    let mask = canonical::allowed_after(buf.last().copied());
    for m in Move::ALL {
        if mask & (1 << m.index()) != 0 {
            buf.push(m);
            extend(buf, levels - 1, f);
            buf.pop();
        }
    }
}

/// Most pieces one job is searched as: a job whose prefixes would make more is searched
/// with fewer levels ([`job_levels`]), so that a worker holds its list in a few MB.
pub const MAX_JOB_PIECES: usize = 1 << 16;

/// The levels a job of `prefixes` at `depth` asking for `asked` is searched with: the
/// most, up to `asked`, whose pieces number at most [`MAX_JOB_PIECES`]. Both ends use
/// this to enumerate the same pieces.
pub fn job_levels(prefixes: &[Vec<Move>], depth: u8, asked: u8) -> u8 {
    let mut levels = asked.min(MAX_PIECE_LEVELS);
    while levels > 0 && total(prefixes, depth, levels) > MAX_JOB_PIECES {
        levels -= 1;
    }
    levels
}

/// The pieces of a job of `prefixes` at `depth` searched with `levels`.
pub fn total(prefixes: &[Vec<Move>], depth: u8, levels: u8) -> usize {
    let mut n = 0usize;
    for p in prefixes {
        n = n.saturating_add(count(p, levels_for(p.len(), depth, levels)));
        if n > MAX_JOB_PIECES {
            return n;
        }
    }
    n
}

/// How many pieces `prefix` has at `levels`: a table look-up, as it depends only on its
/// last move (the coordinator counts every unit of every hand-back answered).
pub fn count(prefix: &[Move], levels: u8) -> usize {
    static COUNTS: std::sync::OnceLock<[[usize; MAX_PIECE_LEVELS as usize + 1]; 19]> =
        std::sync::OnceLock::new();
    let table = COUNTS.get_or_init(|| {
        let mut t = [[0usize; MAX_PIECE_LEVELS as usize + 1]; 19];
        for (last, row) in t.iter_mut().enumerate() {
            let last = Move::ALL.get(last).copied();
            for (levels, n) in row.iter_mut().enumerate() {
                *n = count_after(last, levels as u8);
            }
        }
        t
    });
    match table.get(prefix.last().map_or(18, |m| m.index())) {
        Some(row) if usize::from(levels) < row.len() => row[usize::from(levels)],
        _ => count_after(prefix.last().copied(), levels),
    }
}

/// The canonical sequences of `levels` moves after a move `last`.
fn count_after(last: Option<Move>, levels: u8) -> usize {
    if levels == 0 {
        return 1;
    }
    let mask = canonical::allowed_after(last);
    (Move::ALL.iter())
        .filter(|m| mask & (1 << m.index()) != 0)
        .map(|&m| count_after(Some(m), levels - 1))
        .sum()
}

/// Whether a piece of `len` moves at `depth` can be split where it runs (see
/// [`Handback::split`]): its one-move extensions are searches, not leaves.
pub fn splittable(len: usize, depth: u8) -> bool {
    len + 1 < usize::from(depth)
}

/// How many one-move extensions a piece whose last move is `last` has (the moves a split
/// counts in: [`PieceSplit::entered`]).
pub fn children(last: Option<Move>) -> u32 {
    canonical::allowed_after(last).count_ones()
}

/// The index of move `m` among the one-move extensions of a piece whose last move is
/// `last`, in move order (`None`: `m` cannot follow `last`).
pub fn child_index(last: Option<Move>, m: Move) -> Option<u32> {
    let mask = canonical::allowed_after(last);
    let bit = 1u32 << m.index();
    (mask & bit != 0).then(|| (mask & (bit - 1)).count_ones())
}

/// The `i`-th one-move extension of a piece whose last move is `last`, in move order.
pub fn child_move(last: Option<Move>, i: u32) -> Option<Move> {
    let mask = canonical::allowed_after(last);
    Move::ALL
        .iter()
        .copied()
        .filter(|m| mask & (1 << m.index()) != 0)
        .nth(usize::try_from(i).ok()?)
}

/// Levels below a piece where its search takes its moves in move order, so that a
/// hand-back can take what it has not entered ([`PieceSplit`]): three levels cut the
/// move its search is in down to some 1/2,000th of the piece.
pub const SPLIT_LEVELS: usize = 3;

/// Part of a running piece handed back: where its search was when it stopped entering
/// moves. On each level, from the piece's first move on, `entered[i]` of the one-move
/// extensions of the move above (in move order, at most [`children`]) were entered: the
/// last of them is kept in part as the next level says (whole past the last level
/// given), the ones before it whole, the ones after it are handed back. No level: the
/// piece is handed back whole (it had not started).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PieceSplit {
    /// The piece's index in the job.
    pub piece: u32,
    /// Moves entered on each level, at most [`SPLIT_LEVELS`] levels, each at least 1.
    pub entered: Vec<u32>,
}

/// Calls `f` with each part of `piece` (its moves) that a [`PieceSplit`] of `entered`
/// keeps (`true`) or hands back (`false`), in move order: whole extensions, at most 18
/// a level (none entered: the piece, handed back whole). `None` where `entered` does not fit the piece (a count of 0 or past its
/// level's extensions, or more levels than [`SPLIT_LEVELS`]).
pub fn split_parts(
    piece: &[Move],
    entered: &[u32],
    f: &mut dyn FnMut(&[Move], bool),
) -> Option<()> {
    if entered.len() > SPLIT_LEVELS {
        return None;
    }
    let mut buf = piece.to_vec();
    let mut level = 0;
    // An empty split hands the piece back whole.
    if entered.is_empty() {
        f(&buf, false);
        return Some(());
    }
    while let Some(&e) = entered.get(level) {
        let last = buf.last().copied();
        let n = children(last);
        if e == 0 || e > n {
            return None;
        }
        for c in 0..n {
            if c + 1 == e {
                continue;
            }
            buf.push(child_move(last, c)?);
            f(&buf, c < e);
            buf.pop();
        }
        buf.push(child_move(last, e - 1)?);
        level += 1;
    }
    // The last move entered, below the last level given: kept whole.
    f(&buf, true);
    Some(())
}

/// A worker's answer to a request to hand back the unstarted part of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handback {
    /// The job.
    pub job: JobId,
    /// The attempt asked about.
    pub attempt: u32,
    /// `Some(k)`: the job keeps its first `k` pieces (those started), every piece from
    /// `k` on is handed back and will not be searched here (`k` at or past the job's
    /// pieces: nothing was). `None`: the job does not run here (it ended, and its result
    /// is on its way, or it never came).
    pub kept: Option<u32>,
    /// In a job sent with [`SubtreeWork::split`](crate::SubtreeWork::split): the kept
    /// pieces that also hand back some of their extensions, in piece order, each once
    /// (at most [`MAX_JOB_PIECES`] entries, each of at most [`SPLIT_LEVELS`] levels).
    pub split: Vec<PieceSplit>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_the_canonical_extensions_in_move_order() {
        let prefix = [Move::ALL[0], Move::ALL[3]]; // U R
        for levels in 0..=2u8 {
            let mut got = Vec::new();
            for_each_piece(&prefix, levels, &mut |p| got.push(p.to_vec()));
            let want: Vec<Vec<Move>> = canonical::sequences(2 + levels as usize)
                .into_iter()
                .filter(|s| s.starts_with(&prefix))
                .collect();
            let mut sorted = want.clone();
            sorted.sort_by_key(|s| s.iter().map(|m| m.index()).collect::<Vec<_>>());
            assert_eq!(got, sorted, "levels {levels}");
            assert_eq!(count(&prefix, levels), want.len());
        }
        // After R: 15 moves (all but R's three); after U R, U is allowed again.
        assert_eq!(count(&prefix, 1), 15);
    }

    #[test]
    fn the_counted_pieces_are_the_enumerated_ones_after_every_last_move() {
        let lasts = std::iter::once(None).chain(Move::ALL.iter().map(|&m| Some(m)));
        for last in lasts {
            let prefix: Vec<Move> = last.into_iter().collect();
            for levels in 0..=MAX_PIECE_LEVELS + 1 {
                let mut n = 0;
                for_each_piece(&prefix, levels, &mut |_| n += 1);
                assert_eq!(count(&prefix, levels), n, "after {last:?}, {levels} levels");
            }
        }
    }

    #[test]
    fn a_split_counts_a_piece_s_extensions_as_its_pieces_of_one_level_do() {
        for piece in [vec![], vec![Move::ALL[0]], vec![Move::ALL[0], Move::ALL[3]]] {
            let last = piece.last().copied();
            let mut kids = Vec::new();
            for_each_piece(&piece, 1, &mut |p| kids.push(p[piece.len()]));
            assert_eq!(children(last) as usize, kids.len());
            for (i, &m) in kids.iter().enumerate() {
                assert_eq!(child_index(last, m), Some(i as u32));
                assert_eq!(child_move(last, i as u32), Some(m));
            }
            assert_eq!(child_move(last, children(last)), None);
            if let Some(l) = last {
                assert_eq!(child_index(last, l), None, "a face twice in a row");
            }
        }
        assert!(splittable(3, 5) && !splittable(4, 5) && !splittable(5, 5));
    }

    #[test]
    fn a_split_s_parts_cover_its_piece_once_the_entered_ones_kept() {
        let piece = vec![Move::ALL[0], Move::ALL[3]]; // U R
        let below = canonical::sequences(5);
        let under: Vec<&Vec<Move>> = below.iter().filter(|s| s.starts_with(&piece)).collect();
        for entered in [
            vec![],
            vec![1],
            vec![15],
            vec![3, 2],
            vec![3, 2, 12],
            vec![15, 12, 12],
        ] {
            let mut parts = Vec::new();
            split_parts(&piece, &entered, &mut |p, kept| {
                parts.push((p.to_vec(), kept))
            })
            .expect("fits");
            // Each 5-move extension of the piece lies in exactly one part.
            for s in &under {
                let holding: Vec<_> = parts.iter().filter(|(p, _)| s.starts_with(p)).collect();
                assert_eq!(holding.len(), 1, "{entered:?} {s:?}");
            }
            // Kept: what the search entered, in move order, before what it did not.
            let order = |p: &Vec<Move>| {
                let mut k: Vec<u32> = Vec::new();
                let mut last = piece.last().copied();
                for &m in &p[piece.len()..] {
                    k.push(child_index(last, m).unwrap_or(99));
                    last = Some(m);
                }
                k
            };
            let first_back = parts
                .iter()
                .filter(|(_, k)| !k)
                .map(|(p, _)| order(p))
                .min();
            let last_kept = parts
                .iter()
                .filter(|(_, k)| *k)
                .map(|(p, _)| order(p))
                .max();
            if let (Some(b), Some(k)) = (first_back, last_kept) {
                assert!(k < b, "{entered:?}: kept {k:?} after handed back {b:?}");
            }
            assert_eq!(parts.iter().any(|(_, k)| *k), !entered.is_empty());
        }
        let none = |e: &[u32]| split_parts(&piece, e, &mut |_, _| ()).is_none();
        assert!(none(&[0]) && none(&[16]) && none(&[1, 1, 1, 1]));
    }

    #[test]
    fn a_job_of_too_many_pieces_is_searched_with_fewer_levels() {
        let four = canonical::sequences(4);
        assert_eq!(job_levels(&four[..10], 18, 2), 2);
        // 43,254 prefixes: 15 pieces each is too many already.
        assert_eq!(job_levels(&four, 18, 2), 0);
        let some = &four[..600];
        assert!(total(some, 18, 2) > MAX_JOB_PIECES);
        assert_eq!(job_levels(some, 18, 2), 1);
        assert_eq!(
            total(some, 18, 1),
            some.iter().map(|p| count(p, 1)).sum::<usize>()
        );
    }

    #[test]
    fn levels_stop_short_of_the_depth_and_at_the_bound() {
        assert_eq!(levels_for(4, 18, 2), 2);
        assert_eq!(levels_for(4, 18, 200), MAX_PIECE_LEVELS);
        assert_eq!(levels_for(4, 6, 2), 1);
        assert_eq!(levels_for(4, 5, 2), 0);
        assert_eq!(levels_for(7, 5, 2), 0);
    }
}
