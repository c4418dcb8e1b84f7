//! Hand-backs: a request to hand back what a job has not started, answered to the piece
//! its search is in (and those each of its threads took ahead, all searched). A job sent
//! with `split` whose pieces were all taken, or asked a second time (keeping what it kept
//! the first), hands back what its running pieces have not entered instead: each busy
//! thread's piece keeps its parts up to the one its search is in on each split level, and
//! the pieces a thread took past it (ahead of their start) go back whole.

use super::super::recorded::Costs;
use super::slots::Slots;
use coordinator::executor::ExecutorId;
use proto::PieceSplit;
use std::collections::BTreeMap;
use tables::Move;

/// Pieces each thread of a job has claimed beyond the one this model's run is in when
/// the job is asked to split, all searched: its other lanes' (`runner::LANES`, 3,
/// interleaved on the thread) and the tasks it took ahead of their start (`AHEAD`, 4).
const TAKEN_AHEAD: usize = 6;

impl Slots {
    /// A request to split attempt `attempt` of job `id` reached executor `e` at `now`:
    /// its answer (the job's threads get a new future when it kept fewer pieces).
    pub fn split(
        &mut self,
        e: ExecutorId,
        id: u64,
        attempt: u32,
        now: u64,
        kids: &mut dyn Costs,
    ) -> proto::Handback {
        let mut h = proto::Handback {
            job: proto::JobId(id),
            attempt,
            kept: None,
            split: Vec::new(),
        };
        let rate = self.rate;
        let Some(x) = self.execs.get_mut(&e) else {
            return h;
        };
        if x.waiting
            .iter()
            .any(|j| j.id.0 == id && j.attempt == attempt)
        {
            x.handed.push((id, attempt));
            h.kept = Some(0);
            return h;
        }
        let Some(r) = x.running.get_mut(&id).filter(|r| r.attempt == attempt) else {
            return h;
        };
        if r.job.run.batch.is_some() {
            return h;
        }
        let t = now as f64;
        r.advance(t, true, None, rate);
        // The piece its search is in (in the last run taken), and those it took ahead.
        let runs = r.job.chunk_start(r.job.chunks());
        let mut started = r.job.chunk_start(r.next);
        let last = r.next.checked_sub(1);
        let cut_lane = (r.lanes.iter()).position(|l| l.chunk == last && l.busy > t);
        if let (Some(c), Some(i)) = (last, cut_lane) {
            let l = r.lanes[i];
            let done =
                ((t - l.from) * rate / 1e6) as u64 + r.job.nodes_before(r.job.chunk_start(c));
            started = r.job.pieces_started(c, done);
        }
        let kept = match r.kept {
            Some(k) => k,
            None => (started + TAKEN_AHEAD * r.lanes.len().max(1)).min(runs),
        };
        h.kept = Some(kept as u32);
        // Running pieces are split only once every piece was taken, or at a second
        // request (see `PieceCursor::hand_back_split`).
        if r.job.run.split && (kept >= runs || r.kept.is_some()) {
            h.split = split_running(r, kept, t, rate, kids);
            self.reproject(e, id, now);
            return h;
        }
        if kept >= runs {
            return h;
        }
        // The runs up to `kept`, the one it falls in cut there.
        r.kept = Some(kept);
        r.job.keep(kept);
        if let (Some(c), Some(i)) = (last, cut_lane) {
            if c + 1 >= r.job.chunks() {
                let c = r.job.chunks() - 1;
                let cut = (r.job.nodes_before(kept))
                    .saturating_sub(r.job.nodes_before(r.job.chunk_start(c)));
                let l = &mut r.lanes[i];
                l.busy = (l.from + cut as f64 * 1e6 / rate).max(t);
            }
        }
        r.next = r.next.min(r.job.chunks());
        self.reproject(e, id, now);
        h
    }
}

/// A job sent with `split` and asked at `t` keeps its first `kept` pieces (see
/// [`Slots::split`]) and of each running piece the extensions its search entered: its
/// pieces cut so, and its threads' ends moved. Returns the split entries.
fn split_running(
    r: &mut super::running::Running,
    kept: usize,
    t: f64,
    rate: f64,
    kids: &mut dyn Costs,
) -> Vec<PieceSplit> {
    let depth = r.job.run.depth;
    // Piece -> where its search was (empty: taken ahead of its start, or not taken), and
    // the nodes it keeps.
    let mut entered: BTreeMap<usize, (Vec<u32>, u64)> = BTreeMap::new();
    for l in r.lanes.iter().filter(|l| l.busy > t) {
        let Some(c) = l.chunk else { continue };
        let done = ((t - l.from) * rate / 1e6) as u64 + r.job.nodes_before(r.job.chunk_start(c));
        let at = r.job.pieces_started(c, done) - 1;
        let end = r.job.chunk_start(c + 1).min(kept);
        for k in at..end {
            let p = &r.job.run.pieces[k];
            if p.moves.is_empty() {
                continue;
            }
            if k > at {
                entered.insert(k, (Vec::new(), 0));
                continue;
            }
            let within = done.saturating_sub(r.job.nodes_before(k));
            let path = descend(depth, &p.moves, p.nodes, within, kids);
            if !path.is_empty() {
                entered.insert(k, (path, 0));
            }
        }
    }
    // Taken by no thread yet, but kept: taken ahead of their start.
    for k in r.job.chunk_start(r.next)..kept {
        if !r.job.run.pieces[k].moves.is_empty() {
            entered.insert(k, (Vec::new(), 0));
        }
    }
    r.job.keep(kept);
    for (&k, (path, nodes)) in entered.iter_mut() {
        // What it keeps is what the parts it hands back, each a unit of a job of its
        // own, do not cost: the replay's nodes add up however a piece is split.
        let p = &r.job.run.pieces[k];
        let mut back = 0u64;
        let _ = proto::pieces::split_parts(&p.moves, path, &mut |part, keep| {
            if !keep {
                back += kids.cost(depth, part);
            }
        });
        *nodes = p.nodes.saturating_sub(back);
        r.job.run.keep_entered(k, path, *nodes);
    }
    r.job.recount();
    r.next = r.next.min(r.job.chunks());
    for l in r.lanes.iter_mut().filter(|l| l.busy > t) {
        if let Some(c) = l.chunk.filter(|&c| c < r.job.chunks()) {
            l.busy = (l.from + r.job.chunk_nodes(c) as f64 * 1e6 / rate).max(t);
        } else {
            l.busy = t;
        }
    }
    (entered.into_iter())
        .map(|(k, (path, _))| PieceSplit {
            piece: k as u32,
            entered: path,
        })
        .collect()
}

/// Where the search of piece `moves` (of `nodes`) at `depth` is once it has searched
/// `within` of them, its extensions taken in move order on the split levels: the moves
/// entered on each level.
fn descend(depth: u8, moves: &[Move], nodes: u64, within: u64, kids: &mut dyn Costs) -> Vec<u32> {
    let mut path = Vec::new();
    let mut at = moves.to_vec();
    let (mut nodes, mut within) = (nodes, within);
    while path.len() < proto::pieces::SPLIT_LEVELS && proto::pieces::splittable(at.len(), depth) {
        let n = kids.children(depth, &at, nodes);
        let last = at.last().copied();
        // The extension the search is in: the first whose end is past `within`.
        let mut i = 0;
        while i + 1 < n.len() && within >= n[i] {
            within -= n[i];
            i += 1;
        }
        let Some(m) = proto::pieces::child_move(last, i as u32).filter(|_| !n.is_empty()) else {
            break;
        };
        path.push(i as u32 + 1);
        nodes = n[i];
        at.push(m);
    }
    path
}
