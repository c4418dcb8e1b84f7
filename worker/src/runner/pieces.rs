//! A subtree job's pieces ([`proto::pieces`]) and the one counter they are claimed from.

use crate::h48::search::Gate;
use proto::{PieceSplit, SubtreeWork};
use std::sync::atomic::{AtomicU32, Ordering};
use tables::Move;

/// How many of a subtree job's pieces (see [`proto::pieces`]) have been claimed, and
/// whether the others were handed back: shared by every thread searching the job, which
/// claim pieces in order from it, and whoever answers a request to split the job
/// ([`JobRunner::split`](super::JobRunner::split)).
///
/// Pieces are claimed in order, one count for all the job's threads, so the pieces
/// claimed are always the first `k` of the job's piece order; a piece claimed is
/// searched (unless the job is cancelled), so `k` is what the job keeps when it hands the
/// rest back.
#[derive(Debug)]
pub struct PieceCursor {
    /// Pieces claimed, and [`HANDED_BACK`] once the rest were handed back.
    claimed: AtomicU32,
    /// No piece from this one on is claimed (`u32::MAX`: any may).
    limit: u32,
    /// In a job sent with `split`, each piece's [`Gate`] (split where it runs, or not:
    /// [`proto::pieces::splittable`]); empty otherwise.
    gates: Box<[Gate]>,
}

impl Default for PieceCursor {
    fn default() -> Self {
        PieceCursor {
            claimed: AtomicU32::new(0),
            limit: u32::MAX,
            gates: Box::new([]),
        }
    }
}

/// Set in a [`PieceCursor`] once the pieces not claimed are handed back.
const HANDED_BACK: u32 = 1 << 31;

impl PieceCursor {
    /// A cursor whose job claims its first `k` pieces at most, as if asked to hand back
    /// once it had claimed them (a replay of a split, for tests).
    pub fn handing_back_from(k: u32) -> PieceCursor {
        PieceCursor {
            limit: k,
            ..PieceCursor::default()
        }
    }

    /// The cursor of `work`'s pieces: with a gate for each where it is sent with `split`
    /// (see [`proto::pieces`]), so that a hand-back can take what a running piece has not
    /// entered.
    pub fn for_work(work: &SubtreeWork) -> PieceCursor {
        if !work.split {
            return PieceCursor::default();
        }
        let levels = proto::pieces::job_levels(&work.prefixes, work.depth, work.pieces);
        let mut gates = Vec::new();
        for p in &work.prefixes {
            let l = proto::pieces::levels_for(p.len(), work.depth, levels);
            let n = proto::pieces::count(p, l);
            let split = proto::pieces::splittable(p.len() + usize::from(l), work.depth);
            gates.extend((0..n).map(|_| Gate::new(split)));
        }
        PieceCursor {
            gates: gates.into_boxed_slice(),
            ..PieceCursor::default()
        }
    }

    /// Piece `k`'s gate, where it is split where it runs.
    pub(super) fn gate(&self, k: usize) -> Option<&Gate> {
        self.gates.get(k).filter(|g| g.splits())
    }

    /// Piece `k`'s search ended (nothing of it is left to hand back).
    pub(super) fn ended(&self, k: usize) {
        if let Some(g) = self.gates.get(k) {
            g.end();
        }
    }

    /// [`PieceCursor::hand_back`], and in a job sent with `split` whose pieces were all
    /// claimed, the pieces that also hand back what their search has not entered (each
    /// frozen: see [`Gate`]), in piece order: a piece taken ahead of its start whole, a
    /// running one from the move its search is in on each split level. Where pieces were
    /// left unclaimed, the first request hands back those and the claimed ones go on
    /// whole (fewer, bigger units: a split of running pieces is for a job's end); a
    /// second request, which finds every piece it kept claimed, splits those. The same
    /// answer again once they were split.
    pub fn hand_back_split(&self) -> (u32, Vec<PieceSplit>) {
        let before = self.claimed.fetch_or(HANDED_BACK, Ordering::AcqRel);
        let kept = before & !HANDED_BACK;
        let again = before & HANDED_BACK != 0;
        if !again && (kept as usize) < self.gates.len() {
            return (kept, Vec::new());
        }
        let split = (self.gates.iter().take(kept as usize).enumerate())
            .filter_map(|(k, g)| {
                Some(PieceSplit {
                    piece: u32::try_from(k).ok()?,
                    entered: g.freeze()?,
                })
            })
            .collect();
        (kept, split)
    }

    /// Stops the job from claiming pieces: how many it has claimed (the same answer
    /// again when asked again).
    pub fn hand_back(&self) -> u32 {
        self.claimed.fetch_or(HANDED_BACK, Ordering::AcqRel) & !HANDED_BACK
    }

    /// The last count any piece may be claimed below, of a job of `total` pieces.
    fn end(&self, total: usize) -> u32 {
        u32::try_from(total)
            .unwrap_or(u32::MAX)
            .min(self.limit)
            .min(HANDED_BACK - 1)
    }

    /// Claims the next piece of a job of `total` pieces: its index, or `None` when every
    /// piece was claimed or the rest were handed back.
    pub(super) fn claim(&self, total: usize) -> Option<usize> {
        let end = self.end(total);
        let mut seen = self.claimed.load(Ordering::Acquire);
        loop {
            if seen & HANDED_BACK != 0 || seen >= end {
                return None;
            }
            match self.claimed.compare_exchange_weak(
                seen,
                seen + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return usize::try_from(seen).ok(),
                Err(now) => seen = now,
            }
        }
    }

