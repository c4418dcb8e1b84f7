//! Lying executors against the checks of claims (the scheduler's `verify`), over the real
//! driver and the fake executors of [`fake`].
//!
//! Two honest executors and one liar solve a seeded input of optimal positions, split
//! into subtrees. The liar answers as an honest executor would, then drops what it found:
//! every subtree "searched, no solution", every whole search "nothing up to its cap",
//! with one node ([`Style::Tiny`]), with counts made up close to the truth
//! ([`Style::Plausible`]), or with the true counts of a search it ran and hid the
//! solutions of ([`Style::Malicious`]). It lies on every answer, on one in four, or on
//! every one after 50 honest ones. A lie is counted only where it changes the answer (a
//! malicious lie about an empty subtree is the truth).
//!
//! The invariants: a liar that searches nothing and lies always, or always after a
//! while, never makes a record differ from a fault-free run's, and is distrusted once
//! it has lied; with every claim checked ([`VerifyMode::Every`]), no liar does. A liar
//! that lies now and then, or hides solutions behind true counts, is caught at a rate
//! the tests print (docs/trust.md). `LIAR_SEEDS=<n>`
//! runs more seeds; `LIAR_SEED=<seed>` one.

use crate::fake::{self, kept_answer, pieces_of, result, PREFIX_LEN, TABLE};
use crate::sim::{join, make_input, normalise, Client, Outbox, Seen};
use coordinator::driver::{ClientKey, Driver, DriverConfig, Event, Line, Open};
use coordinator::input::InputLine;
use coordinator::{Action, Config, ExecutorEvent, ExecutorId, Verify, VerifyMode};
use proto::{Job, JobId, JobOutput, Method, Record, Settings, Stop, Work};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use tables::SplitMix64;

/// When a liar lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    Always,
    /// One answer in four.
    Sometimes,
    /// Every answer after this many honest ones.
    After(u32),
}

/// What node counts its lies carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    /// One node: implausible for any predicted subtree (it searched nothing).
    Tiny,
    /// Made up close to the truth (it searched nothing, and guessed well): only the
    /// re-runs tell.
    Plausible,
    /// Those of the honest search (it searched, and hid what it found): only a re-run
    /// of a claim that hides a solution tells.
    Malicious,
}

/// `honest`, with what it found dropped.
fn lie(job: &Job, honest: &JobOutput, style: Style) -> JobOutput {
    let nodes = |n: u64| match style {
        Style::Tiny => 1,
        Style::Plausible => n + 1 + fake::hash((job.id.0, n)) % (n / 8 + 1),
        Style::Malicious => n,
    };
    match honest {
        JobOutput::Subtrees(rs) => JobOutput::Subtrees(
            rs.iter()
                .map(|r| proto::SubtreeResult {
                    solutions: Vec::new(),
                    nodes: nodes(r.nodes),
                    stop: Stop::Exhausted,
                    ..r.clone()
                })
                .collect(),
        ),
        JobOutput::Batch(rs) => {
            let cap = match &job.work {
                Work::Batch { settings, .. } => settings.max_length,
                Work::Subtrees(_) => 0,
            };
            JobOutput::Batch(
                rs.iter()
                    .map(|a| {
                        a.clone().map(|r| proto::PositionResult {
                            solutions: Vec::new(),
                            optimal: false,
                            depth_exhausted: Some(cap),
                            nodes: nodes(r.nodes),
                            stop: Stop::Exhausted,
                            ..r
                        })
                    })
                    .collect(),
            )
        }
    }
}

/// A liar's kind and what it has done.
struct Liar {
    when: When,
    style: Style,
    answered: u32,
    /// Answers it changed.
    lies: u32,
}

/// What one run gave.
struct Run {
    records: Vec<Record>,
    /// The liar's lies, and whether it ended distrusted.
    lies: u32,
    caught: bool,
}

const HONEST: [ExecutorId; 2] = [ExecutorId(1), ExecutorId(2)];
const LIAR: ExecutorId = ExecutorId(3);

