//! The work of one optimal search, recorded (`cubeswarm solve --trace FILE`) so that it
//! can be replayed under another splitting (`cubeswarm bench split`, [`crate::splitsim`]).
//!
//! A trace is a JSON-lines file: a [`Header`] line (the position, its table, the lower
//! bound and the shallow job, the solutions and the node rate of the run), one
//! [`DepthCells`] line per split depth (the node count of every canonical 4-move prefix
//! subtree at that depth, and for the heavy ones the counts of their 5-move children;
//! from version 2, where `bench refine-trace` added them, the counts of the 6- and 7-move
//! children of heavy 5- and 6-move prefixes), and one [`JobTrace`] line per job the
//! recording run dispatched (its depth, size, nodes, times and outcome). A name ending in
//! `.gz` is read and written through the system's `gzip`.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use tables::canonical;
use tables::{format_moves, parse_moves, Move};

mod lookup;
pub use lookup::{rank, share, DepthIndex};

/// Format version written in the header: 2 added [`DepthCells::finer`].
pub const VERSION: u32 = 2;

/// The oldest version this build reads (a version 1 trace has no `finer` counts).
pub const OLDEST_VERSION: u32 = 1;

/// Length of the prefixes whose counts every depth lists ([`DepthCells::counts`]).
pub const GRAIN: usize = 4;

/// Why a trace cannot be read or used.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file cannot be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A line is not a trace line.
    #[error("{path}, line {line}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// Its line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file is a trace but not a usable one.
    #[error("{0}")]
    Invalid(String),
}

/// What the recording run was and found.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// [`VERSION`].
    pub version: u32,
    /// The position as given (a scramble or facelets).
    pub position: String,
    /// The H48 table searched with.
    pub table: String,
    /// Executor threads of the recording run.
    pub threads: usize,
    /// Depths below this were searched whole in one shallow job.
    pub split_depth: u8,
    /// The lower bound the shallow job proved.
    pub lower_bound: u8,
    /// Nodes and time (µs) of the shallow job.
    pub shallow_nodes: u64,
    /// Its time on one thread, µs.
    pub shallow_micros: u64,
    /// The optimal length found (`None`: none found within the searched depths).
    pub optimal: Option<u8>,
    /// Every solution found at the optimal depth (all of them when `all_solutions`).
    pub solutions: Vec<String>,
    /// Whether the optimal depth was searched whole (every solution asked for).
    pub all_solutions: bool,
    /// Search nodes of every job the run accepted or cancelled.
    pub nodes: u64,
    /// Wall time of the run, seconds.
    pub wall_s: f64,
    /// Nodes per second of one thread: subtree nodes over subtree job time.
    pub node_rate: f64,
}

/// Node counts of one split depth.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct DepthCells {
    /// The depth.
    pub depth: u8,
    /// Whether every subtree of the depth was searched to its end.
    pub complete: bool,
    /// Nodes of each canonical [`GRAIN`]-move prefix's subtree, in the order of
    /// [`canonical::sequences`].
    pub counts: Vec<u64>,
    /// For heavy prefixes (index into `counts`): the nodes of each 5-move child, by the
    /// fifth move's index (18 entries; 0 for moves that cannot follow).
    pub fine: Vec<(u32, Vec<u64>)>,
    /// For heavy prefixes of [`FINER_LENS`] moves (as move text, `"R U F2 D' L"`): the
    /// nodes of each one-move child, by the move's index (18 entries; 0 for moves that
    /// cannot follow), each child searched as its own subtree (`bench refine-trace`);
    /// sorted by prefix. Empty in a version 1 trace.
    #[serde(default)]
    pub finer: Vec<(String, Vec<u64>)>,
}

/// One job of the recording run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JobTrace {
    /// Its id in the run.
    pub id: u64,
    /// Its depth (0: the shallow job).
    pub depth: u8,
    /// Prefixes it held, and their length.
    pub prefixes: usize,
    /// Length of its prefixes.
    pub prefix_len: usize,
    /// Dispatched at (µs from the run's start).
    pub start_us: u64,
    /// Result back at (µs; `None`: no result came back).
    pub end_us: Option<u64>,
    /// Its own time, µs, as the executor measured it.
    pub micros: u64,
    /// Search nodes.
    pub nodes: u64,
    /// `exhausted`, `solved`, `cancelled`, `failed` or `lost`.
    pub outcome: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Line {
    Header(Header),
    Depth(DepthCells),
    Job(JobTrace),
}

/// A whole trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The run.
    pub header: Header,
    /// Split depths, by depth.
    pub depths: BTreeMap<u8, DepthCells>,
    /// The jobs, in dispatch order.
    pub jobs: Vec<JobTrace>,
}

