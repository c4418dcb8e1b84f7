//! Results coming back: accepted or ignored, applied to their positions (a split
//! position's to its deepening: see [`deepen`]), records finished.

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
        if matches!(job.kind, Kind::Check { .. }) {
            // A claim run again: compared, not applied (see `verify`).
            let now = self.now;
            self.executors.update(from, |e| {
                e.running.remove(&id);
                e.lease_renewed = now;
            });
            if let Some(job) = self.remove_job(id) {
                if !current {
                    self.actions.push(Action::Cancel { on: from, job: id });
                }
                // Answered, as every job dispatched is (the check decides what it says).
                self.counters.jobs_done += 1;
                self.on_check_answer(from, job, result);
            }
            return;
        }
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
        if let Ok(out) = &result.output {
            self.note_claim(from, &job, out);
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
            // A result of another shape than its job: `complete` refused it already (a
            // check's answer never comes here).
            _ => {}
        }
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

    /// Forgets job `id` and tells its executor, if it has one, to stop it.
    pub(super) fn cancel_job(&mut self, id: JobId) {
        let Some(j) = self.remove_job(id) else {
            return;
        };
        if let Some(exec) = j.lease {
            self.free_slot(exec, id);
            self.actions.push(Action::Cancel { on: exec, job: id });
        }
    }

    /// A position's record is known: cancel what of it still runs, queue the record.
    /// A record resting on claims still to be checked is held until they are (see
    /// `verify`).
    pub(super) fn finish(&mut self, key: PosKey, outcome: Result<Solved, RecordError>) {
        self.drop_jobs_of(key);
        let mut outcome = Some(outcome);
        if self.hold(key, &mut outcome) {
            return;
        }
        let Some(outcome) = outcome else { return };
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