    /// The pieces of a job of `total` that can still be claimed.
    pub(super) fn unclaimed(&self, total: usize) -> usize {
        let seen = self.claimed.load(Ordering::Acquire);
        if seen & HANDED_BACK != 0 {
            return 0;
        }
        usize::try_from(self.end(total).saturating_sub(seen)).unwrap_or(0)
    }

    /// Whether the pieces not claimed were handed back.
    pub(super) fn handed_back(&self) -> bool {
        let s = self.claimed.load(Ordering::Acquire);
        s & HANDED_BACK != 0 || s >= self.limit
    }
}

/// A subtree job's pieces, flat: their moves, and for each its span and its prefix.
pub(super) struct Pieces {
    /// Every piece's moves, one after the other.
    moves: Vec<Move>,
    /// Start in `moves`, length, index of its prefix in the job.
    spans: Vec<(usize, usize, usize)>,
}

impl Pieces {
    /// The pieces of `work` in the order both ends enumerate them
    /// ([`proto::pieces::for_each_piece`] over the prefixes in order).
    pub(super) fn of(work: &SubtreeWork) -> Pieces {
        let levels = proto::pieces::job_levels(&work.prefixes, work.depth, work.pieces);
        let mut p = Pieces {
            moves: Vec::new(),
            spans: Vec::with_capacity(work.prefixes.len()),
        };
        for (i, prefix) in work.prefixes.iter().enumerate() {
            let l = proto::pieces::levels_for(prefix.len(), work.depth, levels);
            proto::pieces::for_each_piece(prefix, l, &mut |piece| {
                p.spans.push((p.moves.len(), piece.len(), i));
                p.moves.extend_from_slice(piece);
            });
        }
        p
    }

    /// How many pieces there are.
    pub(super) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Piece `k`'s moves and the index of its prefix.
    pub(super) fn get(&self, k: usize) -> Option<(&[Move], usize)> {
        let &(start, len, owner) = self.spans.get(k)?;
        Some((self.moves.get(start..start + len)?, owner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_claimed_in_order_and_a_hand_back_answers_the_count_claimed() {
        let c = PieceCursor::default();
        assert_eq!(c.unclaimed(5), 5);
        assert_eq!((c.claim(5), c.claim(5)), (Some(0), Some(1)));
        assert_eq!(c.unclaimed(5), 3);
        assert!(!c.handed_back());
        assert_eq!(c.hand_back(), 2);
        assert_eq!(c.hand_back(), 2, "the same answer again");
        assert!(c.handed_back());
        assert_eq!((c.claim(5), c.unclaimed(5)), (None, 0));

        let all = PieceCursor::default();
        assert_eq!(
            (0..4).filter_map(|_| all.claim(3)).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(all.unclaimed(3), 0);
        assert!(!all.handed_back(), "every piece claimed is not a hand-back");
        assert_eq!(all.hand_back(), 3);

        let replay = PieceCursor::handing_back_from(2);
        assert_eq!(replay.unclaimed(5), 2);
        assert_eq!(
            (0..4).filter_map(|_| replay.claim(5)).collect::<Vec<_>>(),
            [0, 1]
        );
        assert!(replay.handed_back());
    }

    #[test]
    fn a_second_hand_back_splits_the_pieces_the_first_kept() {
        let m = |s: &str| tables::parse_moves(s).unwrap();
        let work = SubtreeWork {
            position: tables::Position::SOLVED,
            depth: 12,
            prefixes: vec![m("U R"), m("U F"), m("R U"), m("R F"), m("F U")],
            max_solutions: None,
            time_limit_ms: None,
            pieces: 0,
            split: true,
        };
        let c = PieceCursor::for_work(&work);
        assert_eq!((c.claim(5), c.claim(5)), (Some(0), Some(1)));
        // Piece 0 runs (its third extension entered, then the first below it); piece 1
        // was taken ahead of its start.
        let g = c.gate(0).unwrap();
        assert!(g.enter(0, 2) && g.enter(1, 0));
        // The first request hands back the pieces not claimed; the claimed go on whole.
        assert_eq!(c.hand_back_split(), (2, Vec::new()));
        assert!(
            c.gate(0).unwrap().enter(1, 1),
            "not frozen by the first request"
        );
        // The second splits them: piece 0 from where its search is, piece 1 whole.
        let split = vec![
            PieceSplit {
                piece: 0,
                entered: vec![3, 2],
            },
            PieceSplit {
                piece: 1,
                entered: Vec::new(),
            },
        ];
        assert_eq!(c.hand_back_split(), (2, split.clone()));
        assert!(!c.gate(0).unwrap().enter(1, 2), "frozen");
        assert_eq!(c.hand_back_split(), (2, split), "the same answer again");
        assert_eq!(c.claim(5), None);
    }

    #[test]
    fn threads_claiming_at_once_claim_each_piece_once() {
        let c = PieceCursor::default();
        let claimed: Vec<Vec<usize>> = std::thread::scope(|s| {
            let hands: Vec<_> = (0..4)
                .map(|_| s.spawn(|| std::iter::from_fn(|| c.claim(10_000)).collect()))
                .collect();
            hands.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut all: Vec<usize> = claimed.into_iter().flatten().collect();
        all.sort_unstable();
        assert_eq!(all, (0..10_000).collect::<Vec<_>>());
    }
}
