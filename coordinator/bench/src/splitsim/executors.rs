//! The simulated executors: the driver's handles on them, and their slots in virtual
//! time.
//!
//! The driver submits and cancels through a [`Handle`], which only posts what it was
//! told to the [`Outbox`]; the replay delivers it a latency later to the executor's
//! [`Slots`], which run each job for its recorded nodes at the replay's node rate.
//!
//! A job runs on the thread that starts it, taking its pieces in order. When an executor
//! shares jobs (as a worker does, `runner::RunnerOptions::share_jobs`), a thread with no
//! job waiting to start joins the running job with the most pieces not yet taken and
//! takes pieces from the same list; such a helper leaves at the end of a piece when a
//! job is waiting. To keep the replay fast, a job's pieces are taken in runs of pieces
//! ([`CHUNKS`] a job at most); a request to split is answered to the piece.

use super::recorded::JobRun;
use super::report::SimJob;
use crate::trace::TraceError;
use coordinator::executor::{Executor, ExecutorId, LiveJob};
use proto::{Job, JobId, JobResult};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};

use super::events::Ev;

/// The one table the simulated executors hold.
pub(super) const TABLE: &str = "trace";

/// What the driver told the executors, in order, not yet on the wire.
pub(super) type Outbox = RefCell<Vec<(ExecutorId, Order)>>;

/// One thing the driver told an executor.
pub(super) enum Order {
    /// Run this job.
    Submit(Job),
    /// Stop this job.
    Cancel(JobId),
    /// Hand back what this attempt of this job has not started.
    Split(JobId, u32),
}

/// Pieces each thread of a job has claimed beyond the one this model's run is in when
/// the job is asked to split, all searched: its other lanes' (`runner::LANES`, 3,
/// interleaved on the thread) and the tasks it took ahead of their start (`AHEAD`, 4).
const TAKEN_AHEAD: usize = 6;

/// The driver's handle on a simulated executor.
pub(super) struct Handle<'a> {
    /// Its id.
    pub id: ExecutorId,
    /// Its threads.
    pub threads: usize,
    /// Jobs it holds beyond its threads.
    pub queue_ahead: usize,
    /// Its threads share a job's pieces.
    pub share: bool,
    /// Where what it is told goes.
    pub outbox: &'a Outbox,
}

impl Executor for Handle<'_> {
    fn capacity(&self) -> usize {
        self.threads + self.queue_ahead
    }
    fn threads(&self) -> u32 {
        u32::try_from(self.threads).unwrap_or(u32::MAX)
    }
    fn tables(&self) -> Vec<String> {
        vec![TABLE.to_string()]
    }
    fn submit(&self, job: Job) {
        self.outbox.borrow_mut().push((self.id, Order::Submit(job)));
    }
    fn cancel(&self, job: JobId) {
        self.outbox.borrow_mut().push((self.id, Order::Cancel(job)));
    }
    fn can_split(&self) -> bool {
        true
    }
    fn shares_jobs(&self) -> bool {
        self.share
    }
    fn split(&self, job: JobId, attempt: u32) -> Option<proto::Handback> {
        self.outbox
            .borrow_mut()
            .push((self.id, Order::Split(job, attempt)));
        None
    }
    fn name(&self) -> String {
        format!("simulated {}", self.id.0)
    }
}

/// Runs of pieces a job's pieces are taken in at most (see the module doc).
const CHUNKS: usize = 256;

/// One thread working on a job.
#[derive(Clone, Copy, Debug)]
struct Lane {
    /// Its id, unique in the replay.
    id: u64,
    /// When the run of pieces it took last started, µs.
    from: f64,
    /// When that run ends (when it joined, before it took one), µs.
    busy: f64,
    /// The run it took last.
    chunk: Option<usize>,
    /// It joined a job another thread started (it leaves when a job waits).
    helper: bool,
}

