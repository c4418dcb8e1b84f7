//! The driver's request lifecycle, step by step with a hand-held clock: a request ends
//! with its client or a shutdown (its jobs dropped, whatever its kind), and a request no
//! executor can serve is refused at once, or after the wait its client asked for.

use crate::fake;

use coordinator::driver::{
    ClientKey, Driver, DriverConfig, Event, Line, Open, RequestError, RequestSink,
};
use coordinator::input::InputLine;
use coordinator::{Config, Executor, ExecutorEvent, ExecutorId};
use fake::TABLE;
use proto::{Job, JobId, Method, Record, Settings};
use std::cell::RefCell;
use std::rc::Rc;
use tables::Position;

/// What an executor was told, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Told {
    Job(JobId),
    Cancel(JobId),
}

struct Exec {
    table: &'static str,
    capacity: usize,
    told: Rc<RefCell<Vec<Told>>>,
}

impl Executor for Exec {
    fn capacity(&self) -> usize {
        self.capacity
    }
    fn tables(&self) -> Vec<String> {
        vec![self.table.to_string()]
    }
    fn submit(&self, job: Job) {
        self.told.borrow_mut().push(Told::Job(job.id));
    }
    fn cancel(&self, job: JobId) {
        self.told.borrow_mut().push(Told::Cancel(job));
    }
}

#[derive(Default)]
struct Seen {
    records: Vec<Record>,
    end: Option<Result<(), String>>,
}

struct Sink(Rc<RefCell<Seen>>);

impl RequestSink for Sink {
    fn record(&mut self, record: Record) -> std::io::Result<()> {
        self.0.borrow_mut().records.push(record);
        Ok(())
    }
    fn end(&mut self, how: Result<(), RequestError>) {
        self.0.borrow_mut().end = Some(how.map_err(|e| e.to_string()));
    }
}

fn driver(cfg: DriverConfig) -> Driver<'static> {
    Driver::new(DriverConfig {
        scheduler: Config {
            lease_us: Some(1_000_000),
            ..Config::default()
        },
        ..cfg
    })
}

fn exec(d: &mut Driver<'_>, id: u64, table: &'static str) -> Rc<RefCell<Vec<Told>>> {
    let told = Rc::new(RefCell::new(Vec::new()));
    d.join(
        ExecutorId(id),
        Box::new(Exec {
            table,
            capacity: 2,
            told: told.clone(),
        }),
    );
    told
}

fn open(d: &mut Driver<'_>, key: u64, method: Method, wait_us: Option<u64>) -> Rc<RefCell<Seen>> {
    let seen = Rc::new(RefCell::new(Seen::default()));
    d.open(
        ClientKey(key),
        Open {
            settings: Settings {
                method,
                ..Settings::default()
            },
            table: TABLE.into(),
            sink: Box::new(Sink(seen.clone())),
            wait_for_executors_us: wait_us,
        },
    );
    seen
}

fn lines(texts: &[&str]) -> Vec<Line> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Line {
            line: InputLine {
                line: i as u64 + 1,
                input: t.to_string(),
                parsed: Ok(Position::parse(t).expect("a position")),
            },
            proved_empty: None,
        })
        .collect()
}

fn jobs(told: &[Told]) -> Vec<JobId> {
    told.iter()
        .filter_map(|t| match t {
            Told::Job(j) => Some(*j),
            Told::Cancel(_) => None,
        })
        .collect()
}

/// A gone client's jobs: the running ones cancelled, the queued ones dropped, none sent
/// later, for an optimal search and a two-phase batch alike.
#[test]
fn a_request_ends_with_its_client_whatever_its_kind() {
    for method in [Method::Optimal, Method::TwoPhase] {
        let mut d = driver(DriverConfig::default());
        let told = exec(&mut d, 1, TABLE);
        let seen = open(&mut d, 7, method, None);
        let many: Vec<&str> = std::iter::repeat_n("R U F D L B R2 U'", 300).collect();
        d.handle(Event::Lines(ClientKey(7), lines(&many)), 10);
        d.handle(Event::End(ClientKey(7)), 10);
        d.step(20);
        let sent = jobs(&told.borrow());
        assert!(!sent.is_empty(), "{method:?}: no job sent");
        let (running, queued) = d.scheduler().job_counts();
        assert!(
            running > 0 && queued > 0,
            "{method:?}: {running} running, {queued} queued"
        );
        d.handle(Event::ClientGone(ClientKey(7)), 30);
        d.step(40);
        assert!(!d.has_request(ClientKey(7)));
        assert_eq!(d.scheduler().job_counts(), (0, 0), "{method:?}");
        let cancelled: Vec<JobId> = told
            .borrow()
            .iter()
            .filter_map(|t| match t {
                Told::Cancel(j) => Some(*j),
                Told::Job(_) => None,
            })
            .collect();
        let (mut cancelled, mut sent) = (cancelled, sent);
        cancelled.sort();
        sent.sort();
        assert_eq!(cancelled, sent, "{method:?}: every running job cancelled");
        // Nothing more is sent, whenever the executor asks.
        let before = told.borrow().len();
        d.handle(
            Event::Executor(ExecutorEvent::Heartbeat(ExecutorId(1), vec![])),
            50,
        );
        d.step(10_000_000);
        assert_eq!(told.borrow().len(), before, "{method:?}");
        assert_eq!(
            seen.borrow().end,
            Some(Err(RequestError::ClientGone.to_string()))
        );
    }
}

