//! Deterministic simulation of the scheduler under faults.
//!
//! Each seed builds a random input (good and bad lines) and a random schedule over fake
//! executors that join, die mid-job (saying so or silently), stall past their lease and
//! come back with late results, answer twice, send poisoned partial answers when
//! cancelled, lack the table, or drain (capacity 0: no new jobs, the running ones finish)
//! and then come back or leave handing their jobs back; some lines come with a resume
//! hint (a length below the position's distance, known to have no solution). The fake executors answer every job deterministically
//! from the job alone, so a fault-free run (one healthy executor) gives the reference
//! records. The invariants: every input line gets exactly one record, in input order,
//! equal to the fault-free run's (hints change nothing but node counts); no executor
//! ever receives a job for a table it lacks, or while it drains; nothing from cancelled or
//! superseded work reaches a record (the poisoned answers would show); and the request's
//! progress agrees with what was pushed and released.
//!
//! A failing seed is printed; replay it with `SIM_SEED=<seed> cargo test -p
//! cubeswarm-coordinator --test sim`. `SIM_SEEDS=<n>` runs more seeds.

mod fake;

use coordinator::{Action, Config, ExecutorId, RequestId, Scheduler};
use fake::{answer, poisoned, result, truth, PREFIX_LEN, TABLE};
use proto::{Job, JobId, JobResult, Method, Record, RecordError, Settings, Solved};
use std::collections::{BTreeMap, BTreeSet};
use tables::{Cube, Move, Position, SplitMix64};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Health {
    Alive,
    /// Silent (no answers, no heartbeats) until this time.
    Stalled(u64),
    Dead,
}

struct FakeExec {
    capacity: usize,
    has_table: bool,
    health: Health,
    /// Capacity set to 0: it must get no new job.
    drained: bool,
    running: Vec<Job>,
    cancelled: Vec<Job>,
}

struct Input {
    lines: Vec<(u64, String, Result<Position, RecordError>)>,
}

fn make_input(rng: &mut SplitMix64) -> Input {
    let n = 3 + rng.below(20) as usize;
    let mut lines = Vec::new();
    let mut line = 0u64;
    for _ in 0..n {
        line += 1 + rng.below(2);
        if rng.below(10) == 0 {
            lines.push((line, "???".to_string(), Err(RecordError::NotUtf8)));
            continue;
        }
        let len = 1 + rng.below(20) as usize;
        let moves: Vec<Move> = (0..len)
            .map(|_| Move::ALL[rng.below(18) as usize])
            .collect();
        let p = Position::new(Cube::from_moves(&moves)).expect("legal");
        lines.push((line, tables::format_moves(&moves), Ok(p)));
    }
    Input { lines }
}

/// Records of a run, with the fields that do not depend on the schedule.
fn normalise(records: &[Record], keep_nodes: bool) -> Vec<String> {
    records
        .iter()
        .map(|r| match &r.outcome {
            Ok(s) => {
                let s = Solved {
                    micros: 0,
                    nodes: if keep_nodes { s.nodes } else { 0 },
                    lookups: if keep_nodes { s.lookups } else { 0 },
                    ..s.clone()
                };
                format!("{} {} {:?}", r.line, r.input, s)
            }
            Err(e) => format!("{} {} error {e:?}", r.line, r.input),
        })
        .collect()
}

struct Scenario {
    settings: Settings,
    all_mode: bool,
    cfg: Config,
}

fn scenario(seed: u64) -> Scenario {
    let mut rng = SplitMix64::new(seed ^ 0x5eed);
    let mode = seed % 3;
    let settings = match mode {
        0 => Settings {
            method: Method::TwoPhase,
            ..Settings::default()
        },
        1 => Settings::default(),
        _ => Settings {
            max_solutions: None,
            ..Settings::default()
        },
    };
    let cfg = Config {
        lease_us: Some(1_000),
        batch_size: 1 + rng.below(6) as usize,
        split_depth: 12,
        prefix_len: PREFIX_LEN,
        jobs_per_slot: 1 + rng.below(3) as usize,
        job_nodes: 1 + rng.below(3000),
        early_start: rng.below(2) == 0,
    };
    Scenario {
        settings,
        all_mode: mode == 2,
        cfg,
    }
}

