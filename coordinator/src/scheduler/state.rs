//! The scheduler's bookkeeping: queued jobs by table and priority, jobs, positions in
//! flight, requests.

use super::*;

/// Most ungrouped positions room is made for ahead of time.
pub(super) const MAX_PREALLOC: usize = 1024;

/// The priority of a queued job: older requests, then earlier lines, then shallower
/// depths, then more promising subtree groups first.
pub(super) type Priority = (RequestId, u64, u8, u32);

/// Where a position is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct PosKey {
    pub(super) req: RequestId,
    pub(super) seq: u64,
}

/// What a job does (materialised into a [`Job`] at each dispatch). Positions are named
/// by their sequence number in the job's request.
#[derive(Clone, Debug)]
pub(super) enum Kind {
    /// Whole positions with the request's settings (two-phase).
    Batch { seqs: Vec<u64> },
    /// One optimal position searched whole up to `cap`: `split_depth - 1` for its
    /// first job; then one depth more a job while a depth is predicted small (see
    /// [`Config::whole_nodes`]), every length up to the previous cap proved empty.
    Shallow { seq: u64, cap: u8 },
    /// Subtrees of one optimal position at one depth.
    Subtrees {
        seq: u64,
        depth: u8,
        prefixes: Vec<cut::Unit>,
        /// Each unit searched as its pieces, this many moves longer
        /// ([`proto::pieces`]), so that what is not started can be handed back.
        pieces: u8,
    },
    /// Another executor's claim about one optimal position run again, as it was sent
    /// (see `verify`): the check's work is kept with the check.
    Check { seq: u64, check: u64 },
}

impl Kind {
    /// The positions the job answers for.
    pub(super) fn seqs(&self) -> &[u64] {
        match self {
            Kind::Batch { seqs } => seqs,
            Kind::Shallow { seq, .. } | Kind::Subtrees { seq, .. } | Kind::Check { seq, .. } => {
                std::slice::from_ref(seq)
            }
        }
    }

    /// The one position of a single-position job (a batch job belongs to its request; a
    /// check, to its check: the position's end does not cancel it).
    pub(super) fn single(&self) -> Option<u64> {
        match self {
            Kind::Batch { .. } | Kind::Check { .. } => None,
            Kind::Shallow { seq, .. } | Kind::Subtrees { seq, .. } => Some(*seq),
        }
    }
}

/// Queued jobs, by the table they need, each set in priority order.
#[derive(Debug, Default)]
pub(super) struct Queue {
    pub(super) by_table: BTreeMap<String, BTreeSet<(Priority, JobId)>>,
    pub(super) len: usize,
}

impl Queue {
    pub(super) fn insert(&mut self, table: &str, prio: Priority, id: JobId) {
        if !self.by_table.contains_key(table) {
            self.by_table.insert(table.to_string(), BTreeSet::new());
        }
        if let Some(set) = self.by_table.get_mut(table) {
            if set.insert((prio, id)) {
                self.len += 1;
            }
        }
    }

