//! How one depth of a split position is cut into subtree jobs.
//!
//! The units are the canonical move prefixes of the scheduler's length and, for those
//! that hold too many nodes for one job, their one-move children (and theirs, down to
//! [`MAX_LEVEL`] moves beyond the prefix); a unit once split stays split at the next
//! depths. They are taken in rank order (their node counts at the previous depth: a
//! subtree that held many nodes holds many positions close to solved, so it is likelier
//! to hold a solution) and grouped into jobs of about equal predicted nodes. A unit bigger
//! than a job is cut into its children: a job holding it alone would be the depth's last
//! to end.

use super::BRANCHING;
use std::collections::{BTreeSet, HashMap};
use tables::{canonical, Move};

/// How many moves a unit may add to its prefix: a knob of the end of a depth, set with the
/// others in `tail`.
pub use super::tail::MAX_LEVEL;

/// A unit id: the level (moves beyond the prefix) in the bits from 58 up, then
/// `prefix * 18^level + the added moves' indices in base 18`.
const LEVEL_SHIFT: u32 = 58;
const PAYLOAD: Unit = (1 << LEVEL_SHIFT) - 1;

/// A unit id (see [`MAX_LEVEL`]).
pub type Unit = u64;

/// The level of unit `id` (0: a prefix).
pub fn level(id: Unit) -> u32 {
    (id >> LEVEL_SHIFT) as u32
}

/// The id of the child of unit `id` by move `m` (`None` past [`MAX_LEVEL`] or when
/// the id would not fit).
pub fn child_id(id: Unit, m: Move) -> Option<Unit> {
    child_within(id, m, MAX_LEVEL)
}

/// Most moves a unit may be below its prefix when a running piece hands back the moves
/// its search has not entered (`handback`): the cut's units and their pieces stay
/// within [`MAX_LEVEL`], a piece split where it runs goes one level past its job's.
pub const MAX_SPLIT_LEVEL: u32 = 12;

/// The id of the child of unit `id` by move `m` for a piece split where it runs (`None`
/// past [`MAX_SPLIT_LEVEL`] or when the id would not fit).
pub fn split_child_id(id: Unit, m: Move) -> Option<Unit> {
    child_within(id, m, MAX_SPLIT_LEVEL)
}

fn child_within(id: Unit, m: Move, max: u32) -> Option<Unit> {
    let l = level(id) + 1;
    if l > max {
        return None;
    }
    let payload = (id & PAYLOAD).checked_mul(18)? + m.index() as Unit;
    (payload <= PAYLOAD).then_some((Unit::from(l) << LEVEL_SHIFT) | payload)
}

/// The deepest level of `units` (0: none).
pub fn deepest_level(units: &[Unit]) -> u32 {
    units.iter().map(|&u| level(u)).max().unwrap_or(0)
}

/// The prefix unit `id` lies under (its index among the prefixes).
pub fn prefix_of(id: Unit) -> Unit {
    (id & PAYLOAD) / 18u64.pow(level(id))
}

/// The unit below `id` by `moves`, one level a move (`None` past [`MAX_LEVEL`]).
pub fn descendant_id(id: Unit, moves: &[Move]) -> Option<Unit> {
    moves.iter().try_fold(id, |u, &m| child_id(u, m))
}

/// The moves of unit `id`.
pub fn unit_moves(prefixes: &[Vec<Move>], id: Unit) -> Option<Vec<Move>> {
    let l = level(id);
    let mut payload = id & PAYLOAD;
    let mut added = Vec::with_capacity(l as usize);
    for _ in 0..l {
        added.push(*Move::ALL.get((payload % 18) as usize)?);
        payload /= 18;
    }
    let mut p = prefixes.get(payload as usize)?.clone();
    p.extend(added.into_iter().rev());
    canonical::is_canonical(&p).then_some(p)
}

/// The last move of unit `id`.
fn last_move(prefixes: &[Vec<Move>], id: Unit) -> Option<Move> {
    match level(id) {
        0 => prefixes.get(id as usize)?.last().copied(),
        _ => Move::ALL.get(((id & PAYLOAD) % 18) as usize).copied(),
    }
}