/// A job on an executor's threads.
struct Running {
    /// Started at, µs.
    start: u64,
    /// The attempt it runs as.
    attempt: u32,
    /// What it does.
    run: JobRun,
    /// Nodes of its first `k` pieces, for every `k` (a shallow job: one piece).
    cum: Vec<u64>,
    /// Where its runs of pieces start, and the end of the last (its pieces to search).
    bounds: Vec<usize>,
    /// Runs taken so far.
    next: usize,
    /// The threads on it.
    lanes: Vec<Lane>,
    /// Changes whenever its threads' future changes (ids unique in the replay): a
    /// thread's end made before that is stale.
    version: u64,
}

impl Running {
    fn new(start: u64, attempt: u32, run: JobRun) -> Running {
        let mut cum = vec![0u64];
        if run.batch.is_some() {
            cum.push(run.nodes);
        } else {
            for p in &run.pieces {
                let last = cum.last().copied().unwrap_or(0);
                cum.push(last + p.nodes);
            }
        }
        let runs = if run.batch.is_some() { 1 } else { run.runs };
        let total = cum[runs];
        let target = (total / CHUNKS as u64).max(1);
        let mut bounds = vec![0usize];
        let mut acc = 0u64;
        for k in 0..runs {
            acc += cum[k + 1] - cum[k];
            if acc >= target || k + 1 == runs {
                bounds.push(k + 1);
                acc = 0;
            }
        }
        Running {
            start,
            attempt,
            run,
            cum,
            bounds,
            next: 0,
            lanes: Vec::new(),
            version: 0,
        }
    }

    /// Thread `id` joins it at `t` (`helper`: it did not start it) and takes a run.
    fn join(&mut self, id: u64, t: f64, helper: bool, rate: f64) {
        self.lanes.push(Lane {
            id,
            from: t,
            busy: t,
            chunk: None,
            helper,
        });
        self.advance(t, true, None, rate);
    }

    /// Runs of pieces it searches.
    fn chunks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The nodes of run `c`.
    fn chunk_nodes(&self, c: usize) -> u64 {
        self.cum[self.bounds[c + 1]] - self.cum[self.bounds[c]]
    }

    /// Pieces not yet taken.
    fn untaken(&self) -> usize {
        self.bounds[self.chunks()] - self.bounds[self.next]
    }

    /// The lane free first, other than `except`.
    fn earliest(&self, except: Option<u64>) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, l) in self.lanes.iter().enumerate() {
            if Some(l.id) == except {
                continue;
            }
            if best.is_none_or(|b| l.busy < self.lanes[b].busy) {
                best = Some(i);
            }
        }
        best
    }

    /// Lanes free before `t` (or at it, when `inclusive`), but `except`, take runs in
    /// order, the one free first first.
    fn advance(&mut self, t: f64, inclusive: bool, except: Option<u64>, rate: f64) {
        while self.next < self.chunks() {
            let Some(i) = self.earliest(except) else {
                return;
            };
            let b = self.lanes[i].busy;
            if !(b < t || (inclusive && b <= t)) {
                return;
            }
            let d = self.chunk_nodes(self.next) as f64 * 1e6 / rate;
            let l = &mut self.lanes[i];
            l.from = b;
            l.busy = b + d;
            l.chunk = Some(self.next);
            self.next += 1;
        }
    }

    /// When each lane runs out of pieces if nothing changes: its id, and the time.
    fn project(&self, rate: f64) -> Vec<(u64, f64)> {
        let mut busy: Vec<f64> = self.lanes.iter().map(|l| l.busy).collect();
        for c in self.next..self.chunks() {
            let mut i = 0;
            for (j, b) in busy.iter().enumerate() {
                if *b < busy[i] {
                    i = j;
                }
            }
            if let Some(b) = busy.get_mut(i) {
                *b += self.chunk_nodes(c) as f64 * 1e6 / rate;
            }
        }
        self.lanes.iter().map(|l| l.id).zip(busy).collect()
    }

    /// Nodes searched by `now`.
    fn done(&self, now: f64, rate: f64) -> u64 {
        let taken = self.cum[self.bounds[self.next]];
        let left: f64 = (self.lanes.iter())
            .filter(|l| l.chunk.is_some())
            .map(|l| (l.busy - now).max(0.0) * rate / 1e6)
            .sum();
        taken.saturating_sub(left as u64)
    }
}

