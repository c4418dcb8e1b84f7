//! A request's life in the scheduler: opened, fed lines (resume hints included), ended,
//! its records released in input order, closed.

use super::*;

impl Scheduler {
    /// Opens a request: positions of one input, all with `settings`, needing `table`.
    pub fn open_request(&mut self, settings: Settings, table: String) -> RequestId {
        let id = RequestId(self.next_request);
        self.next_request += 1;
        self.requests.insert(
            id,
            Request {
                settings,
                table,
                lines: InFlight::default(),
                ungrouped: Vec::new(),
                jobs: BTreeSet::new(),
                split: BTreeSet::new(),
                input_done: false,
            },
        );
        id
    }

    /// Adds one input line: a position to solve, or the error that the line is not one
    /// (which becomes its record at once).
    pub fn push_line(
        &mut self,
        req: RequestId,
        line: u64,
        input: String,
        parsed: Result<Position, RecordError>,
    ) {
        self.push_line_resumed(req, line, input, parsed, None);
    }

    /// Adds one input line, as [`push_line`](Self::push_line), with a resume hint for an
    /// optimal position: every length up to `proved_empty` is already known to have no
    /// solution (a client that lost the coordinator mid-search sends the deepest length
    /// it saw proved empty). Deepening starts past it (the shallow job only computes the
    /// lower bound when the hint reaches `split_depth - 1`), and the record is a fresh
    /// search's (same solutions, same `optimal` flag) but for nodes and time, with
    /// `depth_exhausted` at least the hint. A hint at or beyond `max_length` gives the
    /// record "no solution within `max_length`" at once. Ignored for two-phase.
    pub fn push_line_resumed(
        &mut self,
        req: RequestId,
        line: u64,
        input: String,
        parsed: Result<Position, RecordError>,
        proved_empty: Option<u8>,
    ) {
        let batch_size = self.cfg.batch_size.max(1);
        let Some(r) = self.requests.get_mut(&req) else {
            return;
        };
        let position = match parsed {
            Ok(p) => p,
            Err(e) => {
                r.lines.push_ready(Record {
                    line,
                    input,
                    outcome: Err(e),
                });
                return;
            }
        };
        let proved_empty = match r.settings.method {
            Method::Optimal => proved_empty,
            Method::TwoPhase => None,
        };
        if proved_empty.is_some_and(|d| d >= r.settings.max_length) {
            let outcome = Ok(deepen::nothing_within(&r.settings));
            r.lines.push_ready(Record {
                line,
                input,
                outcome,
            });
            return;
        }
        let seq = r.lines.push_open(Pos {
            line,
            input,
            position,
            started: None,
            jobs: JobSet::Empty,
            split: None,
            proved_empty,
            earlier: (0, 0),
            hint: proved_empty,
            claims: None,
        });
        match r.settings.method {
            Method::TwoPhase => {
                r.ungrouped.push(seq);
                if r.ungrouped.len() >= batch_size {
                    self.group(req);
                }
            }
            Method::Optimal => {
                let cap = self.cfg.split_depth.saturating_sub(1);
                self.new_job(req, Kind::Shallow { seq, cap }, (req, seq, 0, 0));
            }
        }
    }

    /// No more lines will come for `req`.
    pub fn end_input(&mut self, req: RequestId) {
        if let Some(r) = self.requests.get_mut(&req) {
            r.input_done = true;
        }
        self.group(req);
    }

    /// Records of `req` ready for release, in input order.
    pub fn take_records(&mut self, req: RequestId) -> Vec<Record> {
        std::iter::from_fn(|| self.next_record(req)).collect()
    }

    /// The next record of `req`, if it is ready for release (records come in input
    /// order).
    pub fn next_record(&mut self, req: RequestId) -> Option<Record> {
        let rec = self.requests.get_mut(&req)?.lines.pop_ready()?;
        self.counters.records += 1;
        Some(rec)
    }

    /// Whether every line of `req` has been released.
    pub fn is_done(&self, req: RequestId) -> bool {
        self.requests
            .get(&req)
            .is_none_or(|r| r.input_done && r.lines.len() == 0)
    }

    /// Forgets `req`, cancelling whatever of it still runs.
    pub fn close_request(&mut self, req: RequestId) {
        let Some(r) = self.requests.remove(&req) else {
            return;
        };
        for id in r.jobs {
            let Some(j) = self.jobs.remove(&id) else {
                continue;
            };
            self.queue.remove(&j.table, j.prio, id);
            self.verify.queue.remove(&(j.prio, id));
            if let Some(exec) = j.lease {
                self.free_slot(exec, id);
                self.actions.push(Action::Cancel { on: exec, job: id });
            }
        }
        self.deadlines.retain(|&(_, key)| key.req != req);
        self.verify.forget_request(req);
    }

    /// What the driver must do now: dispatches to free executors, cancellations.
    pub fn take_actions(&mut self) -> Vec<Action> {
        self.dispatch();
        std::mem::take(&mut self.actions)
    }
}