/// The children of a unit whose last move is `last`, with their ids.
fn children(id: Unit, last: Option<Move>) -> impl Iterator<Item = (Unit, Move)> {
    let mask = canonical::allowed_after(last);
    Move::ALL
        .into_iter()
        .filter(move |m| mask & (1 << m.index()) != 0)
        .filter_map(move |m| Some((child_id(id, m)?, m)))
}

/// What the previous depths measured.
pub struct Counts<'a> {
    /// The units to cut (prefixes, or units below prefixes not cut whole); `None`: every
    /// prefix.
    pub units: Option<&'a [Unit]>,
    /// Latest nodes of each prefix's subtree.
    pub prefixes: &'a [u64],
    /// Latest nodes of each unit below a prefix, by unit id.
    pub children: &'a HashMap<Unit, u64>,
    /// The units searched as their children.
    pub split: &'a BTreeSet<Unit>,
}

/// How to cut.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Jobs of equal predicted nodes the depth is cut into.
    pub jobs: usize,
}

/// The jobs of a depth, and the prefixes newly split for it.
#[derive(Debug, Default, PartialEq)]
pub struct Cut {
    /// Unit ids, one list per job, in rank order.
    pub groups: Vec<Vec<Unit>>,
    /// The nodes each job's units held when last measured (as `counts` gave them).
    pub nodes: Vec<u64>,
    /// Units cut into their children from this depth on.
    pub newly_split: Vec<Unit>,
}

/// Cuts a depth over `prefixes` (see the module documentation).
pub fn cut(prefixes: &[Vec<Move>], counts: &Counts<'_>, plan: Plan) -> Cut {
    cut_measured(prefixes, counts, measured_units(prefixes, counts), plan)
}

/// [`cut`] over the units [`measured_units`] gave for `counts`.
pub fn cut_measured(
    prefixes: &[Vec<Move>],
    counts: &Counts<'_>,
    mut units: Vec<(Unit, u64)>,
    plan: Plan,
) -> Cut {
    if prefixes.is_empty() {
        return Cut::default();
    }
    let rank = |&(id, c): &(Unit, u64)| match last_move(prefixes, id) {
        Some(m) if m.face_index() < 3 => c as f64 * 0.816_496_580_927_726,
        _ => c as f64,
    };
    // Heaviest rank first, ties by id. Each rank is computed once (a comparison that
    // computed both of its ranks read two prefixes' last moves, and the sort of a depth's
    // 43,254 prefixes was 15% of a 15-mover's CPU); a rank is finite and not negative, so
    // its bits order as it does, and (rank, id) is unique, so an unstable sort gives the
    // one order.
    let mut ranked: Vec<(u64, Unit, u64)> = units
        .iter()
        .map(|u| (rank(u).to_bits(), u.0, u.1))
        .collect();
    ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    units.clear();
    units.extend(ranked.into_iter().map(|(_, id, c)| (id, c)));
    let total: u64 = units.iter().map(|u| u.1).sum();
    let jobs = plan.jobs.max(1);
    let target = (total / jobs as u64).max(1) as f64;
    let per_job = units.len().div_ceil(jobs);
    let mut out = Cut::default();
    let mut cur: Vec<Unit> = Vec::new();
    let mut acc = 0u64;
    let push = |out: &mut Cut, cur: &mut Vec<Unit>, acc: &mut u64| {
        if !cur.is_empty() {
            out.groups.push(std::mem::take(cur));
            out.nodes.push(*acc);
            *acc = 0;
        }
    };
    for (id, c) in units {
        if total > 0 && c as f64 > target && child_id(id, Move::ALL[17]).is_some() {
            // Too big for any job here: its children, in move order, each cut again
            // while it is still too big, grouped as they fit.
            push(&mut out, &mut cur, &mut acc);
            let mut stack = vec![(id, c)];
            while let Some((u, uc)) = stack.pop() {
                if uc as f64 > target && child_id(u, Move::ALL[17]).is_some() {
                    out.newly_split.push(u);
                    let kids = kids(prefixes, u, uc, counts.children);
                    stack.extend(kids.into_iter().rev());
                    continue;
                }
                cur.push(u);
                acc += uc;
                if acc as f64 >= target {
                    push(&mut out, &mut cur, &mut acc);
                }
            }
            continue;
        }
        cur.push(id);
        acc += c;
        if (total > 0 && acc as f64 >= target)
            || cur.len() >= per_job * 2
            || (total == 0 && cur.len() >= per_job)
        {
            push(&mut out, &mut cur, &mut acc);
        }
    }
    push(&mut out, &mut cur, &mut acc);
    out
}