/// Runs one schedule; `faults` = false is the reference run.
fn simulate(seed: u64, faults: bool) -> Result<Vec<Record>, String> {
    let sc = scenario(seed);
    let prefixes = tables::canonical::sequences(PREFIX_LEN);
    let mut rng = SplitMix64::new(seed);
    let input = make_input(&mut rng);
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(faults));
    let mut sched = Scheduler::new(sc.cfg.clone());
    let req: RequestId = sched.open_request(sc.settings.clone(), TABLE.into());
    let mut execs: BTreeMap<ExecutorId, FakeExec> = BTreeMap::new();
    let mut next_exec = 1u64;
    let mut add_exec = |execs: &mut BTreeMap<ExecutorId, FakeExec>,
                        sched: &mut Scheduler,
                        capacity: usize,
                        has_table: bool| {
        let id = ExecutorId(next_exec);
        next_exec += 1;
        let tables = if has_table {
            vec![TABLE.to_string()]
        } else {
            vec!["other".to_string()]
        };
        sched.add_executor(id, capacity, tables);
        execs.insert(
            id,
            FakeExec {
                capacity,
                has_table,
                health: Health::Alive,
                drained: false,
                running: Vec::new(),
                cancelled: Vec::new(),
            },
        );
    };
    if faults {
        for _ in 0..1 + rng.below(3) {
            let cap = 1 + rng.below(3) as usize;
            let has = rng.below(4) != 0;
            add_exec(&mut execs, &mut sched, cap, has);
        }
    } else {
        add_exec(&mut execs, &mut sched, 2, true);
    }
    let mut now = 0u64;
    let mut fed = 0usize;
    let mut records: Vec<Record> = Vec::new();
    // Answers in flight: (deliver at, executor, result).
    let mut mail: Vec<(u64, ExecutorId, JobResult)> = Vec::new();
    for _ in 0..100_000u64 {
        // Feed a few lines.
        if fed < input.lines.len() {
            let k = 1 + rng.below(4) as usize;
            for (line, text, parsed) in input.lines.iter().skip(fed).take(k) {
                // A resume hint, honest: below the position's distance (two-phase
                // ignores it).
                let hint = match parsed {
                    Ok(p) if faults && rng.below(3) == 0 => {
                        let t = truth(p, sc.all_mode, &prefixes);
                        Some(rng.below(u64::from(t.distance)) as u8)
                    }
                    _ => None,
                };
                sched.push_line_resumed(req, *line, text.clone(), parsed.clone(), hint);
            }
            fed = (fed + k).min(input.lines.len());
            if fed == input.lines.len() {
                sched.end_input(req);
            }
        }
        now += if faults { rng.below(300) } else { 50 };
        // Heartbeats of the healthy.
        for (&id, e) in &mut execs {
            if let Health::Stalled(until) = e.health {
                if now >= until {
                    // Back: says hello again (its lease may have ended meanwhile).
                    e.health = Health::Alive;
                    e.drained = false;
                    let tables = vec![if e.has_table { TABLE } else { "other" }.to_string()];
                    sched.add_executor(id, e.capacity, tables);
                }
            }
            if e.health == Health::Alive {
                sched.heartbeat(id);
            }
        }
        sched.tick(now);
        for a in sched.take_actions() {
            match a {
                Action::Dispatch { to, job } => {
                    let e = execs.get_mut(&to).ok_or("dispatch to unknown executor")?;
                    if !e.has_table {
                        return Err(format!("{job:?} sent to an executor without {TABLE}"));
                    }
                    if job.table != TABLE {
                        return Err(format!("job names table {}", job.table));
                    }
                    if e.drained {
                        return Err(format!("{job:?} sent to {to:?}, which drains"));
                    }
                    if e.health != Health::Dead {
                        e.running.push(job);
                    }
                }
                Action::Cancel { on, job } => {
                    if let Some(e) = execs.get_mut(&on) {
                        if let Some(i) = e.running.iter().position(|j| j.id == job) {
                            let j = e.running.remove(i);
                            e.cancelled.push(j);
                        }
                    }
                }
            }
        }
        records.extend(sched.take_records(req));
        let progress = sched.progress(req);
        let pushed = input.lines.iter().take(fed).count() as u64;
        if progress.records != records.len() as u64
            || progress.lines != pushed
            || progress.busy_executors > progress.executors
            || progress
                .deepening
                .is_some_and(|d| d.depth_exhausted.is_some_and(|x| x >= d.depth))
        {
            return Err(format!(
                "progress {progress:?} with {} records of {pushed} lines",
                records.len()
            ));
        }
        if sched.is_done(req) && fed == input.lines.len() {
            return Ok(records);
        }
        // What happens next.
        let ids: Vec<ExecutorId> = execs.keys().copied().collect();
        let Some(&id) = ids.get(rng.below(ids.len() as u64) as usize) else {
            return Err("no executors".into());
        };
        let roll = rng.below(1000);
        let live = execs.values().filter(|e| e.health != Health::Dead).count();
        let e = execs.get_mut(&id).expect("listed");
        if faults && roll < 8 && e.health != Health::Dead {
            // Dies mid-job; says so half the time (else its lease ends).
            e.health = Health::Dead;
            e.running.clear();
            if rng.below(2) == 0 {
                sched.remove_executor(id);
            }
        } else if faults && roll < 20 && e.health == Health::Alive {
            // Stalls past its lease; its jobs answer late, when it comes back.
            let until = now + 1_500 + rng.below(4_000);
            e.health = Health::Stalled(until);
            for j in &e.running {
                let out = answer(j, sc.all_mode, &prefixes);
                mail.push((until + rng.below(500), id, result(j, Ok(out))));
            }
            e.running.clear();
        } else if faults && roll < 28 && live < 8 {
            let cap = 1 + rng.below(3) as usize;
            let has = rng.below(3) != 0;
            add_exec(&mut execs, &mut sched, cap, has);
        } else if faults && (28..36).contains(&roll) && e.health == Health::Alive {
            if !e.drained {
                // Drains: no new jobs; what it runs goes on.
                e.drained = true;
                sched.set_capacity(id, 0);
            } else if rng.below(2) == 0 {
                // Back to work.
                e.drained = false;
                sched.set_capacity(id, e.capacity);
            } else {
                // Shuts down, handing back what it still runs.
                e.health = Health::Dead;
                e.running.clear();
                sched.remove_executor(id);
            }
        } else if !e.cancelled.is_empty() && e.health != Health::Dead {
            let j = e.cancelled.remove(0);
            let r = result(&j, Ok(poisoned(&j)));
            sched.on_result(id, r);
        } else if e.health == Health::Alive && !e.running.is_empty() {
            let i = if faults {
                rng.below(e.running.len() as u64) as usize
            } else {
                0
            };
            let j = e.running.remove(i);
            let r = result(&j, Ok(answer(&j, sc.all_mode, &prefixes)));
            if faults && rng.below(20) == 0 {
                // Answers twice.
                mail.push((now + rng.below(3_000), id, r.clone()));
            }
            sched.on_result(id, r);
        }
        // Deliver the mail that is due.
        let mut i = 0;
        while i < mail.len() {
            if mail[i].0 <= now {
                let (_, from, r) = mail.swap_remove(i);
                sched.on_result(from, r);
            } else {
                i += 1;
            }
        }
        // Keep the run live: some healthy executor with the table must exist.
        let healthy = execs
            .values()
            .any(|e| e.has_table && e.health != Health::Dead && !e.drained);
        if !healthy {
            add_exec(&mut execs, &mut sched, 1, true);
        }
    }
    let alive: Vec<String> = execs
        .iter()
        .filter(|(_, e)| e.health != Health::Dead)
        .map(|(id, e)| {
            format!(
                "{id:?} {:?} table={} running={}",
                e.health,
                e.has_table,
                e.running.len()
            )
        })
        .collect();
    Err(format!(
        "did not finish: {} of {} records; {:?}; jobs (running, queued) {:?}; executors {alive:?}",
        records.len(),
        input.lines.len(),
        sched.counters(),
        sched.job_counts(),
    ))
}

