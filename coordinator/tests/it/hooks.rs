//! What a network layer needs of the scheduler, on the simulation's fake executors:
//! resume hints for one optimal position, a request's progress, and changing an
//! executor's capacity (draining) with the jobs it runs.

use crate::fake;

use coordinator::{
    Action, Config, Deepening, ExecutorId, Progress, RequestId, Scheduler, Verify, VerifyMode,
};
use fake::{answer, hash, result, truth, PREFIX_LEN, TABLE};
use proto::{Job, JobOutput, Method, Record, Settings, Solved, Stop, Work};
use std::collections::VecDeque;
use tables::{Cube, Move, Position, SplitMix64};

const E1: ExecutorId = ExecutorId(1);
const E2: ExecutorId = ExecutorId(2);

fn cfg() -> Config {
    Config {
        lease_us: None,
        batch_size: 4,
        split_depth: 12,
        prefix_len: PREFIX_LEN,
        whole_nodes: 0,
        // The fake truths are not symmetric: every prefix may hold a made-up solution.
        symmetry: false,
        jobs_per_slot: 2,
        job_nodes: 1_000,
        job_round_trips: 10.0,
        early_start: false,
        piece_levels: 2,
        split_running: true,
        solves: fake::solves,
        // These tests count the scheduler's own jobs: claims are checked in sim.rs.
        verify: Verify {
            mode: VerifyMode::Off,
            ..Verify::default()
        },
    }
}

fn prefixes() -> Vec<Vec<Move>> {
    tables::canonical::sequences(PREFIX_LEN)
}

/// A position whose fake truth has this distance and lower bound.
fn position_with(distance: u8, lower_bound: u8) -> Position {
    let prefixes = prefixes();
    let mut rng = SplitMix64::new(7);
    loop {
        let moves: Vec<Move> = (0..20).map(|_| Move::ALL[rng.below(18) as usize]).collect();
        let p = Position::new(Cube::from_moves(&moves)).unwrap();
        let t = truth(&p, false, &prefixes);
        if t.distance == distance && t.lower_bound == lower_bound {
            return p;
        }
    }
}

/// Runs `req` to its end, answering jobs in the order they were sent; returns the
/// records and every job sent.
fn run_to_end(s: &mut Scheduler, req: RequestId) -> (Vec<Record>, Vec<Job>) {
    let prefixes = prefixes();
    let mut running: VecDeque<(ExecutorId, Job)> = VecDeque::new();
    let (mut records, mut sent) = (Vec::new(), Vec::new());
    for _ in 0..100_000 {
        for a in s.take_actions() {
            match a {
                Action::Dispatch { to, job } => {
                    sent.push(job.clone());
                    running.push_back((to, job));
                }
                Action::Cancel { job, .. } => running.retain(|(_, j)| j.id != job),
                Action::Split { .. } => unreachable!("no executor here splits"),
            }
        }
        records.extend(s.take_records(req));
        if s.is_done(req) {
            return (records, sent);
        }
        let (to, job) = running.pop_front().expect("a job to answer");
        s.on_result(to, result(&job, Ok(answer(&job, false, &prefixes))));
    }
    panic!("did not finish");
}

/// One position solved on two executors, with a resume hint.
fn solve(settings: Settings, p: Position, hint: Option<u8>) -> (Record, Vec<Job>) {
    solve_with(cfg(), settings, p, hint)
}

/// [`solve`] with the scheduler configured as `cfg` says.
fn solve_with(
    cfg: Config,
    settings: Settings,
    p: Position,
    hint: Option<u8>,
) -> (Record, Vec<Job>) {
    let (mut s, req) = one_position(cfg, settings, p, hint, false);
    let (mut records, sent) = run_to_end(&mut s, req);
    assert_eq!(records.len(), 1);
    (records.remove(0), sent)
}

/// A scheduler configured as `cfg` says, with executors of 2 and 1 threads (that hand
/// back pieces when asked, with `splits`), and one request for position `p` (with a
/// resume hint) whose input has ended.
fn one_position(
    cfg: Config,
    settings: Settings,
    p: Position,
    hint: Option<u8>,
    splits: bool,
) -> (Scheduler, RequestId) {
    let mut s = Scheduler::new(cfg);
    for (e, threads) in [(E1, 2), (E2, 1)] {
        s.add_executor(e, threads, vec![TABLE.into()]);
        s.set_splits(e, splits);
    }
    let req = s.open_request(settings, TABLE.into());
    s.push_line_resumed(req, 1, "p".into(), Ok(p), hint);
    s.end_input(req);
    (s, req)
}