/// A heavy prefix gets its 5-move children recorded when it holds more than this
/// fraction of its depth's nodes.
pub const FINE_FRACTION: f64 = 1.0 / 8192.0;

/// Lengths of the prefixes whose children [`DepthCells::finer`] lists.
pub const FINER_LENS: std::ops::RangeInclusive<usize> = GRAIN + 1..=GRAIN + 2;

impl DepthCells {
    /// Cells of `depth` from node counts of 5-move prefixes (`seqs5`, canonical order,
    /// each with its count): 4-move counts summed, children kept for heavy prefixes.
    pub fn from_fine(depth: u8, complete: bool, seqs5: &[(Vec<Move>, u64)]) -> DepthCells {
        let index4 = prefix_index(GRAIN);
        let n4 = index4.len();
        let mut counts = vec![0u64; n4];
        let mut kids: HashMap<u32, Vec<u64>> = HashMap::new();
        for (seq, nodes) in seqs5 {
            let Some(&i) = seq.get(..GRAIN).and_then(|p| index4.get(p)) else {
                continue;
            };
            counts[i as usize] += nodes;
            if let Some(&m) = seq.get(GRAIN) {
                kids.entry(i).or_insert_with(|| vec![0; 18])[m.index()] += nodes;
            }
        }
        let total: u64 = counts.iter().sum();
        let bar = (total as f64 * FINE_FRACTION) as u64;
        let mut fine: Vec<(u32, Vec<u64>)> = kids
            .into_iter()
            .filter(|(i, _)| counts[*i as usize] > bar.max(1))
            .collect();
        fine.sort_by_key(|(i, _)| *i);
        DepthCells {
            depth,
            complete,
            counts,
            fine,
            finer: Vec::new(),
        }
    }

    /// Nodes of the depth.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// Index of each canonical sequence of `len` moves in [`canonical::sequences`] order.
pub fn prefix_index(len: usize) -> HashMap<Vec<Move>, u32> {
    canonical::sequences(len)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, i as u32))
        .collect()
}