fn check_seed(seed: u64) -> Result<(), String> {
    let sc = scenario(seed);
    let reference = simulate(seed, false)?;
    let faulty = simulate(seed, true)?;
    let lines: Vec<u64> = {
        let mut rng = SplitMix64::new(seed);
        make_input(&mut rng).lines.iter().map(|l| l.0).collect()
    };
    let got: Vec<u64> = faulty.iter().map(|r| r.line).collect();
    if got != lines {
        return Err(format!("record lines {got:?}, input lines {lines:?}"));
    }
    let keep_nodes = sc.settings.method == Method::TwoPhase;
    let (a, b) = (
        normalise(&reference, keep_nodes),
        normalise(&faulty, keep_nodes),
    );
    for (x, y) in a.iter().zip(&b) {
        if x != y {
            return Err(format!(
                "records differ:\n  fault-free: {x}\n  faulty:     {y}"
            ));
        }
    }
    // The reference itself must be right: optimal solutions at the true distance.
    if sc.settings.method == Method::Optimal {
        let prefixes = tables::canonical::sequences(PREFIX_LEN);
        for r in &reference {
            if let Ok(s) = &r.outcome {
                let p = Position::parse(&r.input).map_err(|e| e.to_string())?;
                let t = truth(&p, sc.all_mode, &prefixes);
                let lens: BTreeSet<usize> = s.solutions.iter().map(Vec::len).collect();
                if lens != BTreeSet::from([t.distance as usize]) {
                    return Err(format!(
                        "line {}: lengths {lens:?}, distance {}",
                        r.line, t.distance
                    ));
                }
                let want = if sc.all_mode && t.distance >= 12 {
                    2
                } else {
                    1
                };
                let distinct: BTreeSet<_> = t.at_distance.iter().collect();
                let want = want.min(if t.distance >= 12 { distinct.len() } else { 1 });
                if s.solutions.len() != want {
                    return Err(format!(
                        "line {}: {} solutions, expected {want}",
                        r.line,
                        s.solutions.len()
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_line_gets_one_record_equal_to_a_fault_free_run() {
    let seeds: Vec<u64> = match std::env::var("SIM_SEED") {
        Ok(s) => vec![s.parse().expect("SIM_SEED is a number")],
        Err(_) => {
            let n = std::env::var("SIM_SEEDS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(3000u64);
            (0..n).collect()
        }
    };
    let mut failures = Vec::new();
    for seed in seeds {
        if let Err(e) = check_seed(seed) {
            failures.push(format!("seed {seed}: {e}"));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing seeds (replay with SIM_SEED=<seed>):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_job_whose_executor_dies_is_sent_again_with_the_next_attempt() {
    let mut s = Scheduler::new(Config {
        lease_us: Some(100),
        ..Config::default()
    });
    let req = s.open_request(
        Settings {
            method: Method::TwoPhase,
            ..Settings::default()
        },
        TABLE.into(),
    );
    s.add_executor(ExecutorId(1), 1, vec![TABLE.into()]);
    s.push_line(
        req,
        1,
        "R".into(),
        Position::parse("R").map_err(RecordError::from),
    );
    s.end_input(req);
    let first = s.take_actions();
    let Some(Action::Dispatch { job, .. }) = first.first() else {
        panic!("{first:?}")
    };
    assert_eq!(job.attempt, 1);
    let id: JobId = job.id;
    // The lease ends with no word from executor 1; executor 2 joins.
    s.tick(500);
    s.add_executor(ExecutorId(2), 1, vec![TABLE.into()]);
    let again = s.take_actions();
    let redo = again.iter().find_map(|a| match a {
        Action::Dispatch { to, job } => Some((*to, job.clone())),
        _ => None,
    });
    let (to, job2) = redo.expect("sent again");
    assert_eq!((to, job2.id, job2.attempt), (ExecutorId(2), id, 2));
    assert_eq!(s.counters().lease_expiries, 1);
}
