//! Results coming back: accepted or ignored, applied to their positions, deepening
//! advanced, records finished.

use super::*;

impl Scheduler {
    /// A result came from executor `from`. It is taken only from the executor the job is
    /// leased to, complete, and with every solution checked; a result that fails its
    /// check is refused and its executor distrusted ([`Scheduler::take_rejections`]).
    pub fn on_result(&mut self, from: ExecutorId, result: JobResult) {
        let id = result.id;
        let Some(job) = self.jobs.get(&id) else {
            // Finished, superseded or cancelled already: a late or repeated answer.
            self.counters.ignored_results += 1;
            self.free_slot(from, id);
            return;
        };
        if job.lease != Some(from) {
            // Not its job (any more): whatever it says, the job's holder answers.
            self.counters.ignored_results += 1;
            return;
        }
        let current = result.attempt == job.attempt;
        let answers = job.handed.as_ref().map(|h| h.results);
        let whole = match &result.output {
            Ok(out) => complete(&job.kind, answers, out, self.requests.get(&job.req)),
            Err(_) => true,
        };
        if current {
            let now = self.now;
            if let Ok(out) = &result.output {
                let (nodes, subtree) = match out {
                    JobOutput::Subtrees(rs) => (rs.iter().map(|r| r.nodes).sum(), true),
                    JobOutput::Batch(rs) => (rs.iter().flatten().map(|r| r.nodes).sum(), false),
                };
                self.pace
                    .record(job.dispatched, now, result.micros, nodes, subtree);
            }
            self.executors.update(from, |e| {
                e.running.remove(&id);
                e.lease_renewed = now;
            });
        }
        if let Err(JobError::MissingTable { name }) = &result.output {
            // The executor said it had the table and has not: never again.
            self.executors.update(from, |e| e.tables.remove(name));
        }
        let retry = matches!(result.output, Err(JobError::MissingTable { .. })) || !whole;
        if retry {
            if current {
                // Handed back (drain), cut short, or sent where the table is missing.
                self.requeue(id);
            } else {
                self.counters.ignored_results += 1;
            }
            return;
        }
        if let Ok(out) = &result.output {
            if let Some(rejection) =
                self.check_answer(from, id, &job.kind, job.handed.as_deref(), job.req, out)
            {
                self.counters.rejected_results += 1;
                self.rejections.push(rejection);
                self.requeue(id);
                self.actions.push(Action::Cancel { on: from, job: id });
                self.distrust(from);
                return;
            }
        }
        // Accepted: the first complete, checked answer of its holder.
        let Some(job) = self.remove_job(id) else {
            return;
        };
        if !current {
            // An earlier attempt answered: the current one still runs there.
            self.free_slot(from, id);
            self.actions.push(Action::Cancel { on: from, job: id });
        }
        self.counters.jobs_done += 1;
        if let (true, Ok(JobOutput::Subtrees(rs))) = (job.early, &result.output) {
            self.counters.early_nodes += rs.iter().map(|r| r.nodes).sum::<u64>();
        }
        self.apply(job.req, job.kind, result);
    }

    /// The answers refused since the last call (for the driver to log).
    pub fn take_rejections(&mut self) -> Vec<Rejection> {
        std::mem::take(&mut self.rejections)
    }