/// A shutdown ends every request and cancels what they run before it lets go of the
/// executors (an in-process search would run on for nothing).
#[test]
fn a_shutdown_cancels_what_its_requests_run() {
    let mut d = driver(DriverConfig::default());
    let told = exec(&mut d, 1, TABLE);
    let seen = open(&mut d, 7, Method::Optimal, None);
    d.handle(
        Event::Lines(ClientKey(7), lines(&["R U F D L B R2 U'"])),
        10,
    );
    d.handle(Event::End(ClientKey(7)), 10);
    d.step(20);
    let sent = jobs(&told.borrow());
    assert!(!sent.is_empty(), "no job sent");
    d.handle(Event::Shutdown, 30);
    assert!(d.is_shut_down());
    assert_eq!(d.executor_count(), 0);
    let cancelled: Vec<JobId> = told
        .borrow()
        .iter()
        .filter_map(|t| match t {
            Told::Cancel(j) => Some(*j),
            Told::Job(_) => None,
        })
        .collect();
    assert_eq!(cancelled, sent, "every running job cancelled");
    assert_eq!(
        seen.borrow().end,
        Some(Err(RequestError::ShuttingDown.to_string()))
    );
}

#[test]
fn a_request_no_executor_can_serve_is_refused_at_once() {
    let mut d = driver(DriverConfig::default());
    let _other = exec(&mut d, 1, "other");
    let seen = open(&mut d, 1, Method::Optimal, None);
    d.step(0);
    let want = RequestError::NoExecutorForTable {
        table: TABLE.into(),
    }
    .to_string();
    assert_eq!(seen.borrow().end, Some(Err(want)));
    assert!(!d.has_request(ClientKey(1)));
    // Its lines, had any come, would be dropped with it.
    d.handle(Event::Lines(ClientKey(1), lines(&["R U"])), 1);
    assert_eq!(d.scheduler().job_counts(), (0, 0));
}

#[test]
fn a_request_waits_for_an_executor_as_long_as_it_asked_and_no_longer() {
    // Nobody comes: refused when the wait is over, not a microsecond before.
    let mut d = driver(DriverConfig::default());
    let seen = open(&mut d, 1, Method::TwoPhase, Some(5_000));
    d.handle(Event::Lines(ClientKey(1), lines(&["R U"])), 0);
    d.step(0);
    assert_eq!(d.next_wakeup(), Some(5_000));
    d.step(4_999);
    assert!(seen.borrow().end.is_none());
    d.step(5_000);
    assert!(matches!(seen.borrow().end, Some(Err(_))));
    assert_eq!(d.scheduler().job_counts(), (0, 0));
    // An executor with the table joins within the wait: the request is served.
    let mut d = driver(DriverConfig::default());
    let seen = open(&mut d, 1, Method::TwoPhase, Some(5_000));
    d.handle(Event::Lines(ClientKey(1), lines(&["R U"])), 0);
    d.handle(Event::End(ClientKey(1)), 0);
    d.step(0);
    let told = exec(&mut d, 1, TABLE);
    d.step(3_000);
    let sent = jobs(&told.borrow());
    assert_eq!(sent.len(), 1);
    assert!(seen.borrow().end.is_none());
}

#[test]
fn a_young_coordinator_gives_its_workers_time_to_join_again() {
    let mut d = driver(DriverConfig {
        startup_grace_us: 2_000_000,
        ..DriverConfig::default()
    });
    let seen = open(&mut d, 1, Method::TwoPhase, None);
    d.step(1_999_999);
    assert!(seen.borrow().end.is_none());
    d.step(2_000_000);
    assert!(matches!(seen.borrow().end, Some(Err(_))));
}