fn solved(r: &Record) -> &Solved {
    r.outcome.as_ref().expect("solved")
}

fn first_subtree_depth(jobs: &[Job]) -> Option<u8> {
    jobs.iter().find_map(|j| match &j.work {
        Work::Subtrees(w) => Some(w.depth),
        Work::Batch { .. } => None,
    })
}

fn shallow_lengths(job: &Job) -> (u8, u8) {
    match &job.work {
        Work::Batch { settings, .. } => (settings.min_length, settings.max_length),
        Work::Subtrees(_) => panic!("the first job is the shallow one"),
    }
}

/// A depth is searched whole while the depth after it is predicted small (169 times the
/// nodes of the previous whole job, at most `whole_nodes`), one job a depth after the
/// shallow one, each from past the lengths proved empty; the record is the split
/// search's, its nodes those of every job. One node over the threshold and the depths
/// are split as before.
#[test]
fn small_depths_are_searched_whole_and_keep_the_split_record() {
    // Distance 14, lower bound 12: the shallow job proves 11 empty.
    let p = position_with(14, 12);
    let per_job = hash(p.cube()) % 500;
    assert!(per_job > 0, "the fake search of this position has nodes");
    let settings = Settings::default();
    let (split, split_jobs) = solve(settings.clone(), p, None);
    assert_eq!(first_subtree_depth(&split_jobs), Some(12));
    let at = |whole_nodes| Config {
        whole_nodes,
        ..cfg()
    };
    let (just_over, jobs) = solve_with(at(per_job * 169 - 1), settings.clone(), p, None);
    assert_eq!(first_subtree_depth(&jobs), Some(12));
    assert_eq!(jobs.iter().filter(|j| !is_subtrees(j)).count(), 1);
    let (whole, jobs) = solve_with(at(per_job * 169), settings, p, None);
    assert_eq!(first_subtree_depth(&jobs), None);
    let lengths: Vec<(u8, u8)> = jobs.iter().map(shallow_lengths).collect();
    assert_eq!(lengths, [(0, 11), (12, 12), (13, 13), (14, 14)]);
    let (a, b) = (solved(&split), solved(&whole));
    assert_eq!(b.solutions, a.solutions);
    assert!(!b.solutions.is_empty());
    assert_eq!(
        (b.optimal, b.depth_exhausted, b.stop),
        (a.optimal, a.depth_exhausted, a.stop)
    );
    assert_eq!(b.depth_exhausted, Some(13));
    assert_eq!(b.nodes, 4 * per_job, "every whole job's nodes");
    assert_eq!(solved(&just_over).solutions, a.solutions);
}

fn is_subtrees(job: &Job) -> bool {
    matches!(job.work, Work::Subtrees(_))
}

#[test]
fn a_resume_hint_starts_deepening_past_it_and_keeps_the_record() {
    // Distance 15, lower bound 13: a fresh search proves 13 and 14 empty, then finds 15.
    let p = position_with(15, 13);
    let settings = Settings::default();
    let (fresh, fresh_jobs) = solve(settings.clone(), p, None);
    let fresh = solved(&fresh).clone();
    assert_eq!(shallow_lengths(&fresh_jobs[0]), (0, 11));
    assert_eq!(first_subtree_depth(&fresh_jobs), Some(13));
    assert!(fresh.optimal);
    assert_eq!(fresh.depth_exhausted, Some(14));
    assert_eq!(fresh.solutions.len(), 1);
    for hint in [0u8, 5, 10, 11, 12, 13, 14] {
        let (rec, jobs) = solve(settings.clone(), p, Some(hint));
        let s = solved(&rec);
        assert_eq!(s.solutions, fresh.solutions, "hint {hint}");
        assert_eq!(s.optimal, fresh.optimal, "hint {hint}");
        assert_eq!(s.stop, fresh.stop, "hint {hint}");
        assert_eq!(s.depth_exhausted, fresh.depth_exhausted, "hint {hint}");
        assert!(s.depth_exhausted >= Some(hint));
        // The shallow job searches from past the hint, or only bounds the position
        // once the hint covers all it would search.
        let want = if hint >= 11 { (0, 0) } else { (hint + 1, 11) };
        assert_eq!(shallow_lengths(&jobs[0]), want, "hint {hint}");
        let first = first_subtree_depth(&jobs);
        assert_eq!(first, Some((hint + 1).max(13)), "hint {hint}");
        if hint >= 12 {
            assert_eq!(first, Some(hint + 1));
        }
        if hint >= 13 {
            assert!(jobs.len() < fresh_jobs.len(), "hint {hint}: fewer jobs");
        }
    }
}

