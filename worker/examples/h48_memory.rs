//! Where the optimal search's time goes at one table size: the node rate with the real
//! table against the compute-only rate of the *same* search (issue 39's instrument).
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example h48_memory -- DIR TABLE DEPTH "MOVES" [THREADS] [LANES] [ROUNDS]`
//!
//! Searches depth DEPTH of the position MOVES in its 43,254 four-move subtrees, as the
//! worker does (LANES interleaved on each thread, default 3, the runner's), the subtrees
//! dealt to THREADS threads (default 1) in turn. The main table TABLE (h48hNk2) is copied
//! into huge pages and falls back on eoesep, as the solver reads it; both must be in DIR.
//!
//! First one untimed pass records, per thread, every value the main table and its
//! fallback answer, in the order the thread asks for them (a thread's order is fixed: its
//! subtrees and the lanes' interleaving do not depend on timing). Then ROUNDS times
//! (default 3), alternating:
//! - `real`: the search as the solver runs it, its lookups prefetched and read from the
//!   table;
//! - `compute`: the same search, every index computed as before, but each value taken
//!   from the thread's recording (a sequential read the hardware prefetches) and nothing
//!   prefetched: the same nodes, the same lookups, no random memory traffic;
//! - `prefetch`: `compute` with the real table's lines prefetched as the search does,
//!   but never read: what issuing the prefetches costs (where a prefetch that misses the
//!   TLB holds the core up until its page walk is done, most of the memory time is here).
//!
//! With `MODES=real` in the environment, only the real search is timed (to compare two
//! binaries on it). Printed: nodes and lookups of each pass (they must agree, or the replay diverged and
//! the tool says so), the rates, `real / compute`, lookups per node, and how much of the
//! table the kernel backs with huge pages (from `/proc/self/smaps`). With the random-line
//! floor of `page_walk` at the table's size (ns per lookup once latency is hidden), the
//! memory time a node cannot avoid is `floor × lookups per node`: a search that overlaps
//! memory with computation runs at about `max(compute, memory)` per node, one that does
//! not at their sum.
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use tables::packed::Packed2;
use tables::{parse_moves, Cube, Move};
use worker::h48::cocsep::Cocsep;
use worker::h48::coords::Coords;
use worker::h48::eoesep::Eoesep;
use worker::h48::search::{search_lanes, K2With, Lookup, Probe, Pruner};
use worker::StopToken;

/// `None` in a recording.
const NONE: u8 = 0xff;

/// The real table, every answer appended to a log.
struct Record<'a, L> {
    inner: &'a L,
    log: Mutex<Vec<u8>>,
}

impl<L: Lookup> Record<'_, L> {
    fn push(&self, v: u8) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(v);
    }
}

impl<L: Lookup> Lookup for Record<'_, L> {
    fn prefetch(&self, _idx: u64) {}
    fn bytes(&self) -> u64 {
        self.inner.bytes()
    }
    fn first(&self, idx: u64) -> Option<u8> {
        let v = self.inner.first(idx);
        self.push(v.unwrap_or(NONE));
        v
    }
    fn at_most(&self) -> u8 {
        self.inner.at_most()
    }
    fn fallback(&self, pr: &Probe) -> u8 {
        let v = self.inner.fallback(pr);
        self.push(v);
        v
    }
}

/// The recorded answers, read back in order; the index is computed and then ignored,
/// or only prefetched from the real table (`prefetch`: the cost of issuing the
/// prefetches, without waiting for a read).
struct Replay<'a> {
    log: Vec<u8>,
    prefetch: Option<&'a Packed2>,
    /// The real table's size (prefetches are grouped by it).
    bytes: u64,
    /// Next answer. One thread reads it: a relaxed load and store, no atomic add.
    at: AtomicUsize,
    at_most: u8,
}

impl Replay<'_> {
    #[inline(always)]
    fn next(&self) -> u8 {
        let i = self.at.load(Ordering::Relaxed);
        self.at.store(i + 1, Ordering::Relaxed);
        self.log.get(i).copied().unwrap_or(0)
    }
}

impl Lookup for Replay<'_> {
    #[inline(always)]
    fn prefetch(&self, idx: u64) {
        match self.prefetch {
            Some(t) => t.prefetch(idx),
            None => {
                std::hint::black_box(idx);
            }
        }
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    #[inline(always)]
    fn first(&self, idx: u64) -> Option<u8> {
        std::hint::black_box(idx);
        match self.next() {
            NONE => None,
            v => Some(v),
        }
    }
    #[inline(always)]
    fn at_most(&self) -> u8 {
        self.at_most
    }
    #[inline(always)]
    fn fallback(&self, pr: &Probe) -> u8 {
        std::hint::black_box(pr.idx);
        self.next()
    }
}

/// The subtrees thread `t` of `threads` searches.
fn share(prefixes: &[Vec<Move>], t: usize, threads: usize) -> Vec<&[Move]> {
    prefixes
        .iter()
        .skip(t)
        .step_by(threads)
        .map(|p| &p[..])
        .collect()
}

/// One thread's search of its subtrees through `p`: (nodes, lookups).
fn run<L: Lookup>(
    p: &Pruner<L>,
    cube: &Cube,
    depth: u8,
    lanes: usize,
    mine: &[&[Move]],
) -> (u64, u64) {
    let stop = StopToken::new();
    let mut it = mine.iter().enumerate();
    let (mut nodes, mut lookups) = (0, 0);
    search_lanes(
        p,
        cube,
        depth,
        lanes,
        &stop,
        &mut || it.next().map(|(i, p)| (i, *p, usize::MAX)),
        &mut |_| true,
        &mut |_, o| {
            nodes += o.nodes;
            lookups += o.lookups;
        },
    );
    (nodes, lookups)
}

/// One replaying pruner per thread's recording.
fn replays<'a>(
    recorded: &[(Vec<u8>, u64, u64)],
    dir: &Path,
    prefetch: Option<&'a Packed2>,
    bytes: u64,
    at_most: u8,
    eo_bits: u32,
) -> Result<Vec<Pruner<Replay<'a>>>, worker::Error> {
    recorded
        .iter()
        .map(|(log, _, _)| {
            Ok(Pruner {
                coords: Coords::new(),
                cocsep: Cocsep::open(dir)?,
                table: Replay {
                    log: log.clone(),
                    prefetch,
                    bytes,
                    at: AtomicUsize::new(0),
                    at_most,
                },
                eo_bits,
            })
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: h48_memory DIR TABLE DEPTH MOVES [THREADS] [LANES] [ROUNDS]");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let name = &args[2];
    let depth: u8 = args[3].parse()?;
    let cube = Cube::from_moves(&parse_moves(&args[4])?);
    let threads: usize = args.get(5).map_or(Ok(1), |s| s.parse())?;
    let lanes: usize = args.get(6).map_or(Ok(3), |s| s.parse())?;
    let rounds: usize = args.get(7).map_or(Ok(3), |s| s.parse())?;
    // MODES=real: only the real search (binaries compared on it alone, more rounds).
    let modes: Vec<usize> = match std::env::var("MODES").as_deref() {
        Ok("real") => vec![0],
        _ => vec![0, 1, 2],
    };
    let replay = modes.len() > 1;
    let Some(worker::h48::TableKind::H48 { eo_bits, bits: 2 }) =
        worker::h48::TableKind::parse(name)
    else {
        return Err(format!("{name}: an h48hNk2 table is needed").into());
    };
    let k2 = worker::h48::tables::open_k2(dir, name)?.to_huge_pages();
    let real = Pruner {
        coords: Coords::new(),
        cocsep: Cocsep::open(dir)?,
        table: K2With {
            k2,
            fallback: Eoesep::open(dir)?.in_memory(true),
        },
        eo_bits: eo_bits.into(),
    };
    let table_bytes = real.table.k2.as_bytes();
    match tables::huge::coverage(table_bytes.as_ptr() as usize) {
        Some((size, huge)) => println!(
            "{name}: {:.0} MB, {:.1}% of its mapping in huge pages ({huge} of {size} kB)",
            table_bytes.len() as f64 / 1e6,
            100.0 * huge as f64 / size as f64
        ),
        None => println!("{name}: huge-page coverage unknown (no /proc/self/smaps)"),
    }
    let prefixes = tables::canonical::sequences(4);
    let shares: Vec<Vec<&[Move]>> = (0..threads).map(|t| share(&prefixes, t, threads)).collect();

    // The recording: one untimed pass, one log per thread.
    let t0 = Instant::now();
    let recorded: Vec<(Vec<u8>, u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .iter()
            .map(|mine| {
                let real = &real;
                let cube = &cube;
                s.spawn(move || -> Result<(Vec<u8>, u64, u64), worker::Error> {
                    if !replay {
                        let (n, l) = run(real, cube, depth, lanes, mine);
                        return Ok((Vec::new(), n, l));
                    }
                    let p = Pruner {
                        coords: Coords::new(),
                        cocsep: Cocsep::open(dir)?,
                        table: Record {
                            inner: &real.table,
                            log: Mutex::new(Vec::new()),
                        },
                        eo_bits: real.eo_bits,
                    };
                    let (n, l) = run(&p, cube, depth, lanes, mine);
                    let log = p.table.log.into_inner().unwrap_or_else(|e| e.into_inner());
                    Ok((log, n, l))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("recording thread"))
            .collect::<Result<_, _>>()
    })?;
    let nodes: u64 = recorded.iter().map(|r| r.1).sum();
    let lookups: u64 = recorded.iter().map(|r| r.2).sum();
    let answers: usize = recorded.iter().map(|r| r.0.len()).sum();
    println!(
        "depth {depth}, {threads} thread(s), {lanes} lanes: {nodes} nodes, {lookups} lookups \
         ({:.3} a node), {answers} answers recorded (fallback reads included) in {:.1} s",
        lookups as f64 / nodes as f64,
        t0.elapsed().as_secs_f64()
    );
    let base = real.table.k2.base();
    let bytes = real.table.bytes();
    let compute_only = replays(&recorded, dir, None, bytes, base, real.eo_bits)?;
    let prefetching = replays(
        &recorded,
        dir,
        Some(&real.table.k2),
        bytes,
        base,
        real.eo_bits,
    )?;

    let mut rates = [Vec::new(), Vec::new(), Vec::new()];
    for round in 1..=rounds {
        for &mode in &modes {
            let t = Instant::now();
            let counts: Vec<(u64, u64)> = std::thread::scope(|s| {
                let handles: Vec<_> = shares
                    .iter()
                    .enumerate()
                    .map(|(k, mine)| {
                        let replay = if mode == 1 { &compute_only[k] } else { &prefetching[k] };
                        let (real, cube) = (&real, &cube);
                        s.spawn(move || {
                            if mode > 0 {
                                replay.table.at.store(0, Ordering::Relaxed);
                                let out = run(replay, cube, depth, lanes, mine);
                                let consumed = replay.table.at.load(Ordering::Relaxed);
                                if consumed != replay.table.log.len() {
                                    eprintln!(
                                        "thread {k}: the replay read {consumed} answers of {}: it diverged",
                                        replay.table.log.len()
                                    );
                                    std::process::exit(1);
                                }
                                out
                            } else {
                                run(real, cube, depth, lanes, mine)
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("search thread"))
                    .collect()
            });
            let secs = t.elapsed().as_secs_f64();
            let n: u64 = counts.iter().map(|c| c.0).sum();
            let l: u64 = counts.iter().map(|c| c.1).sum();
            if (n, l) != (nodes, lookups) {
                return Err(format!("round {round}: {n} nodes and {l} lookups, the recording had {nodes} and {lookups}").into());
            }
            let rate = n as f64 / secs / 1e6;
            let label = ["real    ", "compute ", "prefetch"][mode];
            rates[mode].push(rate);
            println!(
                "round {round} {label}: {secs:.3} s, {rate:.1} M nodes/s, {:.2} ns a node a thread",
                secs * 1e9 * threads as f64 / n as f64
            );
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let [r, c, f] = rates.each_mut().map(median);
    println!(
        "median: real {r:.1} M nodes/s, compute-only {c:.1} M nodes/s, \
         compute with the prefetches {f:.1} M nodes/s; real / compute {:.1}%",
        100.0 * r / c
    );
    Ok(())
}