/// One executor's jobs.
#[derive(Default)]
struct Exec {
    /// On its threads, by job id.
    running: HashMap<u64, Running>,
    /// Arrived, waiting for a thread (in arrival order).
    waiting: VecDeque<Job>,
    /// Waiting jobs (id, attempt) asked to split before they started: they start none.
    handed: Vec<(u64, u32)>,
    /// When a helper is due to leave its job for a waiting one.
    leave_at: Option<u64>,
}

impl Exec {
    /// Threads on a job.
    fn busy(&self) -> usize {
        self.running.values().map(|r| r.lanes.len()).sum()
    }

    /// The thread that leaves its job first, at the end of its run (`later`: one still
    /// in its run at `t` too): its run's end, its job and its lane. A thread leaves a job
    /// that still has pieces to take when a shallower depth has work here (a waiting job,
    /// or a running one with pieces not taken), and a helper also for a waiting job of
    /// its own depth; a job left by all its threads waits, its pieces kept, for a free
    /// one. Deeper depths only count once shallower ones are empty: they wait.
    /// Lanes are brought up to `t` only for a `later` one: one at the end of its run by
    /// `t` leaves there rather than take another.
    fn leaver(&mut self, t: f64, rate: f64, later: bool) -> Option<(f64, u64, u64)> {
        let waiting = self.waiting.iter().map(job_depth).min().unwrap_or(u8::MAX);
        let mut open = u8::MAX;
        for r in self.running.values_mut() {
            if later {
                r.advance(t, true, None, rate);
            }
            if r.next < r.chunks() && r.run.batch.is_none() {
                open = open.min(r.run.depth);
            }
        }
        let shallowest = waiting.min(open);
        let mut pick: Option<(f64, u64, u64)> = None;
        for (&id, r) in &self.running {
            if r.next >= r.chunks() {
                // Its threads end with its last runs.
                continue;
            }
            let d = r.run.depth;
            for l in &r.lanes {
                let leaves = d > shallowest || (l.helper && d >= waiting);
                let due = if later { l.busy > t } else { l.busy <= t };
                if leaves && due && pick.is_none_or(|(b, _, _)| l.busy < b) {
                    pick = Some((l.busy, id, l.id));
                }
            }
        }
        pick
    }
}

/// Every simulated executor's threads and the jobs they hold.
pub(super) struct Slots {
    execs: BTreeMap<ExecutorId, Exec>,
    /// Threads of each executor.
    threads: usize,
    /// Nodes per second of one thread.
    rate: f64,
    /// Whether a free thread joins a running job (see the module doc).
    share: bool,
    /// Ids made so far (lanes', versions').
    made: u64,
    /// Events made since the replay last took them: threads running out of pieces, and
    /// helpers due to leave.
    due: Vec<(u64, Ev)>,
}

/// A job's depth (a batch job's: 0, it goes first).
fn job_depth(job: &Job) -> u8 {
    match &job.work {
        proto::Work::Subtrees(w) => w.depth,
        proto::Work::Batch { .. } => 0,
    }
}

/// The µs tick at or after `t`.
fn tick(t: f64) -> u64 {
    t.max(0.0).ceil() as u64
}

impl Slots {
    /// Executors `1..=workers` of `threads` threads each, searching `rate` nodes per second
    /// per thread; free threads join running jobs when `share`.
    pub fn new(workers: usize, threads: usize, rate: f64, share: bool) -> Slots {
        Slots {
            execs: (1..=workers as u64)
                .map(|k| (ExecutorId(k), Exec::default()))
                .collect(),
            threads,
            rate,
            share,
            made: 0,
            due: Vec::new(),
        }
    }

    /// The events made since last asked.
    pub fn take_due(&mut self) -> Vec<(u64, Ev)> {
        std::mem::take(&mut self.due)
    }

