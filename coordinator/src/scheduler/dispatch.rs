//! Jobs made, queued, requeued, grouped and dispatched to executors with free slots.

use super::*;

impl Scheduler {
    pub(super) fn free_slot(&mut self, exec: ExecutorId, job: JobId) {
        self.executors.update(exec, |e| e.running.remove(&job));
    }

    pub(super) fn new_job(&mut self, req: RequestId, kind: Kind, prio: Priority) -> Option<JobId> {
        let r = self.requests.get_mut(&req)?;
        let id = JobId(self.next_job);
        self.next_job += 1;
        r.jobs.insert(id);
        if let Some(p) = kind.single().and_then(|seq| r.lines.get_mut(seq)) {
            p.jobs.insert(id);
        }
        let table = r.table.clone();
        self.queue.insert(&table, prio, id);
        self.jobs
            .insert(id, JobState::queued(req, table, kind, prio));
        self.counters.jobs_created += 1;
        Some(id)
    }

    /// Forgets a job everywhere but on its executor (the caller frees or cancels that).
    pub(super) fn remove_job(&mut self, id: JobId) -> Option<JobState> {
        self.asking.remove(&id);
        let j = self.jobs.remove(&id)?;
        self.queue.remove(&j.table, j.prio, id);
        self.verify.queue.remove(&(j.prio, id));
        if let Some(r) = self.requests.get_mut(&j.req) {
            r.jobs.remove(&id);
            if let Some(p) = j.kind.single().and_then(|seq| r.lines.get_mut(seq)) {
                p.jobs.remove(id);
            }
        }
        Some(j)
    }

    /// Puts a job back in the queue for its next attempt.
    pub(super) fn requeue(&mut self, id: JobId) {
        self.asking.remove(&id);
        if self.jobs.get(&id).is_some_and(|j| j.handed.is_some()) {
            self.counters.requeued += 1;
            self.remake_handed(id);
            return;
        }
        let Some(j) = self.jobs.get_mut(&id) else {
            return;
        };
        let lease = j.lease.take();
        if matches!(j.kind, Kind::Check { .. }) {
            self.verify.queue.insert((j.prio, id));
        } else {
            self.queue.insert(&j.table, j.prio, id);
        }
        self.counters.requeued += 1;
        if let Some(exec) = lease {
            self.free_slot(exec, id);
        }
    }

    pub(super) fn pos_mut(&mut self, key: PosKey) -> Option<&mut Pos> {
        self.requests.get_mut(&key.req)?.lines.get_mut(key.seq)
    }

    pub(super) fn pos(&self, key: PosKey) -> Option<&Pos> {
        self.requests.get(&key.req)?.lines.get(key.seq)
    }

    /// The input line of a position in flight (0 once it is gone: for the log).
    pub(super) fn line_of(&self, key: PosKey) -> u64 {
        self.pos(key).map_or(0, |p| p.line)
    }

    /// Cuts the ungrouped two-phase positions of `req` into jobs (a last partial one
    /// too).
    pub(super) fn group(&mut self, req: RequestId) {
        let batch_size = self.cfg.batch_size.max(1);
        let Some(r) = self.requests.get_mut(&req) else {
            return;
        };
        if r.ungrouped.is_empty() {
            return;
        }
        let mut seqs = std::mem::replace(
            &mut r.ungrouped,
            Vec::with_capacity(batch_size.min(MAX_PREALLOC)),
        );
        while !seqs.is_empty() {
            let rest = seqs.split_off(batch_size.min(seqs.len()));
            let first = seqs.first().copied().unwrap_or_default();
            self.new_job(req, Kind::Batch { seqs }, (req, first, 0, 0));
            seqs = rest;
        }
    }

    pub(super) fn dispatch(&mut self) {
        // Idle capacity with nothing queued: flush partial two-phase groups, and start
        // the next depth of split positions early.
        if self.queue.len() < self.executors.free_slots() {
            let reqs: Vec<RequestId> = self
                .requests
                .iter()
                .filter(|(_, r)| !r.ungrouped.is_empty())
                .map(|(&id, _)| id)
                .collect();
            for req in reqs {
                self.group(req);
            }
            if self.cfg.early_start && self.queue.len() < self.executors.free_slots() {
                self.start_early();
            }
            self.settle_orphan_checks();
            self.vouch_on_idle();
        }
        // Fill executors with room, round-robin in id order, one job each per round:
        // first the threads without a job (a job sent there starts at once), then the
        // room executors keep for jobs queued ahead.
        self.fill(true);
        self.fill(false);
        self.fill_past_deeper();
        self.ask_handbacks();
    }

