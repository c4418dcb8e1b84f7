//! What a decided check leaves: an honest executor vouched for, a liar distrusted and
//! its positions searched again, records held until their claims are checked.

use super::*;

impl Scheduler {
    /// Executor `e` was honest at its answer `seq`: positions waiting for that go on.
    pub(in crate::scheduler) fn vouch(&mut self, e: ExecutorId, seq: u64) {
        self.verify.standing(e).matched += 1;
        self.vouch_to(e, seq);
    }

    /// Records of `e`'s claims up to `seq` wait for it no more (vouched for, or no
    /// executor is left that could).
    fn vouch_to(&mut self, e: ExecutorId, seq: u64) {
        let s = self.verify.standing(e);
        s.vouched = s.vouched.max(seq);
        let vouched = s.vouched;
        let Some(w) = self.verify.waiting.get_mut(&e) else {
            return;
        };
        let later = w.split_off(&(
            vouched.saturating_add(1),
            PosKey {
                req: RequestId(0),
                seq: 0,
            },
        ));
        let ready = std::mem::replace(w, later);
        if w.is_empty() {
            self.verify.waiting.remove(&e);
        }
        for (_, key) in ready {
            self.try_release(key);
        }
    }

    /// Executor `e` lied (its answer disagreed with two that agreed, or held a wrong
    /// solution): it gets no more work, and every open position it claimed something
    /// about is searched again without it.
    pub(in crate::scheduler) fn liar(&mut self, e: ExecutorId) {
        if self.executors.get(e).is_some_and(|x| x.trusted) {
            return;
        }
        let first = !self.is_distrusted(e);
        self.distrust(e);
        if !first {
            return;
        }
        self.counters.liars += 1;
        self.verify.waiting.remove(&e);
        let keys: Vec<PosKey> = (self.requests.iter())
            .flat_map(|(&req, r)| {
                r.lines
                    .iter_open()
                    .filter(|(_, p)| p.claims.as_ref().is_some_and(|c| c.by.contains_key(&e)))
                    .map(move |(seq, _)| PosKey { req, seq })
            })
            .collect();
        for key in keys {
            self.restart(key);
        }
        // Its own claims' checks decide nothing any more.
        let moot: Vec<u64> = (self.verify.checks.iter())
            .filter(|(_, c)| c.claimer == e && c.answers.len() < 2)
            .map(|(&id, _)| id)
            .collect();
        for id in moot {
            self.verify.checks.remove(&id);
        }
    }

    /// Searches an open position again from the start (the client's hint): an executor
    /// that claimed something about it lied. Its record, if held, is forgotten.
    pub(in crate::scheduler) fn restart(&mut self, key: PosKey) {
        self.counters.restarted_positions += 1;
        self.drop_jobs_of(key);
        let cap = self.cfg.split_depth.saturating_sub(1);
        let Some(r) = self.requests.get_mut(&key.req) else {
            return;
        };
        r.split.remove(&key.seq);
        let Some(p) = r.lines.get_mut(key.seq) else {
            return;
        };
        p.split = None;
        p.claims = None;
        p.proved_empty = p.hint;
        self.deadlines.retain(|&(_, k)| k != key);
        for c in self.verify.checks.values_mut().filter(|c| c.key == key) {
            c.holds = false;
        }
        for w in self.verify.waiting.values_mut() {
            w.retain(|&(_, k)| k != key);
        }
        self.new_job(
            key.req,
            Kind::Shallow { seq: key.seq, cap },
            (key.req, key.seq, 0, 0),
        );
    }

    /// A position's record is known: whether it must wait for its claims (it is then
    /// kept until they are checked).
    pub(in crate::scheduler) fn hold(
        &mut self,
        key: PosKey,
        outcome: &mut Option<Result<Solved, RecordError>>,
    ) -> bool {
        if !matches!(outcome, Some(Ok(_))) {
            return false;
        }
        let Some(p) = self.pos_mut(key) else {
            return false;
        };
        let Some(c) = p.claims.as_mut() else {
            return false;
        };
        c.held = outcome.take();
        self.deadlines.retain(|&(_, k)| k != key);
        self.try_release(key);
        true
    }