impl Trace {
    /// Reads a trace (through `gzip -dc` when the name ends in `.gz`).
    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let io = |source| TraceError::Io {
            path: name.clone(),
            source,
        };
        let text = if name.ends_with(".gz") {
            let out = std::process::Command::new("gzip")
                .arg("-dc")
                .arg(path)
                .output()
                .map_err(io)?;
            if !out.status.success() {
                return Err(TraceError::Invalid(format!(
                    "{name}: gzip -dc failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            out.stdout
        } else {
            let mut buf = Vec::new();
            std::fs::File::open(path)
                .map_err(io)?
                .read_to_end(&mut buf)
                .map_err(io)?;
            buf
        };
        Trace::parse(&name, BufReader::new(&text[..]))
    }

    /// Parses a trace from its lines (`name` for messages).
    pub fn parse(name: &str, input: impl BufRead) -> Result<Trace, TraceError> {
        let mut header = None;
        let mut depths = BTreeMap::new();
        let mut jobs = Vec::new();
        for (k, line) in input.lines().enumerate() {
            let line = line.map_err(|source| TraceError::Io {
                path: name.to_string(),
                source,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let parsed: Line = serde_json::from_str(&line).map_err(|e| TraceError::Parse {
                path: name.to_string(),
                line: k + 1,
                message: e.to_string(),
            })?;
            match parsed {
                Line::Header(h) => header = Some(h),
                Line::Depth(d) => {
                    depths.insert(d.depth, d);
                }
                Line::Job(j) => jobs.push(j),
            }
        }
        let header =
            header.ok_or_else(|| TraceError::Invalid(format!("{name}: no header line")))?;
        if !(OLDEST_VERSION..=VERSION).contains(&header.version) {
            return Err(TraceError::Invalid(format!(
                "{name}: trace version {} (this build reads {OLDEST_VERSION} to {VERSION})",
                header.version
            )));
        }
        let n4 = canonical::sequences(GRAIN).len();
        for d in depths.values() {
            if d.counts.len() != n4 {
                return Err(TraceError::Invalid(format!(
                    "{name}: depth {} lists {} prefixes, not {n4}",
                    d.depth,
                    d.counts.len()
                )));
            }
            if d.fine
                .iter()
                .any(|(i, k)| *i as usize >= n4 || k.len() != 18)
            {
                return Err(TraceError::Invalid(format!(
                    "{name}: depth {} has a malformed fine entry",
                    d.depth
                )));
            }
            check_finer(&d.finer)
                .map_err(|why| TraceError::Invalid(format!("{name}: depth {}: {why}", d.depth)))?;
        }
        for s in &header.solutions {
            parse_moves(s)
                .map_err(|e| TraceError::Invalid(format!("{name}: solution {s:?}: {e}")))?;
        }
        Ok(Trace {
            header,
            depths,
            jobs,
        })
    }

    /// Writes the trace (through `gzip -c` when the name ends in `.gz`).
    pub fn save(&self, path: &Path) -> Result<(), TraceError> {
        let name = path.display().to_string();
        let io = |source| TraceError::Io {
            path: name.clone(),
            source,
        };
        let mut text = Vec::new();
        self.write(&mut text).map_err(io)?;
        if name.ends_with(".gz") {
            let file = std::fs::File::create(path).map_err(io)?;
            let mut child = std::process::Command::new("gzip")
                .arg("-9c")
                .stdin(std::process::Stdio::piped())
                .stdout(file)
                .spawn()
                .map_err(io)?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(&text).map_err(io)?;
            }
            let status = child.wait().map_err(io)?;
            if !status.success() {
                return Err(TraceError::Invalid(format!("{name}: gzip failed")));
            }
            Ok(())
        } else {
            std::fs::write(path, text).map_err(io)
        }
    }

    /// Writes the trace's lines.
    pub fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut line = |l: &Line| -> std::io::Result<()> {
            serde_json::to_writer(&mut *out, l)?;
            out.write_all(b"\n")
        };
        line(&Line::Header(self.header.clone()))?;
        for d in self.depths.values() {
            line(&Line::Depth(d.clone()))?;
        }
        for j in &self.jobs {
            line(&Line::Job(j.clone()))?;
        }
        Ok(())
    }

    /// The solutions at the optimal depth, as moves.
    pub fn solutions(&self) -> Vec<Vec<Move>> {
        self.header
            .solutions
            .iter()
            .filter_map(|s| parse_moves(s).ok())
            .collect()
    }

    /// The nodes of each of `prefixes` (canonical sequences of one length, at least 1) at
    /// `depth`: a prefix of [`GRAIN`] moves or more gets its own count where the trace
    /// records it, else an equal share of its deepest recorded ancestor's (see
    /// [`DepthIndex::count`]); a shorter one the sum of its [`GRAIN`]-move descendants.
    /// Depths not recorded cost nothing.
    pub fn costs(&self, depth: u8, prefixes: &[Vec<Move>]) -> Result<Vec<u64>, TraceError> {
        let Some(cells) = self.depths.get(&depth) else {
            return Ok(vec![0; prefixes.len()]);
        };
        let len = prefixes.first().map_or(GRAIN, Vec::len);
        if len == 0 || prefixes.iter().any(|p| p.len() != len) {
            return Err(TraceError::Invalid(format!(
                "prefixes of {len} moves: a trace replays prefixes of one length, at least 1"
            )));
        }
        if len >= GRAIN {
            let index = DepthIndex::new(cells);
            return Ok(prefixes.iter().map(|p| index.count(p)).collect());
        }
        let seqs4 = canonical::sequences(GRAIN);
        let index = prefix_index(len);
        let mut out = vec![0u64; prefixes.len()];
        let at: HashMap<u32, usize> = prefixes
            .iter()
            .enumerate()
            .filter_map(|(k, p)| Some((*index.get(p)?, k)))
            .collect();
        for (s, &c) in seqs4.iter().zip(&cells.counts) {
            if let Some(&k) = index.get(&s[..len]).and_then(|i| at.get(i)) {
                out[k] += c;
            }
        }
        Ok(out)
    }
}

/// Why `finer` (one depth's [`DepthCells::finer`]) is malformed, if it is: each prefix a
/// canonical sequence of [`FINER_LENS`] moves listed once, in order, with 18 counts that
/// are 0 for the moves that cannot follow it.
fn check_finer(finer: &[(String, Vec<u64>)]) -> Result<(), String> {
    let mut last: Option<Vec<Move>> = None;
    for (text, kids) in finer {
        let bad = |why: &str| Err(format!("finer entry {text:?}: {why}"));
        let Ok(p) = parse_moves(text) else {
            return bad("not a move sequence");
        };
        if !FINER_LENS.contains(&p.len()) || !canonical::is_canonical(&p) {
            return bad(&format!(
                "not a canonical prefix of {} to {} moves",
                FINER_LENS.start(),
                FINER_LENS.end()
            ));
        }
        if kids.len() != Move::COUNT {
            return bad(&format!("{} counts, not {}", kids.len(), Move::COUNT));
        }
        let allowed = canonical::allowed_after(p.last().copied());
        if (kids.iter().enumerate()).any(|(m, &c)| c > 0 && allowed & (1 << m) == 0) {
            return bad("a count for a move that cannot follow");
        }
        if last.as_ref().is_some_and(|l| *l >= p) {
            return bad("out of order or listed twice");
        }
        last = Some(p);
    }
    Ok(())
}

/// A sequence of moves as the trace writes it.
pub fn moves_text(moves: &[Move]) -> String {
    format_moves(moves)
}

/// The header of the tests' hand-made traces: "R U" on h48h0k4, split from depth 12.
#[cfg(test)]
pub(crate) fn test_header(version: u32) -> Header {
    Header {
        version,
        position: "R U".to_string(),
        table: "h48h0k4".to_string(),
        threads: 1,
        split_depth: 12,
        lower_bound: 12,
        shallow_nodes: 0,
        shallow_micros: 0,
        optimal: None,
        solutions: Vec::new(),
        all_solutions: true,
        nodes: 0,
        wall_s: 0.0,
        node_rate: 1e6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(text: &str) -> Vec<Move> {
        parse_moves(text).unwrap()
    }

    fn header(version: u32) -> Header {
        test_header(version)
    }

    /// Depth 14: every 4-move prefix 1 node but "U R F D" (115,000), whose 5-move
    /// children are recorded ("U R F D L" 60,000, the others 5,000); "U R F D L" and "U R
    /// F D L U" refined, their children summing to their counts.
    fn refined() -> Trace {
        let p4 = moves("U R F D");
        let mut counts = vec![1; canonical::sequences(GRAIN).len()];
        let i4 = rank(&p4).unwrap();
        counts[i4] = 115_000;
        let mut fine = vec![0; 18];
        for m in Move::ALL {
            if canonical::can_follow(p4[3], m) {
                fine[m.index()] = 5_000;
            }
        }
        fine[moves("L")[0].index()] = 60_000;
        let kids = |after: &str, heavy: &str, c: u64, rest: u64| {
            let last = *moves(after).last().unwrap();
            let mut k = vec![0; 18];
            for m in Move::ALL {
                if canonical::can_follow(last, m) {
                    k[m.index()] = rest;
                }
            }
            k[moves(heavy)[0].index()] = c;
            (after.to_string(), k)
        };
        let cells = DepthCells {
            depth: 14,
            complete: true,
            counts,
            fine: vec![(i4 as u32, fine)],
            finer: vec![
                kids("U R F D L", "U", 49_000, 1_000),
                kids("U R F D L U", "F2", 47_600, 100),
            ],
        };
        Trace {
            header: header(VERSION),
            depths: BTreeMap::from([(14, cells)]),
            jobs: Vec::new(),
        }
    }

    fn cost(trace: &Trace, prefix: &str) -> u64 {
        trace.costs(14, &[moves(prefix)]).unwrap()[0]
    }

    #[test]
    fn a_prefix_gets_its_recorded_count_else_an_equal_share_of_its_deepest_recorded_ancestor() {
        let t = refined();
        assert_eq!(cost(&t, "U R F D"), 115_000);
        assert_eq!(cost(&t, "U R F D L"), 60_000);
        assert_eq!(cost(&t, "U R F D B"), 5_000);
        // Recorded 6- and 7-move counts, exactly.
        assert_eq!(cost(&t, "U R F D L U"), 49_000);
        assert_eq!(cost(&t, "U R F D L F"), 1_000);
        assert_eq!(cost(&t, "U R F D L U F2"), 47_600);
        assert_eq!(cost(&t, "U R F D L U R"), 100);
        // Not recorded: equal shares. "U R F D L F" (1,000) over the 15 moves after F; "U
        // R F D B" (5,000) over the 12 after B, then over the 15 after U; "U R F D L U F2"
        // (47,600) over the 15 after F2.
        assert_eq!(cost(&t, "U R F D L F U"), 1_000 / 15);
        assert_eq!(cost(&t, "U R F D B U"), 5_000 / 12);
        assert_eq!(cost(&t, "U R F D B U R"), 5_000 / 12 / 15);
        assert_eq!(cost(&t, "U R F D L U F2 D"), 47_600 / 15);
        // Another 4-move prefix: 1 node, shared down to nothing.
        assert_eq!(cost(&t, "U R F L"), 1);
        assert_eq!(cost(&t, "U R F L U"), 0);
        // Not canonical: no subtree.
        assert_eq!(cost(&t, "U R F D D"), 0);
        // Whole lists of one length, as the replay asks.
        let all5 = canonical::sequences(GRAIN + 1);
        let c5 = t.costs(14, &all5).unwrap();
        // The other 4-move prefixes' single nodes share down to nothing.
        assert_eq!(c5.iter().sum::<u64>(), 5_000 * 11 + 60_000);
        let c4 = t.costs(14, &canonical::sequences(GRAIN)).unwrap();
        assert_eq!(c4, t.depths[&14].counts);
        assert!(t.costs(14, &[moves("U R"), moves("U")]).is_err());
    }

    #[test]
    fn finer_counts_on_another_scale_split_the_recorded_nodes_in_their_proportions() {
        // A refine by a solver that searched "U R F D L" in a tenth of the recorded nodes,
        // its children in the same proportions: the same costs.
        let t = refined();
        let mut tenth = refined();
        for (_, kids) in &mut tenth.depths.get_mut(&14).unwrap().finer {
            kids.iter_mut().for_each(|k| *k /= 10);
        }
        for p in [
            "U R F D L U",
            "U R F D L F",
            "U R F D L U F2",
            "U R F D L U R",
        ] {
            assert_eq!(cost(&tenth, p), cost(&t, p), "{p}");
        }
        // Other proportions: "U R F D L" (60,000) split 1 to 11 between U and the rest.
        let finer = &mut tenth.depths.get_mut(&14).unwrap().finer;
        let u = moves("U")[0].index();
        finer[0].1.iter_mut().for_each(|k| *k = u64::from(*k > 0));
        finer[0].1[u] = 11;
        assert_eq!(cost(&tenth, "U R F D L U"), 30_000);
        assert_eq!(cost(&tenth, "U R F D L F"), 30_000 / 11);
        // "U R F D L U F2" keeps its part of its parent's (now 30,000).
        assert_eq!(cost(&tenth, "U R F D L U F2"), 30_000 * 4_760 / 4_900);
    }

    #[test]
    fn a_refined_trace_survives_writing_and_reading() {
        let t = refined();
        let mut text = Vec::new();
        t.write(&mut text).unwrap();
        assert_eq!(Trace::parse("mem", &text[..]).unwrap(), t);
    }

    #[test]
    fn a_version_1_trace_loads_with_no_finer_counts_and_costs_as_before() {
        let mut t = refined();
        t.depths.get_mut(&14).unwrap().finer.clear();
        let mut text = Vec::new();
        t.write(&mut text).unwrap();
        // Written as a version 1 trace was: no `finer` field.
        let old = String::from_utf8(text)
            .unwrap()
            .replace(&format!("\"version\":{VERSION}"), "\"version\":1")
            .replace(",\"finer\":[]", "");
        assert!(old.contains("\"version\":1") && !old.contains("finer"));
        let back = Trace::parse("old", old.as_bytes()).unwrap();
        assert_eq!(back.header.version, 1);
        assert_eq!(back.depths, t.depths);
        // Below the recorded 5-move counts, equal shares (the rule of version 1).
        assert_eq!(cost(&back, "U R F D L U"), 60_000 / 12);
        assert_eq!(cost(&back, "U R F D L U F2"), 60_000 / 12 / 15);
    }

    #[test]
    fn a_malformed_finer_entry_is_an_error_naming_the_file_and_depth() {
        let cases: [(&str, Vec<u64>, &str); 6] = [
            ("U R F D", vec![0; 18], "canonical prefix of 5 to 6"),
            ("U R F D L U F2", vec![0; 18], "canonical prefix of 5 to 6"),
            ("U R F D D", vec![0; 18], "canonical prefix"),
            ("U R F D X", vec![0; 18], "not a move sequence"),
            ("U R F D L", vec![0; 17], "17 counts"),
            ("U R F D L", vec![1; 18], "cannot follow"),
        ];
        for (prefix, kids, why) in cases {
            let mut t = refined();
            t.depths.get_mut(&14).unwrap().finer = vec![(prefix.to_string(), kids)];
            let mut text = Vec::new();
            t.write(&mut text).unwrap();
            let e = Trace::parse("t.jsonl", &text[..]).unwrap_err();
            assert!(matches!(e, TraceError::Invalid(_)), "{e}");
            let e = e.to_string();
            assert!(e.starts_with("t.jsonl: depth 14: finer entry"), "{e}");
            assert!(e.contains(why), "{prefix}: {e}");
        }
        // Out of order, or twice.
        let mut t = refined();
        t.depths.get_mut(&14).unwrap().finer.reverse();
        let mut text = Vec::new();
        t.write(&mut text).unwrap();
        let e = Trace::parse("t.jsonl", &text[..]).unwrap_err().to_string();
        assert!(e.contains("out of order"), "{e}");
    }
}