    /// Routes an accepted result to its positions.
    pub(super) fn apply(&mut self, req: RequestId, kind: Kind, result: JobResult) {
        let out = match result.output {
            Ok(out) => out,
            Err(e) => {
                for &seq in kind.seqs() {
                    self.finish(PosKey { req, seq }, Err(RecordError::Job(e.clone())));
                }
                return;
            }
        };
        match (kind, out) {
            (Kind::Batch { seqs }, JobOutput::Batch(results)) => {
                for (seq, r) in seqs.into_iter().zip(results) {
                    let key = PosKey { req, seq };
                    match r {
                        Ok(r) => {
                            self.counters.nodes += r.nodes;
                            self.finish(key, Ok(deepen::solved(r)));
                        }
                        // This position failed (a panic, a table): its line only.
                        Err(e) => self.finish(key, Err(RecordError::Job(e.error))),
                    }
                }
            }
            (Kind::Shallow { seq, cap }, JobOutput::Batch(mut results)) => {
                let key = PosKey { req, seq };
                match results.pop() {
                    Some(Ok(r)) => {
                        self.counters.nodes += r.nodes;
                        self.after_shallow(key, cap, r);
                    }
                    Some(Err(e)) => self.finish(key, Err(RecordError::Job(e.error))),
                    None => {}
                }
            }
            (
                Kind::Subtrees {
                    seq,
                    depth,
                    prefixes,
                    ..
                },
                JobOutput::Subtrees(results),
            ) => {
                let nodes: u64 = results.iter().map(|r| r.nodes).sum();
                self.counters.nodes += nodes;
                let key = PosKey { req, seq };
                let Some(r) = self.requests.get_mut(&req) else {
                    return;
                };
                let settings = &r.settings;
                let Some(split) = r.lines.get_mut(seq).and_then(|p| p.split.as_mut()) else {
                    return;
                };
                split.deep.absorb(result.id, depth, &prefixes, results);
                if split.deep.settled_early(settings, depth) {
                    split.deep.close_jobs(depth);
                    self.drop_depth_jobs(key, depth);
                }
                self.advance(key);
            }
            // A result of another shape than its job: `complete` refused it already.
            _ => {}
        }
    }

    /// A whole job's result (every length up to `cap` searched): the position's record,
    /// its next whole job, or its split.
    pub(super) fn after_shallow(&mut self, key: PosKey, cap: u8, mut r: PositionResult) {
        let whole_nodes = self.cfg.whole_nodes;
        let Some(req) = self.requests.get_mut(&key.req) else {
            return;
        };
        let Some(p) = req.lines.get_mut(key.seq) else {
            return;
        };
        // The depths after `cap` are predicted from this job's nodes (all of them its
        // last depth's, an overestimate for a job of several depths), 13 times as many
        // each; a job that searched nothing (a lower bound past its cap) predicts
        // nothing. The next depth is searched whole while the one after it is small too
        // (see [`Config::whole_nodes`]).
        let own = r.nodes;
        r.nodes = r.nodes.saturating_add(p.earlier.0);
        r.lookups = r.lookups.saturating_add(p.earlier.1);
        let (every, len, reduce) = (&self.prefixes, self.cfg.prefix_len, self.cfg.symmetry);
        let prefixes = || deepen::Prefixes::of(&p.position, len, every, reduce);
        let split = cap.saturating_add(1);
        let (nodes, lookups) = (r.nodes, r.lookups);
        match deepen::after_shallow(&req.settings, split, r, p.proved_empty, prefixes) {
            AfterShallow::Done(solved) => self.finish(key, Ok(solved)),
            AfterShallow::Deepen(deep)
                if own > 0
                    && deep.current() == split
                    && deep.exhausted() == Some(cap)
                    && (own as f64) * 169.0 <= whole_nodes as f64 =>
            {
                // Every length up to `cap` proved empty, and the next is small: searched
                // whole too (a split depth costs its subtrees' starts whatever its nodes).
                p.proved_empty = Some(cap);
                p.earlier = (nodes, lookups);
                let (req, seq) = (key.req, key.seq);
                self.new_job(req, Kind::Shallow { seq, cap: split }, (req, seq, split, 0));
            }
            AfterShallow::Deepen(deep) => {
                let deadline = req.settings.time_limit_ms.and_then(|l| {
                    let start = p.started?;
                    Some(start.saturating_add(l.saturating_mul(1000)))
                });
                p.split = Some(Box::new(Split { deep, deadline }));
                req.split.insert(key.seq);
                if let Some(d) = deadline {
                    self.deadlines.insert((d, key));
                }
                self.advance(key);
            }
        }
    }