/// The units to cut and their counts: a split unit's children (an equal share of the
/// unit for a child not measured yet), recursively.
pub fn measured_units(prefixes: &[Vec<Move>], counts: &Counts<'_>) -> Vec<(Unit, u64)> {
    let n = prefixes.len();
    let prefix_count = |i: usize| counts.prefixes.get(i).copied().unwrap_or(0);
    let mut units: Vec<(Unit, u64)> = Vec::with_capacity(n + counts.split.len() * 15);
    match counts.units {
        None => {
            for i in 0..n {
                expand(prefixes, i as Unit, prefix_count(i), counts, &mut units);
            }
        }
        Some(ids) => {
            for &id in ids {
                let c = match counts.children.get(&id) {
                    Some(&c) => c,
                    None => unit_share(id, counts),
                };
                expand(prefixes, id, c, counts, &mut units);
            }
        }
    }
    units
}

/// For a unit not measured yet, a share of its prefix's count (a [`BRANCHING`]th per move
/// below it).
fn unit_share(id: Unit, counts: &Counts<'_>) -> u64 {
    let (mut root, mut share) = (id & PAYLOAD, 1u64);
    for _ in 0..level(id) {
        root /= 18;
        share = share.saturating_mul(BRANCHING as u64);
    }
    counts.prefixes.get(root as usize).copied().unwrap_or(0) / share
}

/// Unit `id` with `count` nodes, or its descendants when it is split.
fn expand(
    prefixes: &[Vec<Move>],
    id: Unit,
    count: u64,
    counts: &Counts<'_>,
    out: &mut Vec<(Unit, u64)>,
) {
    if !counts.split.contains(&id) {
        out.push((id, count));
        return;
    }
    for (kid, kc) in kids(prefixes, id, count, counts.children) {
        expand(prefixes, kid, kc, counts, out);
    }
}