#[test]
fn a_resume_hint_inside_the_shallow_search_keeps_the_optimal_flag() {
    // Distance 10, lower bound 8: solved by the shallow job, searched from past the hint.
    let p = position_with(10, 8);
    let (fresh, _) = solve(Settings::default(), p, None);
    let (resumed, jobs) = solve(Settings::default(), p, Some(8));
    assert_eq!(shallow_lengths(&jobs[0]), (9, 11));
    assert_eq!(jobs.len(), 1);
    let (a, b) = (solved(&fresh), solved(&resumed));
    assert!(a.optimal && b.optimal);
    assert_eq!(a.solutions, b.solutions);
    assert_eq!(a.depth_exhausted, Some(9));
    assert_eq!(b.depth_exhausted, Some(9));
}

#[test]
fn a_resume_hint_at_or_past_max_length_says_nothing_within_it_at_once() {
    let p = position_with(15, 13);
    for hint in [20u8, 21, 255] {
        let mut s = Scheduler::new(cfg());
        s.add_executor(E1, 1, vec![TABLE.into()]);
        let req = s.open_request(Settings::default(), TABLE.into());
        s.push_line_resumed(req, 3, "p".into(), Ok(p), Some(hint));
        s.end_input(req);
        assert!(s.take_actions().is_empty(), "no job for hint {hint}");
        let records = s.take_records(req);
        let r = solved(&records[0]);
        assert!(r.solutions.is_empty() && !r.optimal);
        assert_eq!((r.depth_exhausted, r.stop), (Some(20), Stop::Exhausted));
        assert!(s.is_done(req));
    }
}

#[test]
fn two_phase_ignores_resume_hints() {
    let p = position_with(15, 13);
    let settings = Settings {
        method: Method::TwoPhase,
        ..Settings::default()
    };
    let (fresh, _) = solve(settings.clone(), p, None);
    let (hinted, jobs) = solve(settings, p, Some(255));
    assert_eq!(fresh, hinted);
    assert_eq!(jobs.len(), 1);
}

#[test]
fn progress_follows_the_deepening_of_the_oldest_position() {
    let prefixes = prefixes();
    let mut s = Scheduler::new(cfg());
    s.add_executor(E1, 2, vec![TABLE.into()]);
    s.add_executor(E2, 1, vec![TABLE.into()]);
    let req = s.open_request(Settings::default(), TABLE.into());
    let idle = Progress {
        executors: 2,
        ..Progress::default()
    };
    assert_eq!(s.progress(req), idle);
    assert_eq!(s.progress(RequestId(99)), idle);
    s.push_line(req, 7, "p".into(), Ok(position_with(15, 13)));
    s.end_input(req);
    let mut running: VecDeque<(ExecutorId, Job)> = VecDeque::new();
    let mut nodes = 0u64;
    let mut depths = Vec::new();
    let mut records = Vec::new();
    while !s.is_done(req) {
        for a in s.take_actions() {
            match a {
                Action::Dispatch { to, job } => running.push_back((to, job)),
                Action::Cancel { job, .. } => running.retain(|(_, j)| j.id != job),
                Action::Split { .. } => unreachable!("no executor here splits"),
            }
        }
        let p = s.progress(req);
        assert_eq!((p.lines, p.input_done, p.executors), (1, true, 2));
        let on: Vec<ExecutorId> = running.iter().map(|(e, _)| *e).collect();
        let busy = [E1, E2].iter().filter(|e| on.contains(e)).count();
        assert_eq!(p.busy_executors, busy);
        match p.deepening {
            Some(Deepening {
                line,
                depth,
                depth_exhausted,
                nodes: n,
            }) => {
                assert_eq!(line, 7);
                assert_eq!(depth_exhausted, Some(depth - 1));
                assert_eq!(n, nodes, "nodes of every accepted job so far");
                if depths.last() != Some(&depth) {
                    depths.push(depth);
                }
            }
            None => assert!(depths.is_empty(), "deepening ends only with the record"),
        }
        records.extend(s.take_records(req));
        if s.is_done(req) {
            break;
        }
        let (to, job) = running.pop_front().expect("a job to answer");
        let out = answer(&job, false, &prefixes);
        nodes += match &out {
            JobOutput::Batch(rs) => rs.iter().flatten().map(|r| r.nodes).sum::<u64>(),
            JobOutput::Subtrees(rs) => rs.iter().map(|r| r.nodes).sum(),
        };
        s.on_result(to, result(&job, Ok(out)));
        records.extend(s.take_records(req));
    }
    assert_eq!(depths, vec![13, 14, 15]);
    assert_eq!(records.len(), 1);
    let p = s.progress(req);
    assert_eq!((p.records, p.lines, p.deepening), (1, 1, None));
}