    /// Moves a split position on: new depths' jobs, or its record.
    pub(super) fn advance(&mut self, key: PosKey) {
        let proved = (self.pos_mut(key).and_then(|p| p.split.as_ref())).map(|s| s.deep.exhausted());
        loop {
            let Some(req) = self.requests.get_mut(&key.req) else {
                return;
            };
            let Some(split) = req.lines.get_mut(key.seq).and_then(|p| p.split.as_mut()) else {
                return;
            };
            match split.deep.step(&req.settings) {
                Step::Wait => {
                    if split.deep.exhausted() != proved.flatten() {
                        self.recut_early(key);
                    }
                    return;
                }
                Step::Finished(stop) => {
                    self.finish_split(key, stop);
                    return;
                }
                Step::NeedJobs(depth) => {
                    self.make_depth_jobs(key, depth);
                }
            }
        }
    }

    /// Makes the subtree jobs of `depth` for a split position.
    pub(super) fn make_depth_jobs(&mut self, key: PosKey, depth: u8) {
        let slots = self.executors.capacity().max(1);
        let workers = self.executors.len().max(1);
        let shares = self.executors.values().all(|e| e.shares);
        let pending = self.pending_prefixes(key);
        let groups = {
            let cfg = self.cfg.clone();
            let pace = &self.pace;
            let Some(split) = self
                .requests
                .get_mut(&key.req)
                .and_then(|r| r.lines.get_mut(key.seq))
                .and_then(|p| p.split.as_mut())
            else {
                return;
            };
            split.deep.open_depth(depth);
            let per_slot = pace.jobs_per_slot(
                split.deep.predicted_nodes(depth),
                slots,
                cfg.jobs_per_slot,
                cfg.job_round_trips,
            );
            // Executors whose threads share a job need no job per slot: a depth too
            // small for one of `job_round_trips` round trips per slot is cut into fewer
            // (one per executor at least), so that the depths started early beside it
            // fit in the executors' room at once.
            let cut_for = match (shares, pace.min_job(cfg.job_round_trips)) {
                (true, m) if m > 0.0 => {
                    let fit = split.deep.predicted_nodes(depth) / m;
                    (fit as usize).clamp(workers.min(slots), slots)
                }
                _ => slots,
            };
            split
                .deep
                .groups(depth, cut_for, per_slot, cfg.job_nodes, &pending)
        };
        self.add_depth_jobs(key, depth, groups);
    }

    /// Queues `groups` (units, predicted nodes) as jobs of `depth` of a split position,
    /// ranked in their order.
    pub(super) fn add_depth_jobs(
        &mut self,
        key: PosKey,
        depth: u8,
        groups: Vec<(Vec<cut::Unit>, f64)>,
    ) {
        let splits = self.executors.values().any(|e| e.splits);
        for (g, (prefixes, nodes)) in groups.into_iter().enumerate() {
            let pieces = match splits {
                true => split::piece_levels(&prefixes, nodes, self.cfg.piece_levels),
                false => 0,
            };
            let kind = Kind::Subtrees {
                seq: key.seq,
                depth,
                prefixes,
                pieces,
            };
            let Some(id) = self.new_job(key.req, kind, (key.req, key.seq, depth, g as u32)) else {
                return;
            };
            let predicted_us = (nodes / self.pace.node_rate() * 1e6) as u64;
            if let Some(j) = self.jobs.get_mut(&id) {
                j.predicted_us = predicted_us;
            }
            if let Some(split) = self.pos_mut(key).and_then(|p| p.split.as_mut()) {
                split.deep.add_job(depth, id);
            }
        }
    }

    /// Starts the next depth of split positions whose current depth is fully
    /// dispatched, oldest first, while capacity would idle.
    pub(super) fn start_early(&mut self) {
        let mut keys = Vec::new();
        for (&req, r) in &self.requests {
            for &seq in &r.split {
                let Some(split) = r.lines.get(seq).and_then(|p| p.split.as_ref()) else {
                    continue;
                };
                if self.queue.holds_position(&r.table, req, seq) {
                    continue;
                }
                if let Some(d) = split.deep.early_candidate(&r.settings) {
                    keys.push((PosKey { req, seq }, d));
                }
            }
        }
        for (key, depth) in keys {
            if self.queue.len() >= self.executors.free_slots() {
                break;
            }
            self.make_depth_jobs(key, depth);
        }
    }