    /// The executors' ids.
    pub fn ids(&self) -> impl Iterator<Item = ExecutorId> + '_ {
        self.execs.keys().copied()
    }

    /// Threads over every executor.
    pub fn threads_in_all(&self) -> usize {
        self.execs.len() * self.threads
    }

    /// Threads on a job, and jobs held (on threads or waiting), over every executor.
    pub fn held(&self) -> (usize, usize) {
        let busy = self.execs.values().map(Exec::busy).sum();
        let jobs = (self.execs.values())
            .map(|e| e.running.len() + e.waiting.len())
            .sum();
        (busy, jobs)
    }

    /// `job` reached executor `e`: it waits for a thread.
    pub fn arrive(&mut self, e: ExecutorId, job: Job) {
        if let Some(x) = self.execs.get_mut(&e) {
            x.waiting.push_back(job);
        }
    }

    /// A new id.
    fn fresh(&mut self) -> u64 {
        self.made += 1;
        self.made
    }

    /// Job `id` of executor `e` got a new future at `now`: a new version, and its lanes'
    /// ends.
    fn reproject(&mut self, e: ExecutorId, id: u64, now: u64) {
        let v = self.fresh();
        let rate = self.rate;
        let Some(r) = self.execs.get_mut(&e).and_then(|x| x.running.get_mut(&id)) else {
            return;
        };
        r.version = v;
        for (lane, t) in r.project(rate) {
            self.due.push((tick(t).max(now), Ev::Free(e, id, lane, v)));
        }
    }

    /// Lane `lane` of job `id` on executor `e` ran out of pieces at `now` (as version `v`
    /// of the job foresaw): the thread is free; when it was the job's last, the job ended:
    /// what it did, its result, and whether it holds an optimal solution.
    pub fn free(
        &mut self,
        e: ExecutorId,
        id: u64,
        lane: u64,
        v: u64,
        now: u64,
    ) -> Option<(SimJob, JobResult, bool)> {
        let rate = self.rate;
        let x = self.execs.get_mut(&e)?;
        let r = x.running.get_mut(&id).filter(|r| r.version == v)?;
        r.advance(now as f64, true, None, rate);
        if (r.lanes.iter()).any(|l| l.id == lane && l.busy > now as f64) {
            // It took more than foreseen (rounding): it ends later.
            self.reproject(e, id, now);
            return None;
        }
        r.lanes.retain(|l| l.id != lane);
        if !r.lanes.is_empty() || r.next < r.chunks() {
            return None;
        }
        let r = x.running.remove(&id)?;
        let (output, solves) = r.run.output();
        let job = SimJob {
            id,
            depth: r.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: r.run.nodes,
            cancelled: false,
            shape: r.run.shape,
        };
        let result = JobResult {
            id: JobId(id),
            attempt: r.attempt,
            micros: now - r.start,
            output: Ok(output),
        };
        Some((job, result, solves))
    }

    /// A cancellation of job `id` reached executor `e` at `now`: a waiting job is dropped,
    /// a running one stops (what it did until then, if it ran).
    pub fn cancel(&mut self, e: ExecutorId, id: u64, now: u64) -> Option<SimJob> {
        let x = self.execs.get_mut(&e)?;
        x.waiting.retain(|j| j.id.0 != id);
        let mut r = x.running.remove(&id)?;
        r.advance(now as f64, false, None, self.rate);
        let nodes = r.done(now as f64, self.rate);
        Some(SimJob {
            id,
            depth: r.run.depth,
            exec: e.0,
            start_us: r.start,
            end_us: now,
            nodes: nodes.min(r.run.nodes),
            cancelled: true,
            shape: r.run.shape,
        })
    }

    /// A leave, due at `now` on executor `e`: the thread that should leave its job (see
    /// [`Exec::leaver`]) and is at the end of its run leaves it (the job gets a new future,
    /// or waits for a thread with its pieces not taken), and takes other work.
    pub fn leave(&mut self, e: ExecutorId, now: u64) {
        let rate = self.rate;
        let Some(x) = self.execs.get_mut(&e) else {
            return;
        };
        if x.leave_at != Some(now) {
            return;
        }
        x.leave_at = None;
        let t = now as f64;
        let Some((_, id, lane)) = x.leaver(t, rate, false).filter(|(b, ..)| *b <= t) else {
            self.plan_leave(e, now);
            return;
        };
        if let Some(r) = x.running.get_mut(&id) {
            r.lanes.retain(|l| l.id != lane);
            r.advance(t, true, None, rate);
        }
        self.reproject(e, id, now);
    }

    /// Free threads take waiting jobs at `now`, executor by executor, and then, when
    /// executors share, join running jobs; a helper is set to leave where a job waits.
    pub fn fill(
        &mut self,
        now: u64,
        make: &mut dyn FnMut(&Job) -> Result<JobRun, TraceError>,
    ) -> Result<(), TraceError> {
        let ids: Vec<ExecutorId> = self.execs.keys().copied().collect();
        let t = now as f64;
        for e in ids {
            while let Some(x) = self.execs.get_mut(&e) {
                if x.busy() >= self.threads {
                    break;
                }
                // The shallowest waiting job (the first of its depth), and the
                // shallowest running job with pieces not taken (the first started).
                let rate = self.rate;
                let wait = (x.waiting.iter().enumerate())
                    .map(|(i, j)| (job_depth(j), i))
                    .min();
                let mut help: Option<(u8, u64, u64)> = None;
                if self.share {
                    for (&id, r) in x.running.iter_mut() {
                        if r.run.batch.is_some() {
                            continue;
                        }
                        r.advance(t, true, None, rate);
                        let key = (r.run.depth, r.start, id);
                        if r.untaken() > 0 && help.is_none_or(|h| key < h) {
                            help = Some(key);
                        }
                    }
                }
                let start_waiting = match (wait, help) {
                    (Some((wd, _)), Some((hd, ..))) => wd <= hd,
                    (w, _) => w.is_some(),
                };
                if start_waiting {
                    let Some(job) = wait.and_then(|(_, i)| x.waiting.remove(i)) else {
                        break;
                    };
                    let mut run = make(&job)?;
                    if let Some(i) = (x.handed.iter()).position(|&h| h == (job.id.0, job.attempt)) {
                        x.handed.swap_remove(i);
                        run.keep(0);
                    }
                    let mut r = Running::new(now, job.attempt, run);
                    self.made += 1;
                    r.join(self.made, t, false, self.rate);
                    x.running.insert(job.id.0, r);
                    self.reproject(e, job.id.0, now);
                    continue;
                }
                let Some((.., id)) = help else {
                    break;
                };
                self.made += 1;
                let lane = self.made;
                if let Some(r) = x.running.get_mut(&id) {
                    r.join(lane, t, true, rate);
                }
                self.reproject(e, id, now);
            }
            self.plan_leave(e, now);
        }
        Ok(())
    }

    /// The next thread to leave its job on executor `e` (see [`Exec::leaver`]) is set to
    /// leave at the end of its run.
    fn plan_leave(&mut self, e: ExecutorId, now: u64) {
        if !self.share {
            return;
        }
        let rate = self.rate;
        let Some(x) = self.execs.get_mut(&e) else {
            return;
        };
        if let Some((b, _, _)) = x.leaver(now as f64, rate, true) {
            let at = tick(b).max(now);
            if x.leave_at != Some(at) {
                x.leave_at = Some(at);
                self.due.push((at, Ev::Leave(e)));
            }
        }
    }

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
        if r.run.batch.is_some() {
            return h;
        }
        let t = now as f64;
        r.advance(t, true, None, rate);
        // The piece its search is in (in the last run taken), and those it took ahead.
        let runs = r.bounds[r.chunks()];
        let mut started = r.bounds[r.next];
        let last = r.next.checked_sub(1);
        let cut_lane = (r.lanes.iter()).position(|l| l.chunk == last && l.busy > t);
        if let (Some(c), Some(i)) = (last, cut_lane) {
            let l = r.lanes[i];
            let done = ((t - l.from) * rate / 1e6) as u64 + r.cum[r.bounds[c]];
            let mut k = r.bounds[c];
            while k + 1 < r.bounds[c + 1] && r.cum[k + 1] <= done {
                k += 1;
            }
            started = k + 1;
        }
        let kept = (started + TAKEN_AHEAD * r.lanes.len().max(1)).min(runs);
        h.kept = Some(kept as u32);
        if kept >= runs {
            return h;
        }
        r.run.keep(kept);
        // The runs up to `kept`, the one it falls in cut there.
        r.bounds.retain(|&b| b < kept);
        r.bounds.push(kept);
        if let (Some(c), Some(i)) = (last, cut_lane) {
            if c + 1 >= r.bounds.len() - 1 {
                let c = r.bounds.len() - 2;
                let l = &mut r.lanes[i];
                l.busy = (l.from
                    + r.cum[kept].saturating_sub(r.cum[r.bounds[c]]) as f64 * 1e6 / rate)
                    .max(t);
            }
        }
        r.next = r.next.min(r.chunks());
        self.reproject(e, id, now);
        h
    }

    /// What executor `e` holds at `now`, as its heartbeat lists it.
    pub fn live(&self, e: ExecutorId, now: u64) -> Vec<LiveJob> {
        let Some(x) = self.execs.get(&e) else {
            return Vec::new();
        };
        let running = x.running.iter().map(|(&id, r)| LiveJob {
            job: JobId(id),
            attempt: r.attempt,
            nodes: r.done(now as f64, self.rate).min(r.run.nodes),
        });
        let waiting = x.waiting.iter().map(|j| LiveJob {
            job: j.id,
            attempt: j.attempt,
            nodes: 0,
        });
        let mut live: Vec<LiveJob> = running.chain(waiting).collect();
        live.sort_by_key(|l| l.job);
        live
    }
}

