//! The work of one optimal search, recorded (`cubeswarm solve --trace FILE`) so that it
//! can be replayed under another splitting (`cubeswarm bench split`, [`crate::splitsim`]).
//!
//! A trace is a JSON-lines file: a [`Header`] line (the position, its table, the lower
//! bound and the shallow job, the solutions and the node rate of the run), one
//! [`DepthCells`] line per split depth (the node count of every canonical 4-move prefix
//! subtree at that depth, and for the heavy ones the counts of their 5-move children),
//! and one [`JobTrace`] line per job the recording run dispatched (its depth, size,
//! nodes, times and outcome). A name ending in `.gz` is read and written through the
//! system's `gzip`.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use tables::canonical;
use tables::{format_moves, parse_moves, Move};

/// Format version written in the header.
pub const VERSION: u32 = 1;

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
        if header.version != VERSION {
            return Err(TraceError::Invalid(format!(
                "{name}: trace version {} (this build reads {VERSION})",
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

    /// The nodes of each of `prefixes` (canonical sequences of one length, 1 to 5) at
    /// `depth`. A 5-move prefix of a prefix without recorded children gets an equal share
    /// of its parent. Depths not recorded cost nothing.
    pub fn costs(&self, depth: u8, prefixes: &[Vec<Move>]) -> Result<Vec<u64>, TraceError> {
        let Some(cells) = self.depths.get(&depth) else {
            return Ok(vec![0; prefixes.len()]);
        };
        let len = prefixes.first().map_or(GRAIN, Vec::len);
        if len == 0 || len > GRAIN + 1 || prefixes.iter().any(|p| p.len() != len) {
            return Err(TraceError::Invalid(format!(
                "prefixes of {len} moves: a trace replays prefixes of 1 to {} moves",
                GRAIN + 1
            )));
        }
        let seqs4 = canonical::sequences(GRAIN);
        if len == GRAIN {
            return Ok(cells.counts.clone());
        }
        if len < GRAIN {
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
            return Ok(out);
        }
        let index4 = prefix_index(GRAIN);
        let fine: HashMap<u32, &Vec<u64>> = cells.fine.iter().map(|(i, k)| (*i, k)).collect();
        Ok(prefixes
            .iter()
            .map(|p| {
                let Some(&i) = index4.get(&p[..GRAIN]) else {
                    return 0;
                };
                match fine.get(&i) {
                    Some(kids) => kids[p[GRAIN].index()],
                    None => {
                        let n = canonical::allowed_after(Some(p[GRAIN - 1])).count_ones();
                        cells.counts[i as usize] / u64::from(n.max(1))
                    }
                }
            })
            .collect())
    }
}

/// A sequence of moves as the trace writes it.
pub fn moves_text(moves: &[Move]) -> String {
    format_moves(moves)
}
