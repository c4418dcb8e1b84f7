//! The replay of recorded searches (`cubeswarm bench split`): a hand-made trace gives
//! the schedule and figures worked out by hand; the recorded traces load and replay.

use benchtools::splitsim::{replay, simulate, Idle, SimJob, SplitError, SplitOptions};
use benchtools::trace::{DepthCells, Header, Trace, GRAIN, VERSION};
use coordinator::Config;
use std::collections::BTreeMap;
use tables::canonical;

/// Split at 13, lower bound 13, optimal 14; one node per µs. Depth 13: 5,000 nodes under
/// prefix 0 and 3,000 under prefix 30,000; depth 14: 4,000 under prefix 10 and 2,000
/// under prefix 40,000, which holds the one solution.
fn hand_trace() -> Trace {
    let seqs = canonical::sequences(GRAIN);
    let n = seqs.len();
    let cells = |depth: u8, at: &[(usize, u64)]| {
        let mut counts = vec![0u64; n];
        for &(i, c) in at {
            counts[i] = c;
        }
        DepthCells {
            depth,
            complete: true,
            counts,
            ..DepthCells::default()
        }
    };
    let mut solution = seqs[40_000].clone();
    while solution.len() < 14 {
        // Any continuation (the position is made from it, so that it solves it).
        let next = *solution.last().unwrap();
        let m = tables::Move::ALL
            .into_iter()
            .find(|&m| canonical::can_follow(next, m))
            .unwrap();
        solution.push(m);
    }
    let mut depths = BTreeMap::new();
    depths.insert(13, cells(13, &[(0, 5_000), (30_000, 3_000)]));
    depths.insert(14, cells(14, &[(10, 4_000), (40_000, 2_000)]));
    Trace {
        header: Header {
            version: VERSION,
            position: tables::format_moves(&tables::notation::invert_moves(&solution)),
            table: "h48h0k4".to_string(),
            threads: 2,
            split_depth: 13,
            lower_bound: 13,
            shallow_nodes: 1_000,
            shallow_micros: 1_000,
            optimal: Some(14),
            solutions: vec![tables::format_moves(&solution)],
            all_solutions: true,
            nodes: 15_000,
            wall_s: 0.0,
            node_rate: 1e6,
        },
        depths,
        jobs: Vec::new(),
    }
}

fn job(id: u64, depth: u8, start_us: u64, end_us: u64, nodes: u64) -> SimJob {
    SimJob::ran(id, depth, start_us, end_us, nodes)
}

/// The replayed jobs as [`job`] writes them: when and where they ran, not their shapes.
fn timings(jobs: &[SimJob]) -> Vec<SimJob> {
    (jobs.iter())
        .map(|j| SimJob {
            shape: (0, 0, 0),
            ..j.clone()
        })
        .collect()
}

