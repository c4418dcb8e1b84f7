//! A running piece's gate ([`Gate`]): how far into its first moves its search has gone,
//! and whether a hand-back froze it there (see `proto::pieces`, "split").

use proto::pieces::SPLIT_LEVELS;
use std::sync::atomic::{AtomicU32, Ordering};

/// Set once a hand-back froze the gate: nothing more is entered.
const FROZEN: u32 = 1 << 31;

/// The word of a piece that is not split where it runs: searched whole, or ended.
const WHOLE: u32 = FROZEN - 1;

/// Bits a level's count takes (a count is at most 18).
const BITS: u32 = 5;
const FIELD: u32 = (1 << BITS) - 1;

/// Where the search of a running piece is in its first [`SPLIT_LEVELS`] moves (each
/// level's moves counted in move order among those that may follow the move before:
/// `proto::pieces::child_index`), shared with whoever answers a request to hand back. A
/// search given a gate enters each front move of those levels through it, in move order,
/// while its path is front moves only (below a node that takes back moves first, the
/// part is kept whole); once a hand-back [froze](Gate::freeze) it, no move is entered
/// any more: the search ends what it is in, and what it had not entered is dealt out
/// again by the coordinator.
#[derive(Debug)]
pub struct Gate(AtomicU32);

impl Gate {
    /// A gate for a piece split where it runs (`split`), or one searched whole.
    pub fn new(split: bool) -> Gate {
        Gate(AtomicU32::new(if split { 0 } else { WHOLE }))
    }

    /// Whether the piece is split where it runs (its search takes its first moves
    /// through the gate): not searched whole, not ended.
    pub fn splits(&self) -> bool {
        self.0.load(Ordering::Acquire) & WHOLE != WHOLE
    }

    /// Enters the move of index `c` on `level` (0: the piece's first move), below the
    /// moves entered on the levels above: false once a hand-back froze the gate (the move
    /// and every later one are not to be searched here).
    pub fn enter(&self, level: usize, c: u32) -> bool {
        let Ok(level) = u32::try_from(level) else {
            return true;
        };
        if level >= SPLIT_LEVELS as u32 {
            return true;
        }
        let shift = BITS * level;
        // This level's count, and every deeper one cleared.
        let keep = (1u32 << shift) - 1;
        let count = (c.saturating_add(1)).min(FIELD) << shift;
        let mut seen = self.0.load(Ordering::Acquire);
        loop {
            if seen & FROZEN != 0 {
                return false;
            }
            let want = (seen & keep) | count;
            match (self.0).compare_exchange_weak(seen, want, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    /// The piece is to be searched whole after all (its root takes back moves first, so
    /// its parts are not front-move prefixes): true, unless a hand-back froze the gate
    /// first, before anything was entered (the piece was handed back whole: it is not
    /// to be searched here).
    pub fn keep_whole(&self) -> bool {
        let r = (self.0).fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            (v & FROZEN == 0).then_some(WHOLE)
        });
        r.is_ok()
    }

    /// The piece's search ended: nothing of it is left to hand back (unless a hand-back
    /// froze it first, whose answer stands).
    pub fn end(&self) {
        let _ = (self.0).fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
            (v & FROZEN == 0).then_some(WHOLE)
        });
    }

    /// Freezes the gate (the same answer when frozen again): the moves entered on each
    /// level, down to the last level entered (`[]`: none, every move handed back;
    /// `[6, 3]`: on the first level moves 0 to 5, of which 5 in part: of its moves 0 to
    /// 2, the last whole), `None` when the piece is searched whole or ended.
    pub fn freeze(&self) -> Option<Vec<u32>> {
        let v = self.0.fetch_or(FROZEN, Ordering::AcqRel) & WHOLE;
        if v == WHOLE {
            return None;
        }
        let path = (0..SPLIT_LEVELS as u32)
            .map(|l| (v >> (BITS * l)) & FIELD)
            .take_while(|&n| n > 0)
            .collect();
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frozen_gate_says_where_its_search_was_and_lets_nothing_more_in() {
        let g = Gate::new(true);
        assert!(g.splits());
        assert!(g.enter(0, 0) && g.enter(1, 4) && g.enter(0, 2) && g.enter(1, 1));
        assert!(g.enter(2, 7));
        assert_eq!(
            g.freeze(),
            Some(vec![3, 2, 8]),
            "first moves 0 to 2, 2's 0 and 1, …"
        );
        assert_eq!(g.freeze(), Some(vec![3, 2, 8]), "the same answer again");
        assert!(!g.enter(2, 8) && !g.enter(1, 2) && !g.enter(0, 3));
        g.end();
        assert_eq!(
            g.freeze(),
            Some(vec![3, 2, 8]),
            "an end after the freeze changes nothing"
        );

        // A level entered anew clears the ones below it.
        let g = Gate::new(true);
        assert!(g.enter(0, 0) && g.enter(1, 5) && g.enter(2, 1) && g.enter(0, 1));
        assert_eq!(g.freeze(), Some(vec![2]));
        // Levels past the gate's are not counted.
        assert!(Gate::new(true).enter(SPLIT_LEVELS, 3));

        let whole = Gate::new(false);
        assert!(!whole.splits());
        assert_eq!(whole.freeze(), None);
        let ended = Gate::new(true);
        assert!(ended.enter(0, 4));
        ended.end();
        assert_eq!(ended.freeze(), None, "an ended piece hands nothing back");
        let unstarted = Gate::new(true);
        assert_eq!(
            unstarted.freeze(),
            Some(vec![]),
            "taken ahead: every move handed back"
        );
        assert!(!unstarted.enter(0, 0));
    }
}