#[test]
fn a_served_request_whose_last_executor_leaves_waits_a_lease_for_it() {
    let mut d = driver(DriverConfig::default());
    let _told = exec(&mut d, 1, TABLE);
    let seen = open(&mut d, 1, Method::TwoPhase, None);
    d.handle(Event::Lines(ClientKey(1), lines(&["R U"])), 0);
    d.handle(Event::End(ClientKey(1)), 0);
    d.step(0);
    d.handle(Event::Executor(ExecutorEvent::Gone(ExecutorId(1))), 10);
    d.step(10);
    assert!(
        seen.borrow().end.is_none(),
        "refused while its worker reconnects"
    );
    d.step(10 + 999_999);
    assert!(seen.borrow().end.is_none());
    // It comes back in time: the job is sent again.
    let told = exec(&mut d, 2, TABLE);
    d.step(10 + 1_000_000);
    assert!(seen.borrow().end.is_none());
    assert_eq!(jobs(&told.borrow()).len(), 1);
}

/// A coordinator that was itself stopped (SIGSTOP, a starved VM) wakes up long after its
/// executors' leases would have ended: their silence was its own, so the loop renews
/// every lease before judging any, and reads the heartbeats that came in meanwhile.
#[test]
fn a_stalled_loop_forgives_the_silence_it_caused() {
    use coordinator::driver::run_loop;
    use coordinator::LiveJob;
    let mut d = driver(DriverConfig::default());
    let told = exec(&mut d, 1, TABLE);
    let _seen = open(&mut d, 7, Method::TwoPhase, None);
    d.handle(Event::Lines(ClientKey(7), lines(&["R U"])), 10);
    d.handle(Event::End(ClientKey(7)), 10);
    d.step(20);
    let sent = jobs(&told.borrow());
    assert_eq!(sent.len(), 1);
    // Its heartbeat arrived while the coordinator was stopped; every reading of the
    // clock is 10 s (ten leases) after the last.
    let (tx, rx) = std::sync::mpsc::channel();
    let live = vec![LiveJob {
        job: sent[0],
        attempt: 1,
        nodes: 0,
    }];
    tx.send(Event::Executor(ExecutorEvent::Heartbeat(
        ExecutorId(1),
        live,
    )))
    .unwrap();
    let ticks = std::cell::Cell::new(0u64);
    let clock = || {
        ticks.set(ticks.get() + 1);
        20 + ticks.get() * 10_000_000
    };
    let mut steps = 0;
    run_loop(&mut d, &rx, &clock, &mut |_| {}, &mut |_| {
        steps += 1;
        steps == 3
    })
    .unwrap();
    assert_eq!(d.scheduler().counters().lease_expiries, 0);
    assert!(d.scheduler().has_executor(ExecutorId(1)));
    assert_eq!(
        d.scheduler().job_counts(),
        (1, 0),
        "the job still runs there"
    );
}

/// A result is timed when it is handled, not at the driver's last step: the round trip the
/// scheduler measures (and sizes jobs and hand-backs by) is the time since the job's
/// dispatch less its run, even when the run loop handles it in a batch of events.
#[test]
fn a_result_is_timed_when_it_comes_not_at_the_last_step() {
    struct Keep(Rc<RefCell<Vec<Job>>>);
    impl Executor for Keep {
        fn capacity(&self) -> usize {
            1
        }
        fn tables(&self) -> Vec<String> {
            vec![TABLE.to_string()]
        }
        fn submit(&self, job: Job) {
            self.0.borrow_mut().push(job);
        }
        fn cancel(&self, _: JobId) {}
    }
    let mut d = Driver::new(DriverConfig {
        scheduler: Config {
            solves: fake::solves,
            ..Config::default()
        },
        ..DriverConfig::default()
    });
    let sent = Rc::new(RefCell::new(Vec::new()));
    d.join(ExecutorId(1), Box::new(Keep(sent.clone())));
    let seen = open(&mut d, 1, Method::TwoPhase, None);
    d.handle(Event::Lines(ClientKey(1), lines(&["R U"])), 0);
    d.handle(Event::End(ClientKey(1)), 0);
    d.step(1_000);
    let job = sent
        .borrow()
        .first()
        .cloned()
        .expect("the batch job is sent");
    let mut r = fake::result(&job, Ok(fake::answer(&job, false, &[])));
    r.micros = 2_000;
    // Handled 7 ms after its dispatch with no step between: 5 ms of round trip.
    d.handle(
        Event::Executor(ExecutorEvent::Result(ExecutorId(1), r)),
        8_000,
    );
    assert_eq!(d.scheduler().round_trip_us(), 5_000);
    d.step(8_000);
    assert_eq!(seen.borrow().records.len(), 1, "the answer was accepted");
}