/// A two-phase request with batches of one, so each line is one job.
fn two_phase_one_per_job(s: &mut Scheduler) -> RequestId {
    s.open_request(
        Settings {
            method: Method::TwoPhase,
            ..Settings::default()
        },
        TABLE.into(),
    )
}

fn dispatched(actions: &[Action]) -> Vec<(ExecutorId, Job)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Dispatch { to, job } => Some((*to, job.clone())),
            Action::Cancel { .. } | Action::Split { .. } => None,
        })
        .collect()
}

#[test]
fn a_draining_executor_gets_no_new_job_and_its_results_still_count() {
    let prefixes = prefixes();
    let mut s = Scheduler::new(Config {
        batch_size: 1,
        ..cfg()
    });
    s.add_executor(E1, 1, vec![TABLE.into()]);
    s.add_executor(E2, 1, vec![TABLE.into()]);
    let req = two_phase_one_per_job(&mut s);
    let p = position_with(15, 13);
    for line in 1..=4 {
        s.push_line(req, line, "p".into(), Ok(p));
    }
    s.end_input(req);
    let first = dispatched(&s.take_actions());
    assert_eq!(first.len(), 2);
    let (on1, a) = first[0].clone();
    let (on2, b) = first[1].clone();
    assert_eq!((on1, on2), (E1, E2));
    assert_eq!(s.running_on(E1), vec![(a.id, 1)]);
    assert!(s.set_capacity(E1, 0));
    assert!(!s.set_capacity(ExecutorId(9), 3));
    // E2 answers: the next job goes to E2 only.
    s.on_result(E2, result(&b, Ok(answer(&b, false, &prefixes))));
    let next = dispatched(&s.take_actions());
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].0, E2);
    let c = next[0].1.clone();
    // The draining E1 answers: accepted, and it still gets nothing.
    s.on_result(E1, result(&a, Ok(answer(&a, false, &prefixes))));
    assert!(s.running_on(E1).is_empty());
    assert!(dispatched(&s.take_actions()).is_empty());
    assert_eq!(s.take_records(req).len(), 2);
    assert_eq!(s.counters().jobs_done, 2);
    assert_eq!(s.progress(req).busy_executors, 1);
    // Back to work: the last job goes to E1.
    assert!(s.set_capacity(E1, 1));
    let next = dispatched(&s.take_actions());
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].0, E1);
    let d = next[0].1.clone();
    assert_eq!(s.running_on(E1), vec![(d.id, 1)]);
    // E1 lost its jobs (a restart under the same id): they go back, and out again.
    let requeued = s.counters().requeued;
    s.add_executor(E1, 1, vec![TABLE.into()]);
    assert_eq!(s.counters().requeued, requeued + 1);
    assert!(s.running_on(E1).is_empty());
    let again = dispatched(&s.take_actions());
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].0, again[0].1.id, again[0].1.attempt),
        (E1, d.id, 2)
    );
    assert_eq!(s.running_on(E1), vec![(d.id, 2)]);
    // The first attempt answers after all: taken, and the second is stopped.
    s.on_result(E1, result(&d, Ok(answer(&d, false, &prefixes))));
    let after = s.take_actions();
    assert!(after.contains(&Action::Cancel { on: E1, job: d.id }));
    assert!(s.running_on(E1).is_empty());
    // E2 joins again under its id while running c: c goes back to the queue.
    let requeued = s.counters().requeued;
    s.add_executor(E2, 1, vec![TABLE.into()]);
    assert_eq!(s.counters().requeued, requeued + 1);
    let redo = dispatched(&s.take_actions());
    assert_eq!(redo.len(), 1);
    assert_eq!((redo[0].1.id, redo[0].1.attempt), (c.id, 2));
    let (to, c2) = redo[0].clone();
    s.on_result(to, result(&c2, Ok(answer(&c2, false, &prefixes))));
    assert_eq!(s.take_records(req).len(), 2);
    assert!(s.is_done(req));
}