/// The children of unit `id` with their counts (measured, or an equal share of
/// `whole`).
fn kids(
    prefixes: &[Vec<Move>],
    id: Unit,
    whole: u64,
    measured: &HashMap<Unit, u64>,
) -> Vec<(Unit, u64)> {
    let last = last_move(prefixes, id);
    let share = whole / u64::from(canonical::allowed_after(last).count_ones().max(1));
    children(id, last)
        .map(|(kid, _)| (kid, measured.get(&kid).copied().unwrap_or(share)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(jobs: usize) -> Plan {
        Plan { jobs }
    }

    #[test]
    fn unit_ids_name_prefixes_and_their_children() {
        let prefixes = canonical::sequences(2);
        let p = 7u64;
        let kids: Vec<(Unit, Vec<Move>)> = children(p, last_move(&prefixes, p))
            .map(|(id, _)| (id, unit_moves(&prefixes, id).unwrap()))
            .collect();
        let n = canonical::allowed_after(prefixes[7].last().copied()).count_ones();
        assert_eq!(kids.len(), n as usize);
        for (id, k) in &kids {
            assert_eq!(k.len(), 3);
            assert_eq!(k[..2], prefixes[7][..]);
            assert!(canonical::is_canonical(k));
            assert_eq!(level(*id), 1);
            // Grandchildren, down to the deepest level.
            let g: Vec<Unit> = children(*id, k.last().copied()).map(|x| x.0).collect();
            assert_eq!(
                g.len(),
                canonical::allowed_after(k.last().copied()).count_ones() as usize
            );
            let gm = unit_moves(&prefixes, g[0]).unwrap();
            assert_eq!((gm.len(), &gm[..3]), (4, &k[..]));
            let mut deepest = g[0];
            while level(deepest) < MAX_LEVEL {
                let m = Move::ALL[4 + 3 * (level(deepest) as usize % 2)];
                deepest = child_id(deepest, m).unwrap();
            }
            assert_eq!(level(deepest), MAX_LEVEL);
            assert_eq!(child_id(deepest, Move::ALL[0]), None);
        }
        assert_eq!(unit_moves(&prefixes, 3), Some(prefixes[3].clone()));
        assert_eq!(unit_moves(&prefixes, prefixes.len() as Unit), None);
    }

    #[test]
    fn equal_jobs_cover_every_prefix_once_in_rank_order() {
        let prefixes = canonical::sequences(2);
        let counts: Vec<u64> = (0..prefixes.len() as u64).map(|i| 10 + i % 7).collect();
        let c = cut(
            &prefixes,
            &Counts {
                units: None,
                prefixes: &counts,
                children: &HashMap::new(),
                split: &BTreeSet::new(),
            },
            plan(10),
        );
        assert!(c.newly_split.is_empty());
        let all: Vec<Unit> = c.groups.iter().flatten().copied().collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..prefixes.len() as Unit).collect::<Vec<_>>());
        // The heaviest (count 16: i % 7 == 6) come first.
        assert_eq!(counts[all[0] as usize], 16);
        assert!((9..=11).contains(&c.groups.len()), "{}", c.groups.len());
    }

    #[test]
    fn a_prefix_heavier_than_a_job_is_cut_into_its_children_and_stays_cut() {
        let prefixes = canonical::sequences(2);
        let mut counts = vec![10u64; prefixes.len()];
        counts[5] = 100_000;
        let none = HashMap::new();
        let c = cut(
            &prefixes,
            &Counts {
                units: None,
                prefixes: &counts,
                children: &none,
                split: &BTreeSet::new(),
            },
            plan(8),
        );
        assert_eq!(c.newly_split, vec![5]);
        let units: Vec<Unit> = c.groups.iter().flatten().copied().collect();
        assert!(!units.contains(&5));
        let kids: Vec<Unit> = units.iter().copied().filter(|&u| level(u) > 0).collect();
        assert!(kids.len() >= 15, "{}", kids.len());
        assert!(kids
            .iter()
            .all(|&k| unit_moves(&prefixes, k).unwrap()[..2] == prefixes[5][..]));
        let kids: Vec<Unit> = kids.into_iter().filter(|&u| level(u) == 1).collect();
        // Next depth: measured children are ranked on their own counts.
        let split: BTreeSet<Unit> = [5].into();
        let mut measured = HashMap::new();
        measured.insert(kids[3], 1u64);
        let c2 = cut(
            &prefixes,
            &Counts {
                units: None,
                prefixes: &counts,
                children: &measured,
                split: &split,
            },
            plan(8),
        );
        let units2: Vec<Unit> = c2.groups.iter().flatten().copied().collect();
        assert_eq!(units2.len(), prefixes.len() - 1 + 15);
        assert_eq!(*units2.last().unwrap(), kids[3], "the lightest comes last");
    }

    #[test]
    fn only_the_units_given_are_cut() {
        let prefixes = canonical::sequences(2);
        let counts = vec![100u64; prefixes.len()];
        let below = child_id(9, Move::ALL[16]).unwrap();
        let given = [3u64, 40, below];
        let none = HashMap::new();
        let unsplit = BTreeSet::new();
        let counted = Counts {
            units: Some(&given),
            prefixes: &counts,
            children: &none,
            split: &unsplit,
        };
        let c = cut(&prefixes, &counted, plan(2));
        let mut units: Vec<Unit> = c.groups.iter().flatten().copied().collect();
        units.sort_unstable();
        assert_eq!(units, given);
        // The unit below prefix 9 weighs a 13th of it.
        let m = measured_units(&prefixes, &counted);
        assert_eq!(m, vec![(3, 100), (40, 100), (below, 7)]);
    }
}