    /// Finishes a split position (solutions found, space exhausted, or out of time).
    pub(super) fn finish_split(&mut self, key: PosKey, stop: Stop) {
        let now = self.now;
        let Some(req) = self.requests.get(&key.req) else {
            return;
        };
        let Some(p) = req.lines.get(key.seq) else {
            return;
        };
        let Some(split) = &p.split else { return };
        let micros = now.saturating_sub(p.started.unwrap_or(now));
        let solved = split.deep.record(&req.settings, stop, micros);
        self.finish(key, Ok(solved));
    }

    /// Cancels every open job of a position.
    pub(super) fn drop_jobs_of(&mut self, key: PosKey) {
        let ids = match self.pos_mut(key) {
            Some(p) => p.jobs.take(),
            None => return,
        };
        for id in ids {
            self.cancel_job(id);
        }
    }

    /// Cancels the open subtree jobs of one depth of a position (queued ones are
    /// forgotten, running ones told to stop).
    pub(super) fn drop_depth_jobs(&mut self, key: PosKey, depth: u8) {
        let Some(p) = self
            .requests
            .get(&key.req)
            .and_then(|r| r.lines.get(key.seq))
        else {
            return;
        };
        let ids: Vec<JobId> = (p.jobs.iter())
            .filter(|id| {
                (self.jobs.get(id)).is_some_and(
                    |j| matches!(j.kind, Kind::Subtrees { depth: d, .. } if d == depth),
                )
            })
            .collect();
        for id in ids {
            self.cancel_job(id);
        }
    }

    /// Forgets job `id` and tells its executor, if it has one, to stop it.
    fn cancel_job(&mut self, id: JobId) {
        let Some(j) = self.remove_job(id) else {
            return;
        };
        if let Some(exec) = j.lease {
            self.free_slot(exec, id);
            self.actions.push(Action::Cancel { on: exec, job: id });
        }
    }

    /// A position's record is known: cancel what of it still runs, queue the record.
    pub(super) fn finish(&mut self, key: PosKey, outcome: Result<Solved, RecordError>) {
        self.drop_jobs_of(key);
        let Some(r) = self.requests.get_mut(&key.req) else {
            return;
        };
        let closed = r.lines.close(key.seq, |p| Record {
            line: p.line,
            input: std::mem::take(&mut p.input),
            outcome,
        });
        if let Some(split) = closed.and_then(|p| p.split) {
            r.split.remove(&key.seq);
            if let Some(d) = split.deadline {
                self.deadlines.remove(&(d, key));
            }
        }
    }
}

/// Whether a batch position's answer was cut short by a cancellation (an error is not).
fn cancelled(a: &PositionAnswer) -> bool {
    a.as_ref().is_ok_and(|r| r.stop == Stop::Cancelled)
}

/// Whether `out` is a complete answer to a job of `kind`: every position or subtree
/// answered (or the job's solution count reached), nothing cut short by a cancellation.
/// `answers`: the units a job that handed back pieces still answers for.
fn complete(kind: &Kind, answers: Option<usize>, out: &JobOutput, req: Option<&Request>) -> bool {
    match (kind, out) {
        (Kind::Batch { seqs }, JobOutput::Batch(rs)) => {
            let Some(req) = req else { return false };
            rs.len() == seqs.len()
                && rs.iter().zip(seqs).all(|(r, &seq)| {
                    !cancelled(r) && req.lines.get(seq).is_some_and(|p| p.line == answer_line(r))
                })
        }
        (Kind::Shallow { .. }, JobOutput::Batch(rs)) => rs.len() == 1 && !cancelled(&rs[0]),
        (Kind::Subtrees { prefixes, .. }, JobOutput::Subtrees(rs)) => {
            if rs.iter().any(|r| r.stop == Stop::Cancelled) {
                return false;
            }
            let answers = answers.unwrap_or(prefixes.len());
            if rs.iter().any(|r| r.prefix as usize >= answers) {
                return false;
            }
            let found = rs.iter().any(|r| !r.solutions.is_empty());
            let timed = rs.iter().any(|r| r.stop == Stop::TimeLimit);
            rs.len() == answers || found || timed
        }
        _ => false,
    }
}