/// A heartbeat renews the jobs it lists; a job its executor's heartbeats leave out for a
/// whole lease is lost: the executor is forgotten (as at a lease expiry) and the job goes
/// back to the queue, although the executor kept heartbeating.
#[test]
fn a_job_left_out_of_its_executors_heartbeats_for_a_lease_is_lost() {
    let mut s = Scheduler::new(Config {
        lease_us: Some(1_000),
        batch_size: 1,
        ..cfg()
    });
    s.add_executor(E1, 1, vec![TABLE.into()]);
    let req = two_phase_one_per_job(&mut s);
    s.push_line(req, 1, "R".into(), Ok(Position::parse("R").unwrap()));
    s.end_input(req);
    let sent = s.take_actions();
    let Some(Action::Dispatch { job, .. }) = sent.first() else {
        panic!("{sent:?}")
    };
    let listed = [(job.id, job.attempt)];
    for t in [500, 1_000, 1_500] {
        s.tick(t);
        s.heartbeat_with(E1, &listed);
    }
    s.tick(2_000);
    s.heartbeat_with(E1, &[]);
    assert_eq!(s.job_counts(), (1, 0), "listed 500 µs ago: still its");
    s.tick(2_600);
    s.heartbeat_with(E1, &[]);
    assert!(!s.has_executor(E1));
    assert_eq!(s.counters().lost_jobs, 1);
    assert_eq!(s.job_counts(), (0, 1), "back in the queue");
}

/// A job its executor lists in every heartbeat and never answers is taken back once it
/// has been held past its bound (a minute at least, doubled at each attempt): the sitter
/// is forgotten until it joins again, the job goes to another executor, and the sitter's
/// late answer is ignored.
#[test]
fn a_job_listed_in_every_heartbeat_and_never_answered_is_taken_back() {
    let mut s = Scheduler::new(Config {
        lease_us: Some(1_000_000),
        batch_size: 1,
        ..cfg()
    });
    s.add_executor(E1, 1, vec![TABLE.into()]);
    let req = two_phase_one_per_job(&mut s);
    s.push_line(req, 1, "R".into(), Ok(Position::parse("R").unwrap()));
    s.end_input(req);
    let sent = s.take_actions();
    let Some(Action::Dispatch { job, .. }) = sent.first() else {
        panic!("{sent:?}")
    };
    let first = job.clone();
    let listed = [(first.id, first.attempt)];
    // Listed every half second for 59.5 s: still its.
    for t in (1..=119).map(|i| i * 500_000) {
        s.tick(t);
        s.heartbeat_with(E1, &listed);
    }
    assert_eq!(s.counters().overdue_jobs, 0);
    assert_eq!(s.job_counts(), (1, 0));
    s.add_executor(E2, 1, vec![TABLE.into()]);
    for t in [60_000_000, 60_500_000, 61_000_000] {
        s.tick(t);
        s.heartbeat_with(E1, &listed);
    }
    assert_eq!(s.counters().lease_expiries, 0);
    assert_eq!(s.counters().overdue_jobs, 1);
    assert!(!s.has_executor(E1));
    let again = s.take_actions();
    assert!(
        again.contains(&Action::Cancel {
            on: E1,
            job: first.id
        }),
        "{again:?}"
    );
    let redo = again.iter().find_map(|a| match a {
        Action::Dispatch { to, job } => Some((*to, job.clone())),
        _ => None,
    });
    let Some((to, second)) = redo else {
        panic!("{again:?}")
    };
    assert_eq!((to, second.id, second.attempt), (E2, first.id, 2));
    // The sitter's answer, late, is not its job's any more.
    let out = answer(&first, false, &prefixes());
    s.on_result(E1, result(&first, Ok(out.clone())));
    assert_eq!(s.counters().jobs_done, 0);
    // The second attempt may take twice as long before it is taken back.
    let listed = [(second.id, second.attempt)];
    for t in (1..=200).map(|i| 61_000_000 + i * 500_000) {
        s.tick(t);
        s.heartbeat_with(to, &listed);
    }
    assert_eq!(s.counters().overdue_jobs, 1);
    s.on_result(to, result(&second, Ok(out)));
    assert_eq!(s.counters().jobs_done, 1);
}

/// Runs `req` to its end on executors that hand back half of each job asked to split;
/// with `kill`, the first job that handed back something loses its executor before it
/// answers (its jobs go back to the queue, and that one is made again from what it
/// kept). Jobs cancelled answer (as a worker's do) once the request is done. Returns the
/// records, the jobs that handed back, and every job sent.
fn run_splitting(s: &mut Scheduler, req: RequestId, kill: bool) -> (Vec<Record>, u64, Vec<Job>) {
    let (records, handed, sent, _, _) = run_splitting_held(s, req, kill, None, false);
    (records, handed, sent)
}

/// What [`run_splitting_held`] returns: the records, the jobs that handed back, every job
/// sent, the most one executor held, and each job asked to hand back with its answer.
type Splitting = (Vec<Record>, u64, Vec<Job>, usize, Vec<(Job, fake::Kept)>);

