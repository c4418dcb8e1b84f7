//! The embedded default: one request over in-process executors, through the one
//! [`Driver`]. A reader thread streams the input into the driver's event stream within a
//! window of lines in flight; records go to the caller's sink in input order. The driver
//! runs on the calling thread, which a caller may take back early ([`Interrupt`]).

use crate::driver::{
    run_loop, ClientKey, Driver, DriverConfig, Event, Line, Open, RequestError, RequestProgress,
    RequestSink,
};
use crate::executor::{Executor, ExecutorId};
use crate::input::{read_lines, window, InputLine, Window};
use crate::scheduler::{Config, Counters};
use proto::{Job, JobId, Record, Settings};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

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
    /// The caller's [`Interrupt`] stopped the run.
    #[error("interrupted")]
    Interrupted,
}

/// How a caller takes its thread back from a run: `stop` is asked about every `every`
/// while the run waits for its executors. Once it says so, the request ends as one whose
/// client went away (what runs is cancelled) and the run fails with
/// [`RunError::Interrupted`] (a Python call polls for Ctrl-C this way).
pub struct Interrupt<'a> {
    /// How often `stop` is asked.
    pub every: Duration,
    /// Whether to stop now.
    pub stop: &'a mut dyn FnMut() -> bool,
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

/// The executors of a run and the event stream their results arrive on.
pub struct Executors {
    /// The executors, by id.
    pub executors: BTreeMap<ExecutorId, Box<dyn Executor + Send>>,
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

/// The one request of an embedded run.
const KEY: ClientKey = ClientKey(1);

/// An executor of the caller's pool, lent to the driver for one run.
struct BorrowedExecutor<'a>(&'a (dyn Executor + Send));

impl Executor for BorrowedExecutor<'_> {
    fn capacity(&self) -> usize {
        self.0.capacity()
    }
    fn tables(&self) -> Vec<String> {
        self.0.tables()
    }
    fn submit(&self, job: Job) {
        self.0.submit(job)
    }
    fn cancel(&self, job: JobId) {
        self.0.cancel(job)
    }
    fn name(&self) -> String {
        self.0.name()
    }
    fn trusted(&self) -> bool {
        self.0.trusted()
    }
}

/// What the run's sink saw.
#[derive(Default)]
struct Seen {
    records: u64,
    errors: u64,
    end: Option<Result<(), RequestError>>,
    interrupted: bool,
}

/// The caller's sink as the request's sink: records in order, room in the window, and
/// the caller's [`Interrupt`] asked at each progress.
struct CallerSink<'a> {
    sink: &'a mut dyn FnMut(Record) -> std::io::Result<()>,
    window: std::sync::Arc<Window>,
    seen: &'a RefCell<Seen>,
    stop: Option<&'a mut dyn FnMut() -> bool>,
}

impl RequestSink for CallerSink<'_> {
    fn record(&mut self, r: Record) -> std::io::Result<()> {
        let mut seen = self.seen.borrow_mut();
        seen.records += 1;
        if r.outcome.is_err() {
            seen.errors += 1;
        }
        (self.sink)(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.window.release(self.seen.borrow().records);
        Ok(())
    }

    fn progress(&mut self, _p: &RequestProgress) -> std::io::Result<()> {
        if !self.stop.as_mut().is_some_and(|stop| stop()) {
            return Ok(());
        }
        self.seen.borrow_mut().interrupted = true;
        Err(std::io::Error::other("interrupted"))
    }

    fn end(&mut self, how: Result<(), RequestError>) {
        self.window.close();
        self.seen.borrow_mut().end = Some(how);
    }
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
    run_interruptible(cfg, pool, settings, table, source, sink, None)
}

/// [`run()`], which `interrupt` may stop early.
pub fn run_interruptible<R: BufRead + Send>(
    cfg: Config,
    pool: &Executors,
    settings: Settings,
    table: String,
    source: Source<R>,
    sink: &mut dyn FnMut(Record) -> std::io::Result<()>,
    mut interrupt: Option<Interrupt<'_>>,
) -> Result<RunStats, RunError> {
    let start = Instant::now();
    let clock = || start.elapsed().as_micros() as u64;
    let slots: usize = pool.executors.values().map(|e| e.capacity()).sum();
    let win = Window::new(window(&cfg, &settings, slots));
    let seen = RefCell::new(Seen::default());
    let every = interrupt
        .as_ref()
        .map(|i| u64::try_from(i.every.as_micros()).unwrap_or(u64::MAX));
    let mut driver = Driver::new(DriverConfig {
        scheduler: cfg,
        progress_every_us: every.map(|us| us.max(1)),
        ..DriverConfig::default()
    });
    for (&id, e) in &pool.executors {
        driver.join(id, Box::new(BorrowedExecutor(e.as_ref())));
    }
    driver.open(
        KEY,
        Open {
            settings,
            table,
            sink: Box::new(CallerSink {
                sink,
                window: win.clone(),
                seen: &seen,
                stop: interrupt
                    .as_mut()
                    .map(|i| &mut *i.stop as &mut dyn FnMut() -> bool),
            }),
            wait_for_executors_us: None,
        },
    );
    let looped = std::thread::scope(|scope| {
        let reader_win = win.clone();
        let reader_tx = pool.tx.clone();
        match source {
            // One position needs no reader thread (the window always has room for one).
            Source::One(line) => {
                let _ = reader_tx.send(Event::Lines(KEY, vec![Line::from(line)]));
                let _ = reader_tx.send(Event::End(KEY));
            }
            source => {
                scope.spawn(move || read_into(source, &reader_win, &reader_tx));
            }
        }
        let r = run_loop(&mut driver, &pool.events, &clock, &mut |_| {}, &mut |_| {
            seen.borrow().end.is_some()
        });
        win.close();
        r
    });
    // Whatever still runs is of no use any more.
    driver.handle(Event::ClientGone(KEY), clock());
    driver.step(clock());
    let counters = driver.scheduler().counters();
    drop(driver);
    let seen = seen.into_inner();
    let stats = RunStats {
        records: seen.records,
        errors: seen.errors,
        seconds: start.elapsed().as_secs_f64(),
        counters,
    };
    if seen.interrupted {
        return Err(RunError::Interrupted);
    }
    match (looped, seen.end) {
        (_, Some(Ok(()))) => Ok(stats),
        (_, Some(Err(RequestError::Input(e)))) => Err(RunError::Input(e)),
        (_, Some(Err(RequestError::Output(e)))) => Err(RunError::Output(e)),
        (_, Some(Err(RequestError::NoExecutorForTable { table }))) => {
            Err(RunError::NoExecutorForTable(table))
        }
        (_, Some(Err(_))) | (Err(_), None) | (Ok(()), None) => Err(RunError::Disconnected),
    }
}

/// The reader thread: `source` into the event stream, within the window.
fn read_into<R: BufRead>(source: Source<R>, win: &Window, tx: &Sender<Event>) {
    let mut sent = 0u64;
    let mut emit = |line: InputLine| {
        if !win.wait_for_room(sent) {
            return false;
        }
        sent += 1;
        tx.send(Event::Lines(KEY, vec![Line::from(line)])).is_ok()
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
                if !win.wait_for_room(sent) {
                    break;
                }
                sent += n;
                let lines = batch.into_iter().map(Line::from).collect();
                if tx.send(Event::Lines(KEY, lines)).is_err() {
                    break;
                }
            }
            Ok(())
        }
    };
    let _ = tx.send(match r {
        Ok(()) => Event::End(KEY),
        Err(e) => Event::InputFailed(KEY, e),
    });
}