/// One run of `seed`'s input: one honest executor and nothing else (`liar` = `None`,
/// the reference), or `honest` of them (1 or 2) and the liar.
fn run(
    seed: u64,
    liar: Option<(When, Style)>,
    mode: VerifyMode,
    honest: usize,
) -> Result<Run, String> {
    let mut rng = SplitMix64::new(seed ^ 0x1ea5);
    let all_mode = seed % 2 == 1;
    let settings = Settings {
        max_solutions: if all_mode { None } else { Some(1) },
        ..Settings::default()
    };
    let job_nodes = 1 + rng.below(3000);
    let cfg = Config {
        lease_us: None,
        batch_size: 4,
        split_depth: 12,
        prefix_len: PREFIX_LEN,
        whole_nodes: [0, 3_000][rng.below(2) as usize],
        symmetry: false,
        jobs_per_slot: 1 + rng.below(3) as usize,
        job_nodes,
        job_round_trips: 0.0,
        early_start: rng.below(2) == 0,
        piece_levels: 2,
        split_running: true,
        solves: fake::solves,
        verify: Verify {
            mode,
            seed,
            ..Verify::default()
        },
    };
    let prefixes = tables::canonical::sequences(PREFIX_LEN);
    let input = make_input(&mut SplitMix64::new(seed));
    let mut driver = Driver::new(DriverConfig {
        scheduler: cfg,
        progress_every_us: None,
        min_window_slots: 1,
        startup_grace_us: 0,
    });
    let outbox: Outbox = Rc::new(RefCell::new(Vec::new()));
    let expired = Rc::new(RefCell::new(Vec::new()));
    let mut ids = vec![HONEST[0]];
    if liar.is_some() {
        ids.extend(HONEST.iter().skip(1).take(honest.saturating_sub(1)));
        ids.push(LIAR);
    }
    for &id in &ids {
        join(&mut driver, &outbox, &expired, id, 2, true);
    }
    let mut liar = liar.map(|(when, style)| Liar {
        when,
        style,
        answered: 0,
        lies: 0,
    });
    let seen = Rc::new(RefCell::new(Seen::default()));
    let key = ClientKey(1);
    driver.open(
        key,
        Open {
            settings: Settings {
                method: Method::Optimal,
                ..settings
            },
            table: TABLE.into(),
            sink: Box::new(Client(seen.clone())),
            wait_for_executors_us: Some(u64::MAX),
        },
    );
    let lines = (input.lines.iter())
        .map(|(line, text, parsed)| Line {
            line: InputLine {
                line: *line,
                input: text.clone(),
                parsed: parsed.clone(),
            },
            proved_empty: None,
        })
        .collect();
    driver.handle(Event::Lines(key, lines), 0);
    driver.handle(Event::End(key), 0);
    let mut running: BTreeMap<ExecutorId, Vec<Job>> = BTreeMap::new();
    let mut kept: BTreeMap<(JobId, u32), u32> = BTreeMap::new();
    let mut now = 0u64;
    for _ in 0..200_000 {
        now += 1 + rng.below(50);
        driver.step(now);
        let told: Vec<(ExecutorId, Action)> = outbox.borrow_mut().drain(..).collect();
        for (to, a) in told {
            let jobs = running.entry(to).or_default();
            match a {
                Action::Dispatch { job, .. } => jobs.push(job),
                Action::Cancel { job, .. } => jobs.retain(|j| j.id != job),
                Action::Split { job, attempt, .. } => {
                    // Keeps a random share of its pieces (often all), as the simulation's.
                    let held = jobs.iter().find(|j| j.id == job && j.attempt == attempt);
                    let k = held.map(|j| {
                        let total = pieces_of(j) as u64;
                        *kept
                            .entry((job, attempt))
                            .or_insert_with(|| match rng.below(3) {
                                0 => rng.below(total + 2) as u32,
                                _ => total as u32,
                            })
                    });
                    let h = proto::Handback {
                        job,
                        attempt,
                        kept: k,
                        split: Vec::new(),
                    };
                    driver.handle(Event::Executor(ExecutorEvent::Handback(to, h)), now);
                }
            }
        }
        let end = seen.borrow().end.clone();
        if let Some(end) = end {
            end?;
            if std::env::var("LIAR_DEBUG").is_ok() {
                eprintln!("{:?}", driver.scheduler().counters());
            }
            return Ok(Run {
                records: std::mem::take(&mut seen.borrow_mut().records),
                lies: liar.as_ref().map_or(0, |l| l.lies),
                caught: driver.scheduler().is_distrusted(LIAR),
            });
        }
        // One executor answers one of its jobs.
        let busy: Vec<ExecutorId> = (running.iter())
            .filter(|(_, j)| !j.is_empty())
            .map(|(&id, _)| id)
            .collect();
        let Some(&id) = busy.get(rng.below(busy.len().max(1) as u64) as usize) else {
            continue;
        };
        let Some(jobs) = running.get_mut(&id) else {
            continue;
        };
        let j = jobs.remove(rng.below(jobs.len() as u64) as usize);
        let honest = kept_answer(&j, kept.get(&(j.id, j.attempt)), all_mode, &prefixes);
        let out = match liar.as_mut().filter(|_| id == LIAR) {
            Some(l) => {
                l.answered += 1;
                let now_lies = match l.when {
                    When::Always => true,
                    When::Sometimes => rng.below(4) == 0,
                    When::After(n) => l.answered > n,
                };
                let out = match now_lies {
                    true => lie(&j, &honest, l.style),
                    false => honest.clone(),
                };
                l.lies += u32::from(out != honest);
                if out != honest && std::env::var("LIAR_DEBUG").is_ok() {
                    eprintln!(
                        "lie at {now}: {:?} attempt {}: {:?} -> {:?}",
                        j.id, j.attempt, honest, out
                    );
                }
                out
            }
            None => honest,
        };
        driver.handle(
            Event::Executor(ExecutorEvent::Result(id, result(&j, Ok(out)))),
            now,
        );
    }
    Err(format!(
        "did not finish: {:?}; jobs (running, queued) {:?}",
        driver.scheduler().counters(),
        driver.scheduler().job_counts()
    ))
}