/// [`run_splitting`] (answering the running jobs in a random order with `rng`), and the
/// most jobs one executor held at once (sent, not answered or cancelled), and each job
/// asked to hand back with its answer. With `running_split`, a job sent with `split`
/// keeps every piece and splits its running ones instead ([`fake::split_of`]).
fn run_splitting_held(
    s: &mut Scheduler,
    req: RequestId,
    kill: bool,
    mut rng: Option<&mut SplitMix64>,
    running_split: bool,
) -> Splitting {
    let prefixes = prefixes();
    let mut answered = Vec::new();
    let mut most = 0usize;
    let mut running: VecDeque<(ExecutorId, Job)> = VecDeque::new();
    let mut cancelled: Vec<(ExecutorId, Job)> = Vec::new();
    let mut kept: std::collections::BTreeMap<(proto::JobId, u32), fake::Kept> = Default::default();
    let (mut records, mut sent, mut handed) = (Vec::new(), Vec::new(), 0u64);
    let mut killed = false;
    for step in 0..100_000u64 {
        // A millisecond a step: jobs grow old enough to be asked to split.
        s.tick(step * 1_000);
        for a in s.take_actions() {
            match a {
                Action::Dispatch { to, job } => {
                    sent.push(job.clone());
                    running.push_back((to, job));
                    let held = running.iter().filter(|(e, _)| *e == to).count();
                    most = most.max(held);
                }
                Action::Cancel { job, .. } => {
                    if let Some(i) = running.iter().position(|(_, j)| j.id == job) {
                        cancelled.extend(running.remove(i));
                    }
                }
                Action::Split { on, job, attempt } => {
                    let held = running
                        .iter()
                        .find(|(e, j)| *e == on && j.id == job && j.attempt == attempt);
                    let before = kept.get(&(job, attempt)).cloned();
                    let answer =
                        held.map(|(_, j)| fake::split_of(j, running_split, before.as_ref()));
                    if let (Some(a), Some((_, j))) = (&answer, held) {
                        kept.insert((job, attempt), a.clone());
                        handed += u64::from(a.0 > 0);
                        answered.push((j.clone(), a.clone()));
                    }
                    let (k, split) = match answer {
                        Some((k, split)) => (Some(k), split),
                        None => (None, Vec::new()),
                    };
                    s.on_handback(
                        on,
                        proto::Handback {
                            job,
                            attempt,
                            kept: k,
                            split,
                        },
                    );
                }
            }
        }
        records.extend(s.take_records(req));
        if s.is_done(req) {
            // What was cancelled or still runs answers late.
            for (to, job) in cancelled.into_iter().chain(running) {
                let k = kept.get(&(job.id, job.attempt));
                s.on_result(
                    to,
                    result(&job, Ok(fake::split_answer(&job, k, false, &prefixes))),
                );
            }
            return (records, handed, sent, most, answered);
        }
        // Oldest first; newest first where running pieces split, so that a job asked
        // once runs on to be asked again.
        let next = match rng.as_deref_mut() {
            Some(r) => r.below(running.len() as u64) as usize,
            None if running_split => running.len() - 1,
            None => 0,
        };
        let (to, job) = running.remove(next).expect("a job to answer");
        let k = kept.get(&(job.id, job.attempt));
        if kill && !killed && k.is_some_and(|k| k.0 > 0) {
            // Its executor dies with it: back to the queue, made again from what it kept.
            killed = true;
            running.retain(|(e, _)| *e != to);
            s.remove_executor(to);
            s.add_executor(to, 2, vec![TABLE.into()]);
            s.set_splits(to, true);
            continue;
        }
        s.on_result(
            to,
            result(&job, Ok(fake::split_answer(&job, k, false, &prefixes))),
        );
    }
    panic!("did not finish");
}

/// Executors that hand back part of their jobs when idle slots ask, one of them dying
/// after it did: the records are those of a run without splits (the first solution and
/// every solution), and what was handed back is searched once (no solution twice, none
/// lost).
#[test]
fn jobs_handed_back_in_part_give_the_records_of_a_run_without_splits() {
    let p = position_with(14, 12);
    for max_solutions in [Some(1), None] {
        let settings = Settings {
            max_solutions,
            ..Settings::default()
        };
        let (plain, _) = solve(settings.clone(), p, None);
        let cfg = Config {
            jobs_per_slot: 1,
            ..cfg()
        };
        let (mut s, req) = one_position(cfg, settings, p, None, true);
        let (records, handed, _) = run_splitting(&mut s, req, true);
        assert!(handed > 0, "no job handed back anything");
        assert!(
            s.counters().requeued > 0,
            "the dead executor's jobs went back"
        );
        assert_eq!(records.len(), 1);
        let (a, b) = (solved(&records[0]), solved(&plain));
        assert_eq!(
            (&a.solutions, a.optimal, a.depth_exhausted, a.stop),
            (&b.solutions, b.optimal, b.depth_exhausted, b.stop)
        );
    }
}

