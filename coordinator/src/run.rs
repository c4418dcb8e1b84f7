//! The driver: one loop that feeds a [`Scheduler`] with input lines and executor events,
//! carries out its actions on the executors, and hands the records to a sink in input
//! order. The embedded default runs it with the in-process executor; the simulation tests
//! replace the clock and the executors.

use crate::executor::{Executor, ExecutorEvent, ExecutorId};
use crate::input::{read_lines, InputLine, Window};
use crate::scheduler::{Action, Config, Counters, Scheduler};
use proto::{Method, Record, Settings};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// What the driver waits on.
#[derive(Debug)]
pub enum Event {
    /// An executor reported.
    Executor(ExecutorEvent),
    /// A position line was read.
    Line(InputLine),
    /// Position lines were read, in input order.
    Lines(Vec<InputLine>),
    /// The input ended.
    InputEnd,
    /// The input could not be read.
    InputError(std::io::Error),
}

impl From<ExecutorEvent> for Event {
    fn from(e: ExecutorEvent) -> Self {
        Event::Executor(e)
    }
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Reading the input failed.
    #[error("reading the input: {0}")]
    Input(std::io::Error),
    /// Writing a record failed.
    #[error("writing the output: {0}")]
    Output(std::io::Error),
    /// No executor holds the table the work needs.
    #[error("no executor holds table {0}")]
    NoExecutorForTable(String),
    /// Every event source hung up before the work was done.
    #[error("the executors went away before the work was done")]
    Disconnected,
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    /// Records written.
    pub records: u64,
    /// Records that are errors.
    pub errors: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The scheduler's counters at the end.
    pub counters: Counters,
}

/// How many lines may be in flight (read, not yet released) for `settings` on `slots`
/// executor threads: enough to keep every thread busy, bounded whatever the input size.
pub fn window(cfg: &Config, settings: &Settings, slots: usize) -> u64 {
    let slots = slots.max(1) as u64;
    match settings.method {
        Method::TwoPhase => (cfg.batch_size.max(1) as u64 * slots * 4).max(256),
        Method::Optimal => slots * 4 + 4,
    }
}

/// The executors of a run and the event stream their results arrive on.
pub struct Executors {
    /// The executors, by id.
    pub executors: BTreeMap<ExecutorId, Box<dyn Executor>>,
    /// A sender into `events`, for the input reader.
    pub tx: Sender<Event>,
    /// Where results (and input lines) arrive.
    pub events: Receiver<Event>,
}

/// Where a run's positions come from.
pub enum Source<R> {
    /// Lines of a scramble set: blanks and `#` comments skipped, each other line a
    /// position with its line number.
    Lines(R),
    /// One position, already read (a command-line argument).
    One(InputLine),
    /// Lines already read and parsed elsewhere, in input order, in batches as they
    /// arrive (a network message, a generator): each batch goes to the driver whole, so
    /// a batch must not wait for lines still to come. The window of lines in flight may
    /// be overshot by up to one batch.
    Parsed(Box<dyn Iterator<Item = Vec<InputLine>> + Send>),
}

