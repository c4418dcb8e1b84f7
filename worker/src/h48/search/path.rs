//! The path of the node being searched (front and back moves) and what the search has
//! found so far, with the canonical-order rows of its two ends.

use super::*;

/// The path of the node being searched and what the search found so far.
pub(super) struct Path<'a> {
    pub(super) cube: Cube,
    pub(super) front: [Move; MAX_DEPTH],
    pub(super) nf: usize,
    pub(super) back: [Move; MAX_DEPTH],
    pub(super) nb: usize,
    pub(super) max_solutions: usize,
    pub(super) solutions: Vec<Vec<Move>>,
    pub(super) stop: &'a StopToken,
    pub(super) stopped: bool,
    /// Why the search stopped (`Exhausted` while it has not).
    pub(super) why: Stop,
    pub(super) nodes: u64,
    pub(super) lookups: u64,
    pub(super) check_at: u64,
    pub(super) invalid: u64,
}

impl Path<'_> {
    /// `AFTER`/`PRECEDE` row of the last front move: its face ([`START`]: none).
    #[inline(always)]
    pub(super) fn last_front(&self) -> usize {
        if self.nf > 0 {
            self.front[self.nf - 1].face_index()
        } else {
            START
        }
    }

    /// `AFTER`/`PRECEDE` row of the first back move, the last one made: its face
    /// ([`START`]: none).
    #[inline(always)]
    pub(super) fn first_back(&self) -> usize {
        if self.nb > 0 {
            self.back[self.nb - 1].face_index()
        } else {
            START
        }
    }

    /// Records `front + [m] + reversed back` after checking it solves the cube.
    #[cold]
    pub(super) fn record(&mut self, m: Option<Move>) {
        let mut s: Vec<Move> = self.front[..self.nf].to_vec();
        s.extend(m);
        s.extend(self.back[..self.nb].iter().rev());
        if !self.cube.apply_moves(&s).is_solved() {
            self.invalid += 1;
            return;
        }
        self.solutions.push(s);
        if self.solutions.len() >= self.max_solutions {
            self.stopped = true;
            self.why = Stop::Completed;
        }
    }
}