    /// Releases a held record whose claims are all checked and whose claimers are all
    /// vouched for; registers it with those it waits for otherwise.
    pub(in crate::scheduler) fn try_release(&mut self, key: PosKey) {
        let Some(p) = self.pos(key) else { return };
        let Some(c) = p.claims.as_ref() else { return };
        if c.held.is_none() || c.pending > 0 {
            return;
        }
        let unvouched: Vec<(ExecutorId, u64)> = (c.by.iter())
            .map(|(&e, cl)| (e, cl.seq))
            .filter(|&(e, seq)| self.verify.standing.get(&e).is_none_or(|s| s.vouched < seq))
            .collect();
        if !unvouched.is_empty() {
            for (e, seq) in unvouched {
                self.verify.waiting.entry(e).or_default().insert((seq, key));
            }
            return;
        }
        let outcome = (self.pos_mut(key))
            .and_then(|p| p.claims.take())
            .and_then(|c| c.held);
        if let Some(outcome) = outcome {
            self.finish(key, outcome);
        }
    }

    /// Idle slots vouch for executors whose claims hold records back, one check each at
    /// a time: of its newest such claim.
    pub(in crate::scheduler) fn vouch_on_idle(&mut self) {
        if self.verify.waiting.is_empty() || self.queue.len() >= self.executors.free_slots() {
            return;
        }
        let due: Vec<(ExecutorId, u64, PosKey)> = (self.verify.waiting.iter())
            .filter(|(e, _)| self.verify.standing.get(e).is_none_or(|s| !s.vouching))
            .filter_map(|(&e, w)| w.last().map(|&(seq, key)| (e, seq, key)))
            .collect();
        for (e, seq, key) in due {
            let Some(claim) = (self.pos_mut(key))
                .and_then(|p| p.claims.as_ref())
                .and_then(|c| c.by.get(&e))
                .filter(|cl| cl.seq == seq)
                .map(|cl| (cl.work.clone(), cl.print.clone()))
            else {
                continue;
            };
            let Some(table) = self.requests.get(&key.req).map(|r| r.table.clone()) else {
                continue;
            };
            if !self.checker_exists(&table, &[e]) {
                // No executor is left to check it: unless every claim must be, the
                // record goes as the claim left it.
                if self.cfg.verify.mode != super::VerifyMode::Every {
                    self.counters.unverifiable_claims += 1;
                    self.vouch_to(e, seq);
                }
                continue;
            }
            self.verify.standing(e).vouching = true;
            self.counters.vouch_checks += 1;
            self.open_check(key, &table, e, seq, claim.0, claim.1, false, true);
        }
    }

    /// Queued checks that no executor left can run (every other one answered it, could
    /// not, or is gone or distrusted) are given up, unless every claim must be checked:
    /// the records they held go as their claims left them.
    pub(in crate::scheduler) fn settle_orphan_checks(&mut self) {
        if self.verify.queue.is_empty() || self.cfg.verify.mode == super::VerifyMode::Every {
            return;
        }
        let orphans: Vec<(JobId, u64)> = (self.verify.queue.iter())
            .filter_map(|&(_, job)| match self.jobs.get(&job)?.kind {
                Kind::Check { check, .. } => Some((job, check)),
                _ => None,
            })
            .filter(|&(_, check)| {
                self.verify.checks.get(&check).is_some_and(|c| {
                    let mut not: Vec<ExecutorId> = c.answers.iter().map(|a| a.0).collect();
                    not.extend(&c.excluded);
                    !self.checker_exists(&c.table, &not)
                })
            })
            .collect();
        for (job, check) in orphans {
            self.remove_job(job);
            self.counters.unverifiable_claims += 1;
            if let Some(c) = self.verify.checks.remove(&check) {
                self.close_check(&c);
            }
        }
    }
}