    /// One filling pass over the executors with an idle thread (`idle`) or with room.
    fn fill(&mut self, idle: bool) {
        let mut cursor = None;
        let mut progressed = false;
        while !self.queue.is_empty() || !self.verify.queue.is_empty() {
            let next = match idle {
                true => self.executors.next_with_idle(cursor),
                false => self.executors.next_with_room(cursor),
            };
            let Some(exec) = next else {
                if !progressed {
                    break;
                }
                progressed = false;
                cursor = None;
                continue;
            };
            cursor = Some(exec);
            let Some(e) = self.executors.get(exec) else {
                continue;
            };
            let regular = self.queue.best_for(&e.tables);
            let check = match self.verify.queue.is_empty() {
                true => None,
                false => self.check_for(exec),
            };
            let Some((prio, id)) = regular.into_iter().chain(check).min() else {
                continue;
            };
            progressed |= self.send(prio, id, exec);
        }
    }

    /// Takes queued job `id` (of priority `prio`) out of the queue and sends it to `exec`:
    /// whether it went.
    pub(super) fn send(&mut self, prio: Priority, id: JobId, exec: ExecutorId) -> bool {
        if let Some(j) = self.jobs.get(&id) {
            self.queue.remove(&j.table, prio, id);
        }
        self.verify.queue.remove(&(prio, id));
        match self.materialise(id, exec) {
            Some(job) => {
                self.actions.push(Action::Dispatch { to: exec, job });
                true
            }
            None => false,
        }
    }

    /// Builds the wire job for the next attempt of `id` on `exec`, and leases it.
    pub(super) fn materialise(&mut self, id: JobId, exec: ExecutorId) -> Option<Job> {
        let now = self.now;
        let j = self.jobs.get(&id)?;
        let req = self.requests.get(&j.req)?;
        let settings = &req.settings;
        let item = |seq: u64| {
            req.lines.get(seq).map(|p| BatchItem {
                line: p.line,
                position: p.position,
            })
        };
        // The time a position has left of its limit, from its first dispatch.
        let time_left = |p: &Pos| {
            settings.time_limit_ms.map(|l| {
                let spent = now.saturating_sub(p.started.unwrap_or(now)) / 1000;
                l.saturating_sub(spent).max(1)
            })
        };
        let work = match &j.kind {
            Kind::Batch { seqs } => Work::Batch {
                settings: settings.clone(),
                items: seqs.iter().filter_map(|&seq| item(seq)).collect(),
            },
            Kind::Shallow { seq, cap } => {
                let p = req.lines.get(*seq)?;
                let mut searched = deepen::resumed_settings(settings, p.proved_empty);
                if p.earlier != (0, 0) {
                    // A later whole job: the time its position has left.
                    searched.time_limit_ms = time_left(p);
                }
                Work::Batch {
                    settings: deepen::shallow_settings(&searched, cap.saturating_add(1)),
                    items: item(*seq).into_iter().collect(),
                }
            }
            Kind::Subtrees {
                seq,
                depth,
                prefixes,
                pieces,
            } => {
                let p = req.lines.get(*seq)?;
                let deep = &p.split.as_ref()?.deep;
                let time_limit_ms = time_left(p);
                let moves: Vec<Vec<Move>> = prefixes
                    .iter()
                    .filter_map(|&i| super::cut::unit_moves(deep.prefixes().list(), i))
                    .collect();
                let max_solutions = deep.remaining(settings, *depth).map(|n| n as u32);
                let all = max_solutions.is_none();
                let split =
                    super::handback::sends_split(&self.cfg, all, prefixes, &moves, *depth, *pieces);
                Work::Subtrees(SubtreeWork {
                    position: p.position,
                    depth: *depth,
                    prefixes: moves,
                    max_solutions,
                    time_limit_ms,
                    pieces: *pieces,
                    split,
                })
            }
            Kind::Check { check, .. } => self.check_work(*check)?,
        };
        let sent = (!matches!(j.kind, Kind::Check { .. }) && self.checks_claims_of(exec))
            .then(|| Box::new(work.clone()));
        let split = matches!(&work, Work::Subtrees(w) if w.split);
        let early = match &j.kind {
            Kind::Subtrees { seq, depth, .. } => (req.lines.get(*seq))
                .and_then(|p| p.split.as_ref())
                .is_some_and(|s| *depth > s.deep.current()),
            _ => false,
        };
        let attempt = j.attempt.saturating_add(1);
        let job = Job {
            id,
            attempt,
            table: j.table.clone(),
            work,
        };
        // Leased from here on.
        let j = self.jobs.get_mut(&id)?;
        j.attempt = attempt;
        j.lease = Some(exec);
        j.dispatched = now;
        self.straggler_floor =
            (self.straggler_floor).min(tail::straggler_from(now, j.predicted_us));
        j.listed = now;
        j.asked = false;
        j.reasked = false;
        j.early = early;
        j.split = split;
        j.sent = sent;
        if let Some(r) = self.requests.get_mut(&j.req) {
            for &seq in j.kind.seqs() {
                if let Some(p) = r.lines.get_mut(seq) {
                    p.started.get_or_insert(now);
                }
            }
        }
        self.executors.update(exec, |e| {
            if e.running.is_empty() {
                e.lease_renewed = now;
            }
            e.running.insert(id);
        });
        self.counters.dispatched += 1;
        Some(job)
    }
}