/// Solves every position of `source` (one request with `settings` on `table`) on
/// `pool`'s executors, and gives each record to `sink` in input order.
pub fn run<R: BufRead + Send>(
    cfg: Config,
    pool: &Executors,
    settings: Settings,
    table: String,
    source: Source<R>,
    sink: &mut dyn FnMut(Record) -> std::io::Result<()>,
) -> Result<RunStats, RunError> {
    let executors = &pool.executors;
    let events = &pool.events;
    let start = Instant::now();
    let now = || start.elapsed().as_micros() as u64;
    let slots: usize = executors.values().map(|e| e.capacity()).sum();
    let win = Window::new(window(&cfg, &settings, slots));
    let mut sched = Scheduler::new(cfg);
    for (&id, e) in executors {
        sched.add_executor(id, e.capacity(), e.tables());
    }
    let req = sched.open_request(settings, table.clone());
    let mut stats = RunStats::default();
    let result = std::thread::scope(|scope| {
        let reader_win = win.clone();
        let reader_tx = pool.tx.clone();
        scope.spawn(move || {
            let mut sent = 0u64;
            let mut emit = |line| {
                if !reader_win.wait_for_room(sent) {
                    return false;
                }
                sent += 1;
                reader_tx.send(Event::Line(line)).is_ok()
            };
            let r = match source {
                Source::Lines(input) => read_lines(input, emit),
                Source::One(line) => {
                    emit(line);
                    Ok(())
                }
                Source::Parsed(batches) => {
                    for batch in batches {
                        let n = batch.len() as u64;
                        if n == 0 {
                            continue;
                        }
                        if !reader_win.wait_for_room(sent) {
                            break;
                        }
                        sent += n;
                        if reader_tx.send(Event::Lines(batch)).is_err() {
                            break;
                        }
                    }
                    Ok(())
                }
            };
            let _ = reader_tx.send(match r {
                Ok(()) => Event::InputEnd,
                Err(e) => Event::InputError(e),
            });
        });
        let r = drive(
            &mut sched, req, executors, events, &now, &win, sink, &mut stats,
        );
        win.close();
        r
    });
    // Whatever still runs is of no use any more.
    for a in sched.take_actions() {
        if let Action::Cancel { on, job } = a {
            if let Some(e) = executors.get(&on) {
                e.cancel(job);
            }
        }
    }
    stats.seconds = start.elapsed().as_secs_f64();
    stats.counters = sched.counters();
    result.map(|()| stats)
}

#[allow(clippy::too_many_arguments)]
fn drive(
    sched: &mut crate::scheduler::Scheduler,
    req: crate::scheduler::RequestId,
    executors: &BTreeMap<ExecutorId, Box<dyn Executor>>,
    events: &Receiver<Event>,
    now: &dyn Fn() -> u64,
    win: &Window,
    sink: &mut dyn FnMut(Record) -> std::io::Result<()>,
    stats: &mut RunStats,
) -> Result<(), RunError> {
    let mut released = 0;
    loop {
        sched.tick(now());
        for a in sched.take_actions() {
            match a {
                Action::Dispatch { to, job } => {
                    if let Some(e) = executors.get(&to) {
                        e.submit(job);
                    }
                }
                Action::Cancel { on, job } => {
                    if let Some(e) = executors.get(&on) {
                        e.cancel(job);
                    }
                }
            }
        }
        while let Some(rec) = sched.next_record(req) {
            stats.records += 1;
            if rec.outcome.is_err() {
                stats.errors += 1;
            }
            sink(rec).map_err(RunError::Output)?;
        }
        if stats.records != released {
            released = stats.records;
            win.release(released);
        }
        if sched.is_done(req) {
            return Ok(());
        }
        if sched.is_stalled(req) {
            return Err(RunError::NoExecutorForTable(sched.table_of(req)));
        }
        let wait = sched.next_deadline().map_or(Duration::from_secs(1), |d| {
            Duration::from_micros(d.saturating_sub(now()))
        });
        let first = match events.recv_timeout(wait) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return Err(RunError::Disconnected),
        };
        // Take everything already waiting before acting again.
        let mut next = Some(first);
        while let Some(ev) = next {
            match ev {
                Event::Line(l) => sched.push_line(req, l.line, l.input, l.parsed),
                Event::Lines(ls) => {
                    for l in ls {
                        sched.push_line(req, l.line, l.input, l.parsed);
                    }
                }
                Event::InputEnd => sched.end_input(req),
                Event::InputError(e) => return Err(RunError::Input(e)),
                Event::Executor(ExecutorEvent::Result(from, r)) => {
                    sched.tick(now());
                    sched.on_result(from, r)
                }
                Event::Executor(ExecutorEvent::Gone(id)) => sched.remove_executor(id),
            }
            next = events.try_recv().ok();
        }
    }
}