#[cfg(test)]
mod tests {
    use super::super::recorded::Piece;
    use super::*;
    use proto::{SubtreeWork, Work};

    /// One node per µs.
    const RATE: f64 = 1e6;

    /// A subtree job of `depth` whose pieces hold `pieces` nodes each.
    fn job_of(id: u64, depth: u8, pieces: &[u64]) -> (Job, JobRun) {
        let job = Job {
            id: JobId(id),
            attempt: 1,
            table: TABLE.to_string(),
            work: Work::Subtrees(SubtreeWork {
                position: tables::Position::SOLVED,
                depth,
                prefixes: Vec::new(),
                max_solutions: None,
                time_limit_ms: None,
                pieces: 1,
            }),
        };
        let run = JobRun {
            depth,
            nodes: pieces.iter().sum(),
            batch: None,
            pieces: (pieces.iter())
                .map(|&nodes| Piece {
                    owner: 0,
                    nodes,
                    solutions: Vec::new(),
                })
                .collect(),
            runs: pieces.len(),
            want: usize::MAX,
            shape: (1, 4, 1),
        };
        (job, run)
    }

    /// One executor of `threads` threads; its events, run in time order, with every job
    /// that ended: (id, start, end, nodes).
    struct World {
        slots: Slots,
        runs: HashMap<u64, JobRun>,
        events: super::super::events::Events,
        ended: Vec<(u64, u64, u64, u64)>,
        now: u64,
    }