#[test]
fn a_hand_made_trace_replays_to_the_schedule_worked_out_by_hand() {
    let trace = hand_trace();
    // One job a thread, as workers ran before their threads shared jobs.
    let opts = SplitOptions {
        workers: 1,
        threads: 2,
        latency_us: 1_000,
        share: false,
        config: Config {
            jobs_per_slot: 1,
            early_start: false,
            ..Config::default()
        },
        ..SplitOptions::default()
    };
    let r = replay(&trace, &opts).unwrap();
    // Shallow job 1000-2000 (result at 3000); depth 13 cut in two halves of the prefix
    // list (no counts yet): 5000 and 3000 nodes from 4000; depth 14 made at 10000, ranked
    // by depth 13's counts, two jobs of 4000 (depth 13's) nodes: prefix 0 (5000) is too
    // big for one and is cut into its 15 children (333 each): the first 13 make job 4
    // (nothing at 14); the last 2, prefix 30000 and then the zeros in index order, up to
    // the 43,254 units a job may hold at most, make job 5, in which prefix 10 and the
    // solution's prefix 40000 come last: 6000 nodes, result at 18000; the last zero
    // prefix makes job 6, sent when job 4's result is back (12000), at 13000.
    assert_eq!(
        timings(&r.jobs),
        vec![
            job(1, 0, 1_000, 2_000, 1_000),
            job(2, 13, 4_000, 9_000, 5_000),
            job(3, 13, 4_000, 7_000, 3_000),
            job(4, 14, 11_000, 11_000, 0),
            job(5, 14, 11_000, 17_000, 6_000),
            job(6, 14, 13_000, 13_000, 0),
        ]
    );
    assert_eq!(r.wall_us, 18_000);
    // One thread, no latency, the default configuration: 1000 + 8000 + 6000 (depth 14's
    // groups in rank order reach prefix 10 before the solution's prefix).
    assert_eq!(r.one_thread_us, 15_000);
    assert_eq!(r.nodes, 15_000);
    assert_eq!(r.one_thread_nodes, 15_000);
    assert_eq!(
        (
            r.early_started_nodes,
            r.past_optimal_nodes,
            r.cancelled_nodes,
            r.after_solution_nodes
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(
        r.idle,
        Idle {
            start: 3_000.0,
            depth: 2_000.0,
            // Job 6 on the wire 12000-13000 and its result 13000-14000 (dispatch), then
            // nothing to run until 18000.
            tail: 4_000.0,
            dispatch: 12_000.0,
        }
    );
    assert_eq!(r.solutions, trace.solutions());
    assert!((r.efficiency() - 15.0 / 36.0).abs() < 1e-12);
    // 21000 of its 36000 slot-µs idle; the one thread's nodes searched, no more.
    assert!((r.busy() - 15.0 / 36.0).abs() < 1e-12);
    assert_eq!(r.work(), 1.0);
    assert!(r.to_string().ends_with(
        "busy 0.417 of the slot time, over nodes 1.000 x one thread's\n\
         efficiency 0.417 at 2 threads"
    ));
}

#[test]
fn threads_that_share_jobs_take_a_small_depth_in_a_job_per_executor() {
    // 4 workers of 4 threads. Depth 13 is predicted to hold nothing (no depth was
    // searched whole yet): one job a slot for threads that do not share, one an executor
    // for threads that do; and with them job 5's two heavy pieces run side by side.
    let trace = hand_trace();
    let opts = |share| SplitOptions {
        workers: 4,
        threads: 4,
        latency_us: 1_000,
        share,
        config: Config {
            jobs_per_slot: 1,
            early_start: false,
            ..Config::default()
        },
        ..SplitOptions::default()
    };
    // The jobs the depth was cut into when it started (pieces handed back later make
    // more).
    let depth_jobs = |r: &benchtools::splitsim::SplitReport, d: u8| {
        let of = || r.jobs.iter().filter(|j| j.depth == d);
        let first = of().map(|j| j.start_us).min();
        of().filter(|j| Some(j.start_us) == first).count()
    };
    let apart = replay(&trace, &opts(false)).unwrap();
    let shared = replay(&trace, &opts(true)).unwrap();
    assert_eq!(depth_jobs(&apart, 13), 16);
    assert_eq!(depth_jobs(&shared, 13), 4);
    assert_eq!(shared.solutions, trace.solutions());
    assert_eq!(shared.nodes, apart.nodes);
    assert!(
        shared.wall_us < apart.wall_us,
        "{} vs {}",
        shared.wall_us,
        apart.wall_us
    );
}

/// One worker of one thread holding `queue_ahead` jobs more, 1 ms latency, one job per
/// slot, early start off.
fn queued_opts(queue_ahead: usize) -> SplitOptions {
    SplitOptions {
        workers: 1,
        threads: 1,
        queue_ahead,
        latency_us: 1_000,
        share: false,
        config: Config {
            jobs_per_slot: 1,
            early_start: false,
            ..Config::default()
        },
        ..SplitOptions::default()
    }
}

#[test]
fn a_job_queued_ahead_starts_as_its_thread_frees() {
    // One thread and one job queued ahead: the driver sees room for two jobs. Shallow job
    // 1000-2000 (result at 3000); depth 13's two halves sent together at 3000: job 2
    // runs 4000-9000 and job 3, queued, takes the thread as it frees, 9000-12000 (result
    // at 13000); depth 14's first two jobs arrive at 14000 (job 4 is empty, job 5 runs
    // 14000-20000 with the solution); job 6, sent when job 4's result is back (15000),
    // waits for job 5's end. The record comes with job 5's result.
    let trace = hand_trace();
    let r = simulate(&trace, &queued_opts(1)).unwrap();
    assert_eq!(
        timings(&r.jobs),
        vec![
            job(1, 0, 1_000, 2_000, 1_000),
            job(2, 13, 4_000, 9_000, 5_000),
            job(3, 13, 9_000, 12_000, 3_000),
            job(4, 14, 14_000, 14_000, 0),
            job(5, 14, 14_000, 20_000, 6_000),
            job(6, 14, 20_000, 20_000, 0),
        ]
    );
    assert_eq!(r.wall_us, 21_000);
    assert_eq!(r.solutions, trace.solutions());
    // The thread is never free: when it runs nothing, a job or a result is on the wire.
    assert_eq!(
        r.idle,
        Idle {
            dispatch: 6_000.0,
            ..Idle::default()
        }
    );
}

#[test]
fn heartbeats_change_nothing_while_a_lease_covers_the_wire() {
    // Heartbeats every 1 ms (leases of 3 ms) over a 1 ms wire: the driver renews the
    // leases and finds every job listed or on its way.
    let trace = hand_trace();
    let quiet = simulate(&trace, &queued_opts(1)).unwrap();
    let heard = simulate(
        &trace,
        &SplitOptions {
            heartbeat_us: Some(1_000),
            ..queued_opts(1)
        },
    )
    .unwrap();
    assert_eq!(heard.jobs, quiet.jobs);
    assert_eq!((heard.wall_us, heard.idle), (quiet.wall_us, quiet.idle));
}

#[test]
fn jobs_longer_on_the_wire_than_a_lease_are_lost_as_on_a_cluster() {
    // Heartbeats every 0.3 ms (leases of 0.9 ms) over a 1 ms wire: the shallow job is
    // still on its way when a heartbeat that cannot list it comes a lease after its
    // dispatch, so the driver forgets the executor, and with it the only one that holds
    // the table the request needs.
    let trace = hand_trace();
    let e = simulate(
        &trace,
        &SplitOptions {
            heartbeat_us: Some(300),
            ..queued_opts(0)
        },
    )
    .unwrap_err();
    assert!(matches!(e, SplitError::Ended(_)), "{e}");
    assert!(
        e.to_string().contains("no connected worker holds table"),
        "{e}"
    );
}

/// One worker of `threads` slots, 1 ms latency, one job per slot, early start on.
fn early_opts(threads: usize) -> SplitOptions {
    SplitOptions {
        workers: 1,
        threads,
        latency_us: 1_000,
        share: false,
        config: Config {
            jobs_per_slot: 1,
            ..Config::default()
        },
        ..SplitOptions::default()
    }
}

#[test]
fn early_start_on_idle_slots_is_counted_and_cancelled() {
    // Same trace, early start on: depth 14 starts when depth 13's shorter job is back,
    // on the freed slot.
    let trace = hand_trace();
    let r = simulate(&trace, &early_opts(2)).unwrap();
    assert_eq!(r.solutions, trace.solutions());
    let first14 = r.jobs.iter().find(|j| j.depth == 14).unwrap();
    assert!(first14.start_us < 10_000, "{:?}", r.jobs);
    // Every node is accounted for: the jobs' sum.
    assert_eq!(r.nodes, r.jobs.iter().map(|j| j.nodes).sum::<u64>());
    // Depth 14 was ranked on half of depth 13's counts (prefix 0's job was still out),
    // so it is not cut as well as without early start: no promise of a shorter wall.
    assert!(r.wall_us > 10_000);
}

#[test]
fn an_early_depth_that_found_its_solution_stops_its_other_jobs() {
    // Depth 13's prefix 0 runs long (20,000 µs); depth 14, started early on the slots
    // freed meanwhile, finds its solution under prefix 40,000 quickly. That answer
    // stands unless depth 13 finds one (which would void all of depth 14), so prefix
    // 10's 50,000 nodes are of no use: its job must stop when the solution is in, not
    // when depth 13 ends.
    let mut trace = hand_trace();
    let n = trace.depths[&13].counts.len();
    let mut set = |depth: u8, at: &[(usize, u64)]| {
        let c = &mut trace.depths.get_mut(&depth).unwrap().counts;
        *c = vec![0; n];
        for &(i, v) in at {
            c[i] = v;
        }
    };
    set(13, &[(0, 20_000), (30_000, 3_000)]);
    set(14, &[(10, 50_000), (40_000, 2_000)]);
    let r = simulate(&trace, &early_opts(3)).unwrap();
    assert_eq!(r.solutions, trace.solutions());
    let end13 = r
        .jobs
        .iter()
        .filter(|j| j.depth == 13)
        .map(|j| j.end_us)
        .max()
        .unwrap();
    let solved = r
        .jobs
        .iter()
        .filter(|j| j.depth == 14 && !j.cancelled && j.nodes > 0)
        .map(|j| j.end_us)
        .min()
        .unwrap();
    assert!(solved < end13, "the solution came first: {:?}", r.jobs);
    let heavy = r
        .jobs
        .iter()
        .find(|j| j.depth == 14 && j.cancelled)
        .unwrap();
    // Cancelled one round trip after the solution's result (1,000 there, 1,000 back),
    // well before depth 13 ends.
    assert_eq!(heavy.end_us, solved + 2_000, "{:?}", r.jobs);
    assert!(heavy.end_us < end13);
    assert_eq!(r.nodes, r.jobs.iter().map(|j| j.nodes).sum::<u64>());
}

#[test]
fn a_trace_survives_writing_and_reading() {
    let trace = hand_trace();
    let mut text = Vec::new();
    trace.write(&mut text).unwrap();
    let back = Trace::parse("mem", &text[..]).unwrap();
    assert_eq!(back, trace);
    let bad = String::from_utf8(text)
        .unwrap()
        .replace(&format!("\"version\":{VERSION}"), "\"version\":9");
    let e = Trace::parse("mem", bad.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("trace version 9"), "{e}");
}

#[test]
fn the_recorded_traces_load_and_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/traces");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".jsonl.gz") {
            continue;
        }
        let trace = Trace::load(&path).unwrap();
        let optimal = trace.header.optimal.unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with(&format!("trace-{optimal}")), "{name}");
        let r = replay(
            &trace,
            &SplitOptions {
                workers: 4,
                threads: 4,
                ..SplitOptions::default()
            },
        )
        .unwrap();
        assert_eq!(r.solutions.first().map(Vec::len), Some(optimal as usize));
        assert!(r.efficiency() > 0.0 && r.efficiency() <= 1.5, "{name}: {r}");
        // The idle time by cause accounts for every slot-µs not searching: the
        // efficiency is the busy share over the nodes' ratio, to within the one-thread
        // run's start (the shallow job).
        let parts = r.busy() / r.work();
        assert!(
            (parts / r.efficiency() - 1.0).abs() < 0.05,
            "{name}: busy {} / work {} against efficiency {}",
            r.busy(),
            r.work(),
            r.efficiency()
        );
        seen += 1;
    }
    assert!(seen >= 1, "no trace in {}", dir.display());
}
