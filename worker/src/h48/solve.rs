//! One position on the calling thread: iterative deepening over the search primitive.
//!
//! Splitting a deep position into move-prefix subtrees, ranking them and spreading them
//! over threads or machines is the coordinator's business (it sends subtree jobs, see
//! [`crate::executor`]); here the primitive searches each depth whole, from the empty
//! prefix.

use super::H48Solver;
use crate::{Error, StopToken};
use proto::{PositionResult, Stop, ValidSettings};
use tables::{format_moves, Position};

pub(super) fn solve(
    solver: &H48Solver,
    position: &Position,
    settings: &ValidSettings,
    stop: &StopToken,
) -> Result<PositionResult, Error> {
    let want = settings.solution_count();
    let (min, max) = (settings.min_length, settings.max_length);
    let cube = position.cube();
    let lb = solver.lower_bound(cube);
    let mut out = PositionResult::empty(Stop::Exhausted);
    out.lower_bound = lb;
    if lb > 0 && min <= lb {
        // Lengths below the lower bound are impossible: proved without searching.
        out.depth_exhausted = Some((lb - 1).min(max));
    }
    for d in lb.max(min)..=max {
        let r = solver.search(cube, &[], d, want, stop);
        out.nodes += r.nodes;
        out.lookups += r.lookups;
        if r.invalid > 0 {
            return Err(Error::Verification {
                moves: "(dropped by the search)".into(),
            });
        }
        if !r.solutions.is_empty() {
            let mut sols = r.solutions;
            sols.sort();
            sols.truncate(want);
            out.solutions = sols;
            out.optimal = min <= lb;
            // Every solution of this length was found, or as many as asked: done, unless
            // a budget or a cancellation cut the depth short.
            out.stop = match r.stop {
                Stop::Exhausted => Stop::Completed,
                other => other,
            };
            break;
        }
        if r.stop != Stop::Exhausted {
            out.stop = r.stop;
            break;
        }
        out.depth_exhausted = Some(d);
    }
    for s in &out.solutions {
        if !position.is_solved_by(s) || s.len() > usize::from(max) || s.len() < usize::from(min) {
            return Err(Error::Verification {
                moves: format_moves(s),
            });
        }
    }
    Ok(out)
}