    const E: ExecutorId = ExecutorId(1);

    impl World {
        fn new(threads: usize, share: bool) -> World {
            World::at_rate(threads, share, RATE)
        }

        fn at_rate(threads: usize, share: bool, rate: f64) -> World {
            World {
                slots: Slots::new(1, threads, rate, share),
                runs: HashMap::new(),
                events: Default::default(),
                ended: Vec::new(),
                now: 0,
            }
        }

        fn arrive(&mut self, (job, run): (Job, JobRun)) {
            self.runs.insert(job.id.0, run);
            self.slots.arrive(E, job);
            self.settle();
        }

        fn settle(&mut self) {
            let runs = &self.runs;
            let mut make = |j: &Job| Ok(runs[&j.id.0].clone());
            self.slots.fill(self.now, &mut make).unwrap();
            for (at, ev) in self.slots.take_due() {
                self.events.push(at, ev);
            }
        }

        /// Runs the events up to `until`.
        fn run_to(&mut self, until: u64) {
            while self.events.next_at().is_some_and(|t| t <= until) {
                let Some((t, ev)) = self.events.pop() else {
                    break;
                };
                self.now = t;
                match ev {
                    Ev::Free(e, id, lane, v) => {
                        if let Some((j, _, _)) = self.slots.free(e, id, lane, v, t) {
                            self.ended.push((j.id, j.start_us, j.end_us, j.nodes));
                        }
                    }
                    Ev::Leave(e) => self.slots.leave(e, t),
                    _ => unreachable!("only the executor's own events"),
                }
                self.settle();
            }
            self.now = until;
        }
    }