/// Executors that, asked to hand back, keep every piece of a job sent with `split` and
/// split its running pieces where they run (some whole, some in part on one or two
/// levels), or hand back the pieces not claimed first and split the others when asked
/// again, one of them dying after it did: the records are those of a run without
/// splits, every part handed back is searched once. Only a search for every solution is
/// sent with `split` (one for the first ends where its solution falls).
#[test]
fn running_pieces_split_where_they_run_give_the_records_of_a_run_without_splits() {
    let p = position_with(14, 12);
    for max_solutions in [Some(1), None] {
        let settings = Settings {
            max_solutions,
            ..Settings::default()
        };
        let (plain, _) = solve(settings.clone(), p, None);
        for kill in [false, true] {
            let cfg = Config {
                jobs_per_slot: 1,
                ..cfg()
            };
            let (mut s, req) = one_position(cfg, settings.clone(), p, None, true);
            let (records, handed, sent, _, answered) =
                run_splitting_held(&mut s, req, kill, None, true);
            assert!(handed > 0, "no job handed back anything");
            let split = sent
                .iter()
                .filter(|j| matches!(&j.work, Work::Subtrees(w) if w.split));
            assert_eq!(split.count() > 0, max_solutions.is_none());
            // Every part a running piece handed back went out again as a unit of its
            // own, once (twice at most where its job's executor died).
            let mut back: Vec<(proto::JobId, u8, Vec<Move>)> = Vec::new();
            for (j, (_, split)) in &answered {
                let Work::Subtrees(w) = &j.work else { continue };
                assert!(
                    w.split || split.is_empty(),
                    "a job sent without split split"
                );
                let mut pieces = Vec::new();
                let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
                for p in &w.prefixes {
                    let l = proto::pieces::levels_for(p.len(), w.depth, levels);
                    proto::pieces::for_each_piece(p, l, &mut |q| pieces.push(q.to_vec()));
                }
                for e in split {
                    let piece = &pieces[e.piece as usize];
                    proto::pieces::split_parts(piece, &e.entered, &mut |part, keep| {
                        if !keep {
                            back.push((j.id, w.depth, part.to_vec()));
                        }
                    })
                    .expect("fits");
                }
            }
            if max_solutions.is_none() {
                assert!(back.len() > 100, "{} parts handed back", back.len());
                let twice = (answered.iter())
                    .filter(|(j, (_, split))| j.id.0.is_multiple_of(2) && !split.is_empty())
                    .count();
                assert!(twice > 0, "no job split at a second request");
            }
            // Each unit sent, and whether its job handed it back whole, unclaimed (a part
            // can be handed on so before a job searches it).
            let mut units: Vec<(proto::JobId, u8, &Vec<Move>, bool)> = Vec::new();
            for j in &sent {
                let Work::Subtrees(w) = &j.work else { continue };
                let kept = (answered.iter().rev())
                    .find(|(a, _)| a.id == j.id && a.attempt == j.attempt)
                    .map_or(u32::MAX, |(_, (k, _))| *k);
                let levels = proto::pieces::job_levels(&w.prefixes, w.depth, w.pieces);
                let mut first = 0u32;
                for p in &w.prefixes {
                    units.push((j.id, w.depth, p, first >= kept));
                    let l = proto::pieces::levels_for(p.len(), w.depth, levels);
                    first += proto::pieces::count(p, l) as u32;
                }
            }
            for (from, depth, part) in &back {
                let again = |u: &&(proto::JobId, u8, &Vec<Move>, bool)| {
                    u.0 != *from && u.1 == *depth && u.2 == part && !u.3
                };
                let times = units.iter().filter(again).count();
                assert!(
                    times <= 1 + usize::from(kill),
                    "{part:?} sent {times} times"
                );
                assert!(times >= 1, "{part:?} handed back, never sent again");
            }
            assert_eq!(s.counters().rejected_results, 0);
            assert_eq!(records.len(), 1);
            let (a, b) = (solved(&records[0]), solved(&plain));
            assert_eq!(
                (&a.solutions, a.optimal, a.depth_exhausted, a.stop),
                (&b.solutions, b.optimal, b.depth_exhausted, b.stop),
                "max {max_solutions:?}, kill {kill}"
            );
        }
    }
}