    pub(super) fn remove(&mut self, table: &str, prio: Priority, id: JobId) {
        if let Some(set) = self.by_table.get_mut(table) {
            if set.remove(&(prio, id)) {
                self.len -= 1;
            }
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most urgent job needing one of `tables`.
    pub(super) fn best_for(&self, tables: &BTreeSet<String>) -> Option<(Priority, JobId)> {
        tables
            .iter()
            .filter_map(|t| self.by_table.get(t)?.first().copied())
            .min()
    }

    /// Whether a job of position `seq` of `req` at `depth` or shallower waits in the
    /// queue.
    pub(super) fn holds_up_to(&self, table: &str, req: RequestId, seq: u64, depth: u8) -> bool {
        let lo = ((req, seq, 0, 0), JobId(0));
        let hi = ((req, seq, depth, u32::MAX), JobId(u64::MAX));
        self.by_table
            .get(table)
            .is_some_and(|set| set.range(lo..=hi).next().is_some())
    }

    /// Whether a job of position `seq` of `req` waits in the queue.
    pub(super) fn holds_position(&self, table: &str, req: RequestId, seq: u64) -> bool {
        let lo = ((req, seq, 0, 0), JobId(0));
        let hi = ((req, seq, u8::MAX, u32::MAX), JobId(u64::MAX));
        self.by_table
            .get(table)
            .is_some_and(|set| set.range(lo..=hi).next().is_some())
    }
}

#[derive(Debug)]
pub(super) struct JobState {
    /// The request it serves.
    pub(super) req: RequestId,
    /// The table it needs.
    pub(super) table: String,
    pub(super) kind: Kind,
    /// The attempt last dispatched (0: never).
    pub(super) attempt: u32,
    /// The executor running it (`None`: queued).
    pub(super) lease: Option<ExecutorId>,
    pub(super) prio: Priority,
    /// When its last attempt was dispatched, µs.
    pub(super) dispatched: u64,
    /// When its executor last listed it in a heartbeat (or dispatched it), µs: a job
    /// unlisted for a lease is lost.
    pub(super) listed: u64,
    /// Its executor was asked to hand back this attempt's unstarted pieces.
    pub(super) asked: bool,
    /// Asked again, after a hand-back of unclaimed pieces only, for the parts its running
    /// pieces have not entered (see [`tail`](super::tail)).
    pub(super) reasked: bool,
    /// This attempt was sent while a shallower depth of its position was still open (a
    /// depth started early).
    pub(super) early: bool,
    /// This attempt was sent with `split` ([`handback::sends_split`](super::handback)):
    /// its running pieces can hand back what they have not entered.
    pub(super) split: bool,
    /// How long it should run, µs, as its depth was cut (0: unknown).
    pub(super) predicted_us: u64,
    /// What it kept when it handed back some of its pieces.
    pub(super) handed: Option<Box<Handed>>,
    /// The work its last attempt was sent with, kept while it runs on an executor whose
    /// claims may be checked (see `verify`).
    pub(super) sent: Option<Box<Work>>,
    /// The nodes it was predicted to hold as its depth was cut (0: unknown).
    pub(super) predicted_nodes: u64,
}

impl JobState {
    /// A job of `req` needing `table`, queued at `prio`, never dispatched.
    pub(super) fn queued(req: RequestId, table: String, kind: Kind, prio: Priority) -> JobState {
        JobState {
            req,
            table,
            kind,
            attempt: 0,
            lease: None,
            prio,
            dispatched: 0,
            listed: 0,
            asked: false,
            reasked: false,
            early: false,
            split: false,
            predicted_us: 0,
            handed: None,
            sent: None,
            predicted_nodes: 0,
        }
    }
}

/// A subtree job that handed back the pieces it had not started: what it still answers
/// for.
#[derive(Debug)]
pub(super) struct Handed {
    /// Its results: one for each of its first `results` units (the last maybe in part).
    pub(super) results: usize,
    /// The units it still searches: its whole units, then the pieces it kept of the
    /// unit it was in (a job made again from it searches these).
    pub(super) kept: Vec<cut::Unit>,
    /// The units and pieces handed back (a solution in one of them is not its to find).
    pub(super) back: Vec<cut::Unit>,
    /// Its running pieces were split where they ran (the answer had split entries).
    pub(super) split: bool,
}

/// The open single-position jobs of one position, without an allocation for the common
/// case of one.
#[derive(Debug, Default)]
pub(super) enum JobSet {
    #[default]
    Empty,
    One(JobId),
    Many(BTreeSet<JobId>),
}

impl JobSet {
    pub(super) fn insert(&mut self, id: JobId) {
        match self {
            JobSet::Empty => *self = JobSet::One(id),
            JobSet::One(x) if *x == id => {}
            JobSet::One(x) => *self = JobSet::Many(BTreeSet::from([*x, id])),
            JobSet::Many(set) => {
                set.insert(id);
            }
        }
    }

    pub(super) fn remove(&mut self, id: JobId) {
        match self {
            JobSet::One(x) if *x == id => *self = JobSet::Empty,
            JobSet::Many(set) => {
                set.remove(&id);
            }
            _ => {}
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = JobId> + '_ {
        let (one, many) = match self {
            JobSet::Empty => (None, None),
            JobSet::One(x) => (Some(*x), None),
            JobSet::Many(set) => (None, Some(set.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }

    pub(super) fn take(&mut self) -> Vec<JobId> {
        match std::mem::take(self) {
            JobSet::Empty => Vec::new(),
            JobSet::One(x) => vec![x],
            JobSet::Many(set) => set.into_iter().collect(),
        }
    }
}

/// A split optimal position: its deepening, and when its time runs out.
#[derive(Debug)]
pub(super) struct Split {
    pub(super) deep: Deep,
    /// End of its time limit (µs), if it has one.
    pub(super) deadline: Option<u64>,
}

/// One position in flight.
#[derive(Debug)]
pub(super) struct Pos {
    pub(super) line: u64,
    pub(super) input: String,
    pub(super) position: Position,
    /// When its first job was dispatched (µs).
    pub(super) started: Option<u64>,
    /// Its open single-position jobs (shallow, subtrees).
    pub(super) jobs: JobSet,
    /// Deepening state, once an optimal position is split.
    pub(super) split: Option<Box<Split>>,
    /// Resume hint: every length up to this one is known to have no solution (the
    /// client's, or past it what this position's earlier whole jobs proved).
    pub(super) proved_empty: Option<u8>,
    /// Nodes and lookups of its whole jobs before the latest.
    pub(super) earlier: (u64, u64),
    /// The client's own resume hint (a position started again goes back to it).
    pub(super) hint: Option<u8>,
    /// Claims of executors that may be checked, and the record they hold back.
    pub(super) claims: Option<Box<verify::PosClaims>>,
}

/// One request: its settings, its lines in flight, its jobs.
#[derive(Debug)]
pub(super) struct Request {
    pub(super) settings: Settings,
    pub(super) table: String,
    /// Lines read and not yet released: positions in flight and records waiting.
    pub(super) lines: InFlight<Pos>,
    /// Two-phase positions not yet in a job.
    pub(super) ungrouped: Vec<u64>,
    /// Every open job of the request.
    pub(super) jobs: BTreeSet<JobId>,
    /// Positions in split (deepening) state, by sequence number.
    pub(super) split: BTreeSet<u64>,
    /// No more lines will come.
    pub(super) input_done: bool,
}