    #[test]
    fn a_free_thread_takes_pieces_of_a_running_job() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100, 100, 100, 100]));
        w.run_to(10_000);
        assert_eq!(w.ended, vec![(1, 0, 200, 400)]);
        // One job a thread, as before: the other thread idles.
        let mut w = World::new(2, false);
        w.arrive(job_of(1, 14, &[100, 100, 100, 100]));
        w.run_to(10_000);
        assert_eq!(w.ended, vec![(1, 0, 400, 400)]);
    }

    #[test]
    fn a_shared_job_hands_back_what_none_of_its_threads_started() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 20]));
        w.run_to(50);
        // Pieces 0 and 1 run; the six each thread took ahead are kept.
        let h = w.slots.split(E, 1, 1, 50);
        assert_eq!(h.kept, Some(14));
        for (at, ev) in w.slots.take_due() {
            w.events.push(at, ev);
        }
        w.run_to(10_000);
        assert_eq!(w.ended, vec![(1, 0, 700, 1_400)]);
    }

    #[test]
    fn a_helper_leaves_at_its_pieces_end_for_a_waiting_job() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 4]));
        w.run_to(50);
        w.arrive(job_of(2, 14, &[100]));
        w.run_to(10_000);
        // The helper ends piece 1 at 100 and starts job 2; job 1's own thread searches
        // pieces 2 and 3.
        assert_eq!(w.ended, vec![(2, 100, 200, 100), (1, 0, 300, 400)]);
    }

    #[test]
    fn a_shallower_running_job_is_helped_before_a_deeper_one_starts() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 4]));
        w.arrive(job_of(2, 15, &[100]));
        w.run_to(10_000);
        // The second thread helps depth 14 first: job 2 starts once job 1 has no piece
        // left to take.
        assert_eq!(w.ended, vec![(1, 0, 200, 400), (2, 200, 300, 100)]);
    }

    #[test]
    fn a_thread_leaves_a_deeper_job_at_its_pieces_end_for_a_shallower_one() {
        // 100 nodes take 333.3 µs: a piece ends between two ticks, and the thread leaves
        // there rather than take the next piece.
        let mut w = World::at_rate(1, true, 3e5);
        w.arrive(job_of(1, 15, &[100; 4]));
        w.run_to(400);
        w.arrive(job_of(2, 14, &[100]));
        w.run_to(10_000);
        // Piece 1 ends at 666.7; job 2 runs from there, then job 1's pieces 2 and 3.
        assert_eq!(w.ended, vec![(2, 667, 1_001, 100), (1, 0, 1_668, 400)]);
    }

    #[test]
    fn a_cancelled_shared_job_counts_what_its_threads_searched() {
        let mut w = World::new(2, true);
        w.arrive(job_of(1, 14, &[100; 4]));
        w.run_to(150);
        let j = w.slots.cancel(E, 1, 150).unwrap();
        assert_eq!((j.nodes, j.cancelled), (300, true));
        w.run_to(10_000);
        assert!(w.ended.is_empty(), "a cancelled job does not end again");
    }
}
