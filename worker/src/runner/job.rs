//! [`run_job`] and its variants: one job on the calling thread, one result back.

use super::engines::Engines;
use super::options::RunnerOptions;
use super::pieces::PieceCursor;
use super::subtrees::{run_subtrees, Searcher};
use crate::stop::deadline_after;
use crate::{Error, StopToken};
use proto::{
    Internal, Job, JobError, JobOutput, JobResult, Method, PositionAnswer, PositionError, Work,
};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tables::tablefile::TableFileError;

/// Microseconds since `start`.
pub(super) fn micros_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The job error for an engine error: each failure as what it is.
fn job_error(e: Error) -> JobError {
    match e {
        Error::Verification { moves } => JobError::Verification { moves },
        Error::Settings(s) => JobError::InvalidSettings(s),
        Error::Table(TableFileError::Io { path, error }) => JobError::TableUnreadable {
            path: path.display().to_string(),
            reason: error.to_string(),
        },
        Error::Table(other) => {
            // Every other table file error is "<path>: <what is wrong>".
            let text = other.to_string();
            let (path, reason) = text.split_once(": ").unwrap_or(("", &text));
            JobError::TableDamaged {
                path: path.to_string(),
                reason: reason.to_string(),
            }
        }
        Error::TableNotFound { name, dir } => JobError::TableUnreadable {
            path: dir.join(name).display().to_string(),
            reason: "not found".to_string(),
        },
        Error::Io { path, error } => JobError::TableUnreadable {
            path: path.display().to_string(),
            reason: error.to_string(),
        },
        Error::BadTable { name, reason } => JobError::TableDamaged { path: name, reason },
        // Only `tables build --base` chooses a base; a job never does.
        Error::BadBase { name, base } => JobError::TableUnreadable {
            path: name.clone(),
            reason: Error::BadBase { name, base }.to_string(),
        },
        Error::UnknownTable(name) => JobError::MissingTable { name },
        Error::NotEnoughMemory {
            name,
            needed,
            available,
        } => JobError::TableUnreadable {
            path: name,
            reason: format!("needs about {needed} bytes of memory, only {available} available"),
        },
        Error::Threads(e) => JobError::Internal(Internal::Threads {
            reason: e.to_string(),
        }),
    }
}

/// The error of a caught panic, with its message when it has one.
pub(super) fn panic_error(payload: &(dyn Any + Send)) -> JobError {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a text message)".to_string()
    };
    JobError::Internal(Internal::Panic { message })
}

/// Runs `job` on the calling thread with the engines of `engines`, stopping early when
/// `stop` says so, and returns its result (never panics on a bad job: a job that cannot
/// run is an `Err` output).
///
/// - [`Work::Batch`]: the items are solved in order, each on its own budget
///   (`settings.time_limit_ms` from that item's start). Cancellation stops the job: the
///   item running reports what it found with [`proto::Stop::Cancelled`], the items not
///   started are not reported.
/// - [`Work::Subtrees`]: the job's pieces (its prefixes, or their extensions when it asks
///   for [`proto::pieces`]) are searched in their given order, three interleaved on this
///   thread, until `max_solutions` were found in the whole job (the job then hands out
///   no more pieces, and a subtree's solutions beyond the count are dropped, its stop
///   then [`proto::Stop::Completed`]) or the job's budget (`time_limit_ms` from its
///   start) runs out. One [`proto::SubtreeResult`] per prefix started, in prefix order,
///   its pieces merged (their solutions in piece order).
///
/// Errors of the whole job: [`JobError::MissingTable`] when `engines` lacks the table,
/// [`JobError::WrongTable`] when the table's method is not the one asked (a subtree job
/// needs an H48 table), [`JobError::InvalidSettings`] (the settings are validated here,
/// once, by [`proto::Settings::validate`]); for a subtree job also the errors below.
/// Errors of one batch position (the others are still solved): [`JobError::Verification`]
/// (a bug) when a solution does not solve its position, [`JobError::TableUnreadable`],
/// [`JobError::TableDamaged`], and [`JobError::Internal`] for a panic. Every solution
/// returned is verified against the position.
pub fn run_job(engines: &Engines, job: &Job, stop: &StopToken) -> JobResult {
    run_job_counted(engines, job, stop, &AtomicU64::new(0))
}

