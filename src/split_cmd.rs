//! `cubeswarm bench split`: a recorded optimal search replayed at scale.

use anyhow::Context as _;
use benchtools::splitsim::{replay, SplitOptions};
use benchtools::trace::Trace;
use std::path::PathBuf;

/// Flags of `bench split`.
#[derive(clap::Args)]
pub struct SplitArgs {
    /// The trace (`cubeswarm solve --trace FILE`; .gz read through gzip).
    #[arg(long)]
    trace: PathBuf,
    /// Simulated workers.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Threads (job slots) of each worker.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Jobs each worker holds beyond its threads (started as soon as a thread frees)
    /// [default: a cluster worker's, 1; 0 is the embedded executor].
    #[arg(long, default_value_t = server::QUEUED_AHEAD)]
    queue_ahead: usize,
    /// One-way message latency, milliseconds.
    #[arg(long, default_value_t = 1.0)]
    latency: f64,
    /// Heartbeat period in milliseconds (leases of three periods); none by default.
    #[arg(long)]
    heartbeat: Option<f64>,
    /// Nodes per second of one thread [default: the trace's].
    #[arg(long)]
    rate: Option<f64>,
    /// Prefix length the scheduler cuts depths into (1 to 5).
    #[arg(long)]
    prefix_len: Option<usize>,
    /// Subtree jobs per slot and depth, at least.
    #[arg(long)]
    jobs_per_slot: Option<usize>,
    /// Nodes a subtree job should hold (predicted from the previous depth).
    #[arg(long)]
    job_nodes: Option<u64>,
    /// Round trips a job must last for a depth to get more than one job per slot.
    #[arg(long)]
    job_round_trips: Option<f64>,
    /// Most moves a subtree job's pieces add to its units, 0 to 3 [default: the
    /// scheduler's, 2].
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=i64::from(proto::pieces::MAX_PIECE_LEVELS)))]
    piece_levels: Option<u8>,
    /// Ask for every optimal solution (the whole optimal depth), as `solve --all`.
    #[arg(long)]
    all: bool,
    /// Do not start depth d+1 before d is proved empty.
    #[arg(long)]
    no_early_start: bool,
    /// A worker's free thread does not join its running jobs (one job per thread, as
    /// workers ran before they shared jobs).
    #[arg(long)]
    no_share: bool,
    /// Cut a symmetric position into every prefix (a trace recorded with
    /// `solve --no-symmetry`); by default one per orbit, as `solve` does.
    #[arg(long)]
    no_symmetry: bool,
    /// Also print, per depth, its jobs, when its first started and its last ended, and
    /// its nodes.
    #[arg(long)]
    timeline: bool,
}

/// Runs `bench split`.
pub fn run(a: SplitArgs) -> anyhow::Result<()> {
    let trace = Trace::load(&a.trace)?;
    let ms = |name: &str, v: f64| -> anyhow::Result<u64> {
        anyhow::ensure!(
            v.is_finite() && v >= 0.0,
            "--{name} must be a number of ms >= 0"
        );
        Ok((v * 1000.0).round() as u64)
    };
    anyhow::ensure!(
        a.workers >= 1 && a.threads >= 1,
        "--workers and --threads must be at least 1"
    );
    if let Some(p) = a.prefix_len {
        anyhow::ensure!(
            (1..=5).contains(&p),
            "--prefix-len must be 1 to 5 (the trace's grain)"
        );
    }
    let mut config = coordinator::Config::default();
    if let Some(p) = a.prefix_len {
        config.prefix_len = p;
    }
    if let Some(j) = a.jobs_per_slot {
        config.jobs_per_slot = j.max(1);
    }
    if let Some(n) = a.job_nodes {
        config.job_nodes = n.max(1);
    }
    if let Some(r) = a.job_round_trips {
        anyhow::ensure!(r.is_finite() && r >= 0.0, "--job-round-trips must be >= 0");
        config.job_round_trips = r;
    }
    if let Some(l) = a.piece_levels {
        config.piece_levels = l;
    }
    config.early_start = !a.no_early_start;
    config.symmetry = !a.no_symmetry;
    let opts = SplitOptions {
        workers: a.workers,
        threads: a.threads,
        queue_ahead: a.queue_ahead,
        latency_us: ms("latency", a.latency)?,
        heartbeat_us: a
            .heartbeat
            .map(|h| ms("heartbeat", h))
            .transpose()?
            .map(|h| h.max(1)),
        node_rate: a.rate,
        max_solutions: if a.all { None } else { Some(1) },
        share: !a.no_share,
        config,
    };
    let h = &trace.header;
    println!(
        "trace {}: {} ({} moves, table {}, {:.1} M nodes/s per thread recorded); {} x {} threads, latency {} ms",
        a.trace.display(),
        h.position,
        h.optimal.map_or("?".to_string(), |o| o.to_string()),
        h.table,
        h.node_rate / 1e6,
        a.workers,
        a.threads,
        a.latency
    );
    if !h.all_solutions {
        // Its optimal depth holds only the solutions the recording found first: an order
        // that reaches another solution first searches on to a known one.
        println!(
            "note: the trace was recorded for the first solution only ({} known); a replay whose order differs from the recording's may search past solutions the trace does not hold (record with --all for a faithful replay)",
            h.solutions.len()
        );
    }
    let report = replay(&trace, &opts).context("replaying the trace")?;
    if a.timeline {
        print_timeline(&report);
    }
    println!("{report}");
    Ok(())
}

/// Per depth: jobs, first start, last end (ms), nodes, cancelled jobs.
fn print_timeline(r: &benchtools::splitsim::SplitReport) {
    let mut depths: std::collections::BTreeMap<u8, (usize, u64, u64, u64, usize)> =
        Default::default();
    let mut longest: std::collections::BTreeMap<u8, &benchtools::splitsim::SimJob> =
        Default::default();
    let mut last = longest.clone();
    for j in &r.jobs {
        let e = depths.entry(j.depth).or_insert((0, u64::MAX, 0, 0, 0));
        e.0 += 1;
        e.1 = e.1.min(j.start_us);
        e.2 = e.2.max(j.end_us);
        e.3 += j.nodes;
        e.4 += usize::from(j.cancelled);
        let l = longest.entry(j.depth).or_insert(j);
        if j.end_us - j.start_us > l.end_us - l.start_us {
            *l = j;
        }
        let z = last.entry(j.depth).or_insert(j);
        if j.end_us > z.end_us {
            *z = j;
        }
    }
    println!(
        "depth  jobs  first start ms  last end ms  nodes  cancelled  longest job, last job (ms, nodes; units, their moves, piece levels)"
    );
    let show = |l: &benchtools::splitsim::SimJob| {
        format!(
            "{:.3}-{:.3} {:.3e}; {} x {} moves, {} levels",
            l.start_us as f64 / 1e3,
            l.end_us as f64 / 1e3,
            l.nodes as f64,
            l.shape.0,
            l.shape.1,
            l.shape.2,
        )
    };
    for (d, (n, s, e, nodes, c)) in depths {
        let Some(l) = longest.get(&d) else { continue };
        let z = last.get(&d).map_or(String::new(), |z| show(z));
        println!(
            "{d:>5} {n:>6} {:>14.3} {:>12.3} {:>10.3e} {c:>9}  {}  |  {z}",
            s as f64 / 1e3,
            e as f64 / 1e3,
            nodes as f64,
            show(l),
        );
    }
}
