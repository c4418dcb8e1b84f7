//! Hand-backs: a request to hand back what a job has not started, answered to the piece
//! its search is in (and those each of its threads took ahead, all searched).

use super::slots::Slots;
use coordinator::executor::ExecutorId;

/// Pieces each thread of a job has claimed beyond the one this model's run is in when
/// the job is asked to split, all searched: its other lanes' (`runner::LANES`, 3,
/// interleaved on the thread) and the tasks it took ahead of their start (`AHEAD`, 4).
const TAKEN_AHEAD: usize = 6;

impl Slots {
    /// A request to split attempt `attempt` of job `id` reached executor `e` at `now`:
    /// its answer (the job's threads get a new future when it kept fewer pieces).
    pub fn split(&mut self, e: ExecutorId, id: u64, attempt: u32, now: u64) -> proto::Handback {
        let mut h = proto::Handback {
            job: proto::JobId(id),
            attempt,
            kept: None,
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
        let kept = (started + TAKEN_AHEAD * r.lanes.len().max(1)).min(runs);
        h.kept = Some(kept as u32);
        if kept >= runs {
            return h;
        }
        // The runs up to `kept`, the one it falls in cut there.
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