/// Executors whose threads share their jobs, with depths started early: a job of the
/// depth being proved goes to an executor with no room when that executor runs deeper
/// jobs (its threads leave them for it), queued jobs of an early depth are cut again when
/// a depth before it is proved empty, and the records stay those of a run without splits
/// or early start. Executors that do not share are never sent more than their capacity.
#[test]
fn sharing_executors_take_a_shallower_job_past_their_deeper_ones() {
    let p = position_with(14, 12);
    for max_solutions in [Some(1), None] {
        let settings = Settings {
            max_solutions,
            ..Settings::default()
        };
        let (plain, _) = solve(settings.clone(), p, None);
        for shares in [false, true] {
            // Jobs answered in random orders: some leave a depth's pieces queued while
            // the executors hold deeper jobs.
            let (mut past, mut recut) = (0, 0);
            for seed in 0..16 {
                let cfg = Config {
                    jobs_per_slot: 1,
                    early_start: true,
                    ..cfg()
                };
                let (mut s, req) = one_position(cfg, settings.clone(), p, None, true);
                for e in [E1, E2] {
                    s.set_shares(e, shares);
                }
                let mut rng = SplitMix64::new(seed);
                let (records, _, _, most, _) =
                    run_splitting_held(&mut s, req, false, Some(&mut rng), false);
                assert_eq!(records.len(), 1);
                let (a, b) = (solved(&records[0]), solved(&plain));
                assert_eq!(
                    (&a.solutions, a.optimal, a.depth_exhausted, a.stop),
                    (&b.solutions, b.optimal, b.depth_exhausted, b.stop),
                    "seed {seed}, sharing {shares}"
                );
                assert!(most <= 4, "{most} jobs held: twice the capacity at most");
                if !shares {
                    assert!(most <= 2, "{most} jobs held by an executor of 2 slots");
                }
                past += usize::from(most > 2);
                recut += s.counters().recut_jobs;
            }
            if shares {
                assert!(past > 0, "no executor took a job past its deeper ones");
            }
            // Queued jobs of a depth started early were cut again on whole counts, and
            // the records above stayed exact.
            assert!(recut > 0, "no depth started early was cut again");
        }
    }
}

/// Every job sent is answered once, split or not: a result accepted, ignored or handed
/// back for another attempt. A hand-back is not a result: one for a job that ended, or
/// repeated, is counted on its own (`ignored_handbacks`), so an operator's "every
/// dispatch answered" (dispatched = done + ignored + requeued) holds with splits.
#[test]
fn hand_backs_are_not_counted_as_results() {
    let p = position_with(14, 12);
    let cfg = Config {
        jobs_per_slot: 1,
        ..cfg()
    };
    let (mut s, req) = one_position(cfg, Settings::default(), p, None, true);
    let (_, handed, sent) = run_splitting(&mut s, req, false);
    assert!(handed > 0, "no job handed back anything");
    let c = s.counters();
    assert!(c.splits > 0 && c.splits_asked >= c.splits, "{c:?}");
    assert_eq!(c.dispatched, sent.len() as u64);
    assert_eq!(
        c.dispatched,
        c.jobs_done + c.ignored_results + c.requeued,
        "{c:?}"
    );
    // A hand-back for a job long finished: ignored, and not as a result.
    let late = &sent[0];
    s.on_handback(
        E1,
        proto::Handback {
            job: late.id,
            attempt: late.attempt,
            kept: Some(0),
            split: Vec::new(),
        },
    );
    let d = s.counters();
    assert_eq!(d.ignored_handbacks, c.ignored_handbacks + 1);
    assert_eq!(d.ignored_results, c.ignored_results);
}

/// Nodes of a depth started early are counted apart (`cubeswarm_nodes_started_early_total`,
/// and a trace's summary): none without early start; with it, some of the nodes, never
/// all (the first split depth is never early).
#[test]
fn nodes_of_a_depth_started_early_are_counted() {
    let p = position_with(14, 12);
    for early_start in [false, true] {
        let cfg = Config {
            early_start,
            jobs_per_slot: 2,
            ..cfg()
        };
        let (mut s, req) = one_position(cfg, Settings::default(), p, None, false);
        let (records, _) = run_to_end(&mut s, req);
        assert_eq!(records.len(), 1);
        let c = s.counters();
        match early_start {
            false => assert_eq!(c.early_nodes, 0, "{c:?}"),
            true => assert!(c.early_nodes > 0 && c.early_nodes < c.nodes, "{c:?}"),
        }
    }
}