/// The seeds to run: `LIAR_SEED`, or the first `LIAR_SEEDS` (default `n`).
fn seeds(n: u64) -> Vec<u64> {
    if let Some(s) = std::env::var("LIAR_SEED").ok().and_then(|s| s.parse().ok()) {
        return vec![s];
    }
    let n = (std::env::var("LIAR_SEEDS").ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(n);
    (0..n).collect()
}

/// Tally of runs of one liar over the seeds.
#[derive(Debug, Default)]
struct Tally {
    runs: u64,
    lying: u64,
    caught: u64,
    wrong: u64,
}

/// Runs every seed with a liar of each of `styles` beside `honest` executors: records
/// compared with the reference. `exact`: a wrong record fails; `catch`: so does a liar that lied and was
/// not caught (where a lie may have gone to an answer the scheduler ignored, as one
/// to a job already cancelled, it need not be).
fn tally(
    when: When,
    styles: &[Style],
    mode: VerifyMode,
    (exact, catch): (bool, bool),
    honest: usize,
    n: u64,
) -> Result<Tally, String> {
    let mut t = Tally::default();
    for seed in seeds(n) {
        let reference = run(seed, None, VerifyMode::Off, 1)?;
        let want = normalise(&reference.records, false);
        for &style in styles {
            let r = run(seed, Some((when, style)), mode, honest)
                .map_err(|e| format!("seed {seed}, {when:?} {style:?}: {e}"))?;
            let got = normalise(&r.records, false);
            t.runs += 1;
            t.lying += u64::from(r.lies > 0);
            t.caught += u64::from(r.caught);
            if got != want {
                t.wrong += 1;
                let diff = (want.iter().zip(&got)).find(|(a, b)| a != b);
                if exact {
                    return Err(format!(
                        "seed {seed}, {when:?} {style:?}, {} lies: a wrong record {diff:?}",
                        r.lies
                    ));
                }
            } else if r.lies > 0 && !r.caught && catch {
                return Err(format!(
                    "seed {seed}, {when:?} {style:?}: {} lies, not caught",
                    r.lies
                ));
            }
        }
    }
    Ok(t)
}

const LAZY: &[Style] = &[Style::Tiny, Style::Plausible];

#[test]
fn a_liar_that_always_lies_never_makes_a_record_wrong_and_is_caught() {
    let t = tally(When::Always, LAZY, VerifyMode::Sample, (true, true), 2, 60).unwrap();
    println!("always: {t:?}");
    assert!(t.lying > 0 && t.caught >= t.lying, "{t:?}");
}

#[test]
fn a_liar_that_turns_after_50_honest_answers_never_makes_a_record_wrong() {
    let t = tally(
        When::After(50),
        LAZY,
        VerifyMode::Sample,
        (true, true),
        2,
        60,
    )
    .unwrap();
    println!("after 50: {t:?}");
    assert!(t.lying > 0 && t.caught >= t.lying, "{t:?}");
}

#[test]
fn a_liar_that_lies_now_and_then_is_caught_and_never_gets_through_when_every_claim_is_checked() {
    let all: &[Style] = &[Style::Tiny, Style::Plausible, Style::Malicious];
    let malicious: &[Style] = &[Style::Malicious];
    for (when, styles) in [(When::Sometimes, all), (When::Always, malicious)] {
        let sampled = tally(when, styles, VerifyMode::Sample, (false, false), 2, 60).unwrap();
        println!("{when:?} {styles:?}, sampled: {sampled:?}");
        assert!(sampled.lying > 0 && sampled.caught > 0, "{sampled:?}");
        let every = tally(when, styles, VerifyMode::Every, (true, false), 2, 60).unwrap();
        println!("{when:?} {styles:?}, every claim checked: {every:?}");
        assert!(every.wrong == 0 && every.caught > 0, "{every:?}");
    }
}

/// The reproduction: one honest worker beside the liar, so that no third
/// executor can settle a dispute. A lie that hides a solution is caught by the solution
/// (each one checked); lies about counts alone change no record and leave both watched.
#[test]
fn beside_one_honest_executor_a_liar_never_makes_a_record_wrong() {
    let t = tally(When::Always, LAZY, VerifyMode::Sample, (true, false), 1, 60).unwrap();
    println!("always, one honest executor: {t:?}");
    assert!(t.lying > 0 && t.caught > 0, "{t:?}");
    let t = tally(
        When::After(50),
        LAZY,
        VerifyMode::Sample,
        (true, false),
        1,
        60,
    )
    .unwrap();
    println!("after 50, one honest executor: {t:?}");
    assert!(t.lying > 0 && t.caught > 0, "{t:?}");
}
