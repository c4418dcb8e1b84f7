//! An established stream: jobs run on this connection's executor, results, cancellations,
//! heartbeats, and the drain on shutdown.

use super::delay::Inbound;
use super::{End, SessionOptions, WorkerError, CANCEL_WAIT};
use crate::remote::health::Health;
use crate::JobRunner;
use proto::wire::{self, coordinator_message, worker_message};
use proto::{Job, JobError, JobId, JobResult};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant, MissedTickBehavior};
use tonic::Code;

/// A drain under way.
pub(super) struct Drain {
    /// The process exits after it (a shutdown), rather than dialling again (a
    /// coordinator's Drain).
    exit: bool,
    /// When the running jobs are cancelled.
    grace_end: Instant,
    /// Once cancelled: when the worker stops waiting for their results.
    cancel_end: Option<Instant>,
}

/// One live connection.
pub(super) struct Conn<'a> {
    /// How the session runs (grace periods).
    pub(super) options: &'a SessionOptions,
    /// What the probes report.
    pub(super) health: &'a Health,
    /// Towards the coordinator (dropping it closes the worker's side).
    pub(super) out: mpsc::Sender<wire::WorkerMessage>,
    /// This connection's executor.
    pub(super) executor: JobRunner,
    /// The jobs submitted and not answered: (job, attempt) → submissions.
    pub(super) running: BTreeMap<(u64, u32), u32>,
    /// Set once draining.
    pub(super) drain: Option<Drain>,
}

/// The end for an error status from the coordinator.
pub(super) fn end_for(status: tonic::Status, welcomed: bool) -> End {
    match status.code() {
        Code::Unauthenticated | Code::PermissionDenied | Code::FailedPrecondition => {
            let message = if status.message().is_empty() {
                status.code().description().to_string()
            } else {
                status.message().to_string()
            };
            End::Fatal(WorkerError::Refused {
                code: status.code(),
                message,
            })
        }
        code => End::Lost {
            reason: format!("{}: {}", code.description(), status.message()),
            welcomed,
        },
    }
}

/// A worker message of `msg`.
pub(super) fn message(msg: worker_message::Msg) -> wire::WorkerMessage {
    wire::WorkerMessage { msg: Some(msg) }
}

/// What the connection loop does next.
enum Step {
    Go,
    Close,
    End(End),
}