/// [`run_job`], adding the search nodes of each position or subtree to `nodes` as it
/// finishes, for progress reports while the job runs.
pub fn run_job_counted(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    nodes: &AtomicU64,
) -> JobResult {
    run_job_with(engines, job, stop, nodes, &RunnerOptions::default())
}

/// [`run_job_counted`] with `options` (the test seam).
pub fn run_job_with(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    nodes: &AtomicU64,
    options: &RunnerOptions,
) -> JobResult {
    run_job_split(engines, job, stop, nodes, options, &PieceCursor::default())
}

/// [`run_job_with`], a subtree job claiming its pieces through `cursor`: what it has not
/// claimed when [`PieceCursor::hand_back`] is called is not searched, and its result
/// lists the prefixes of the pieces it claimed (their last one maybe in part).
pub fn run_job_split(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    nodes: &AtomicU64,
    options: &RunnerOptions,
    cursor: &PieceCursor,
) -> JobResult {
    let start = Instant::now();
    let output = run_work(engines, job, stop, start, nodes, options, cursor);
    JobResult {
        id: job.id,
        attempt: job.attempt,
        micros: micros_since(start),
        output,
    }
}

/// The output of `job` (see [`run_job_split`]), `start` its start.
fn run_work(
    engines: &Engines,
    job: &Job,
    stop: &StopToken,
    start: Instant,
    nodes: &AtomicU64,
    options: &RunnerOptions,
    cursor: &PieceCursor,
) -> Result<JobOutput, JobError> {
    let engine = engines
        .get(&job.table)
        .ok_or_else(|| JobError::MissingTable {
            name: job.table.clone(),
        })?;
    let wrong = |method| JobError::WrongTable {
        name: job.table.clone(),
        method,
    };
    match &job.work {
        Work::Batch { settings, items } => {
            if engine.method() != settings.method {
                return Err(wrong(settings.method));
            }
            let settings = settings
                .clone()
                .validate()
                .map_err(JobError::InvalidSettings)?;
            let mut results: Vec<PositionAnswer> = Vec::with_capacity(items.len());
            for item in items {
                if stop.is_cancelled() {
                    break;
                }
                let t = Instant::now();
                let item_stop = stop.with_deadline(deadline_after(t, settings.time_limit_ms));
                let solved = catch_unwind(AssertUnwindSafe(|| {
                    options.before(&item.position);
                    engine.solve(&item.position, &settings, &item_stop)
                }));
                let answer = match solved {
                    Ok(Ok(mut r)) => {
                        nodes.fetch_add(r.nodes, Ordering::Relaxed);
                        r.line = item.line;
                        r.micros = micros_since(t);
                        Ok(r)
                    }
                    Ok(Err(e)) => Err(job_error(e)),
                    Err(payload) => Err(panic_error(payload.as_ref())),
                };
                results.push(answer.map_err(|error| PositionError {
                    line: item.line,
                    error,
                }));
            }
            Ok(JobOutput::Batch(results))
        }
        Work::Subtrees(work) => match Searcher::of(engine) {
            Some(solver) => {
                let stop = stop.with_deadline(deadline_after(start, work.time_limit_ms));
                catch_unwind(AssertUnwindSafe(|| {
                    options.before(&work.position);
                    run_subtrees(&solver, work, &stop, nodes, cursor)
                }))
                .unwrap_or_else(|payload| Err(panic_error(payload.as_ref())))
                .map(JobOutput::Subtrees)
            }
            None => Err(wrong(Method::Optimal)),
        },
    }
}
