//! What a split position's depths are cut into: every canonical move prefix of the
//! scheduler's length, or, for a position with symmetries, one prefix per class of its
//! symmetry (the lightest by the latest counts, chosen per depth), with the probe that
//! measures every prefix once before the first split depth.

use std::sync::Arc;
use tables::symmetry::{PrefixClasses, PrefixOrbits};
use tables::{Move, Position};

/// How many depths below the first split depth of a position with symmetries the probe
/// measures every prefix. On the superflip, counts taken at depth 10 pick prefixes holding
/// 1.650 M nodes at depth 15, counts taken at depth 14 1.654 M; every prefix costs about 13
/// nodes at depth 9.
pub(super) const PROBE_BELOW: u8 = 3;

/// The move prefixes one split position is cut into.
#[derive(Clone, Debug)]
pub struct Prefixes {
    /// Every canonical prefix of the scheduler's length.
    pub(super) list: Arc<Vec<Vec<Move>>>,
    /// For a position with symmetries: the classes of the prefixes, of which each depth
    /// searches one each (and the pairs they need), and the symmetry that makes the
    /// solutions whole again.
    pub(super) reduced: Option<Box<(PrefixOrbits, PrefixClasses)>>,
}

impl Prefixes {
    /// The prefixes of `position`: `every` (the canonical prefixes of `len` moves), in
    /// classes when it has symmetries and `reduce` is on.
    pub fn of(
        position: &Position,
        len: usize,
        every: &Arc<Vec<Vec<Move>>>,
        reduce: bool,
    ) -> Prefixes {
        let orbits = reduce
            .then(|| PrefixOrbits::of(position.cube()))
            .filter(|o| !o.is_trivial());
        Prefixes {
            list: Arc::clone(every),
            reduced: orbits.map(|o| {
                let classes = o.classes(len);
                Box::new((o, classes))
            }),
        }
    }

    /// Every prefix, in the order of [`tables::canonical::sequences`].
    pub fn list(&self) -> &[Vec<Move>] {
        &self.list
    }

    /// Every solution of a depth from those found in its kept subtrees.
    pub(super) fn whole(&self, found: &[Vec<Move>]) -> Vec<Vec<Move>> {
        let len = self.list.first().map_or(0, Vec::len);
        match &self.reduced {
            Some(r) => r.0.regenerate(found, len),
            None => found.to_vec(),
        }
    }
}