impl Conn<'_> {
    /// Sends `msg`; `false` if the connection is gone.
    async fn send(&self, msg: worker_message::Msg) -> bool {
        self.out.send(message(msg)).await.is_ok()
    }

    fn lost(&self, reason: String) -> End {
        match &self.drain {
            Some(d) if d.exit => End::Exit,
            _ => End::Lost {
                reason,
                welcomed: true,
            },
        }
    }

    pub(super) async fn run<F: Future<Output = ()>>(
        &mut self,
        mut inbound: Inbound,
        mut results: mpsc::UnboundedReceiver<JobResult>,
        heartbeat: Duration,
        mut shutdown: Pin<&mut F>,
    ) -> End {
        let mut tick = tokio::time::interval_at(Instant::now() + heartbeat, heartbeat);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut shutdown_seen = false;
        loop {
            if self.drain.is_some() && self.running.is_empty() {
                return self.close(inbound).await;
            }
            let deadline = self
                .drain
                .as_ref()
                .map(|d| d.cancel_end.unwrap_or(d.grace_end));
            let step = tokio::select! {
                m = inbound.message() => match m {
                    Ok(Some(m)) => self.on_message(m).await,
                    Ok(None) => Step::End(self.lost("the coordinator closed the stream".into())),
                    Err(status) => Step::End(match end_for(status, true) {
                        End::Lost { reason, .. } => self.lost(reason),
                        other => other,
                    }),
                },
                Some(r) = results.recv() => self.on_result(r).await,
                _ = tick.tick() => self.heartbeat().await,
                _ = &mut shutdown, if !shutdown_seen => {
                    shutdown_seen = true;
                    tracing::info!("shutdown requested: draining");
                    self.health.set_draining();
                    self.start_drain(true).await
                }
                _ = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    self.on_deadline()
                }
            };
            match step {
                Step::Go => {}
                Step::Close => return self.close(inbound).await,
                Step::End(end) => return end,
            }
        }
    }

    async fn on_message(&mut self, m: wire::CoordinatorMessage) -> Step {
        use coordinator_message::Msg;
        match m.msg {
            Some(Msg::Job(job)) => self.on_job(job).await,
            Some(Msg::Cancel(c)) => {
                if !self.executor.cancel(JobId(c.job)) {
                    tracing::debug!(job = c.job, "cancel of a job not running here");
                }
                Step::Go
            }
            Some(Msg::Split(sj)) => {
                let (job, attempt) = (JobId(sj.job), sj.attempt);
                let (kept, split) = match self.executor.split(job, attempt) {
                    Some((kept, split)) => (Some(kept), split),
                    None => (None, Vec::new()),
                };
                tracing::debug!(
                    job = sj.job,
                    attempt,
                    ?kept,
                    running_split = split.len(),
                    "split asked: unstarted pieces handed back"
                );
                let h = proto::Handback {
                    job,
                    attempt,
                    kept,
                    split,
                };
                if self
                    .send(worker_message::Msg::Handback(wire::Handback::from(&h)))
                    .await
                {
                    Step::Go
                } else {
                    Step::End(
                        self.lost("the stream closed while handing back a job's pieces".into()),
                    )
                }
            }
            Some(Msg::Drain(_)) => {
                tracing::info!("the coordinator asks this worker to drain");
                self.start_drain(false).await
            }
            Some(Msg::Welcome(_)) => {
                tracing::debug!("a second Welcome, ignored");
                Step::Go
            }
            // A message of a later protocol revision.
            None => Step::Go,
        }
    }

    async fn on_job(&mut self, job: wire::Job) -> Step {
        let (id, attempt) = (job.id, job.attempt);
        tracing::debug!(job = id, attempt, table = %job.table, "job received");
        if self.drain.is_some() {
            // Not run: closing the stream hands it back.
            tracing::info!(job = id, attempt, "job declined while draining");
            return Step::Go;
        }
        match Job::try_from(job) {
            Ok(job) => {
                *self.running.entry((id, attempt)).or_default() += 1;
                self.executor.submit(job);
                Step::Go
            }
            Err(e) => {
                tracing::warn!(job = id, attempt, "undecodable job: {e}");
                let result = JobResult {
                    id: JobId(id),
                    attempt,
                    micros: 0,
                    output: Err(JobError::Undecodable {
                        reason: e.to_string(),
                    }),
                };
                self.send_result(&result).await
            }
        }
    }

    async fn on_result(&mut self, r: JobResult) -> Step {
        let key = (r.id.0, r.attempt);
        if let Some(n) = self.running.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.running.remove(&key);
            }
        }
        self.send_result(&r).await
    }

    async fn send_result(&self, r: &JobResult) -> Step {
        // The test seam that makes a worker a liar (`CUBESWARM_FAILPOINT=lie-empty`).
        static LIES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let lie;
        let r = match LIES.get_or_init(crate::failpoint::lies) {
            true => {
                lie = crate::failpoint::lie(r);
                &lie
            }
            false => r,
        };
        if self
            .send(worker_message::Msg::Result(wire::JobResult::from(r)))
            .await
        {
            Step::Go
        } else {
            Step::End(self.lost("the stream closed while sending a result".into()))
        }
    }

    async fn heartbeat(&self) -> Step {
        let running = self
            .running
            .keys()
            .map(|&(job, attempt)| wire::JobProgress {
                job,
                attempt,
                nodes: self.executor.nodes_so_far(JobId(job)).unwrap_or(0),
            })
            .collect();
        if self
            .send(worker_message::Msg::Heartbeat(wire::Heartbeat { running }))
            .await
        {
            Step::Go
        } else {
            Step::End(self.lost("the stream closed while sending a heartbeat".into()))
        }
    }

    /// Stops taking jobs: Draining and Capacity 0, then the grace period.
    async fn start_drain(&mut self, exit: bool) -> Step {
        if let Some(d) = &mut self.drain {
            d.exit |= exit;
            return Step::Go;
        }
        let grace = self.options.grace;
        self.drain = Some(Drain {
            exit,
            grace_end: Instant::now() + grace,
            cancel_end: None,
        });
        tracing::info!(
            running = self.running.len(),
            "draining: finishing running jobs within {grace:?}"
        );
        let grace_ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
        let sent = self
            .send(worker_message::Msg::Draining(wire::Draining { grace_ms }))
            .await
            && self
                .send(worker_message::Msg::Capacity(wire::Capacity { slots: 0 }))
                .await;
        if sent {
            Step::Go
        } else {
            Step::End(self.lost("the stream closed while draining".into()))
        }
    }

    /// The grace period ran out (cancel what runs), or the cancelled jobs took too long
    /// to report (close anyway).
    fn on_deadline(&mut self) -> Step {
        let Some(d) = &mut self.drain else {
            return Step::Go;
        };
        if d.cancel_end.is_none() {
            tracing::info!(
                running = self.running.len(),
                "grace period over: cancelling the running jobs"
            );
            d.cancel_end = Some(Instant::now() + CANCEL_WAIT);
            self.executor.cancel_all();
            Step::Go
        } else {
            tracing::warn!(
                running = self.running.len(),
                "cancelled jobs did not report in time; handing them back"
            );
            Step::Close
        }
    }

    /// Closes the worker's side of the stream and waits (briefly) for the coordinator to
    /// close its own, so that everything sent is delivered.
    async fn close(&mut self, mut inbound: Inbound) -> End {
        let (out, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.out, out));
        let wait = self.options.close_timeout;
        let until = Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(until, inbound.message()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None)) | Ok(Err(_)) => break,
                Err(_) => {
                    tracing::debug!("the coordinator did not close the stream within {wait:?}");
                    break;
                }
            }
        }
        let exit = self.drain.as_ref().is_some_and(|d| d.exit);
        if exit {
            tracing::info!("drained: stream closed");
            End::Exit
        } else {
            End::Lost {
                reason: "drained at the coordinator's request".into(),
                welcomed: true,
            }
        }
    }
}
