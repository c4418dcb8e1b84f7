//! Jobs and what rides in them: a [`Job`] and its [`Work`] (a batch with its
//! [`Settings`], or subtrees with their piece levels), and the [`Handback`] of a job's
//! unstarted pieces.

use super::fields::{
    method_from, method_wire, moves_bytes, position_bytes, position_from, sequences_from, u8_from,
};
use super::DecodeError;
use crate::job::{BatchItem, Job, JobId, Settings, SubtreeWork, Work};
use crate::pieces::{Handback, PieceSplit};
use crate::wire as w;

fn pieces_from(v: u32) -> Result<u8, DecodeError> {
    match u8::try_from(v) {
        Ok(p) if p <= crate::pieces::MAX_PIECE_LEVELS => Ok(p),
        _ => Err(DecodeError::OutOfRange {
            field: "job.subtrees.pieces",
            value: v.into(),
            max: crate::pieces::MAX_PIECE_LEVELS.into(),
        }),
    }
}

impl From<&Handback> for w::Handback {
    fn from(h: &Handback) -> Self {
        w::Handback {
            job: h.job.0,
            attempt: h.attempt,
            kept: h.kept,
            split: (h.split.iter())
                .map(|s| w::PieceSplit {
                    piece: s.piece,
                    entered: s.entered.clone(),
                })
                .collect(),
        }
    }
}

impl TryFrom<w::Handback> for Handback {
    type Error = DecodeError;
    /// Refuses more split entries than a job has pieces; whether each names a kept piece
    /// and a count within its extensions is the coordinator's to check (it knows the job).
    fn try_from(h: w::Handback) -> Result<Self, DecodeError> {
        let max = crate::pieces::MAX_JOB_PIECES;
        if h.split.len() > max {
            return Err(DecodeError::OutOfRange {
                field: "handback.split",
                value: h.split.len() as u64,
                max: max as u64,
            });
        }
        let levels = crate::pieces::SPLIT_LEVELS;
        if let Some(s) = h.split.iter().find(|s| s.entered.len() > levels) {
            return Err(DecodeError::OutOfRange {
                field: "handback.split.entered",
                value: s.entered.len() as u64,
                max: levels as u64,
            });
        }
        Ok(Handback {
            job: JobId(h.job),
            attempt: h.attempt,
            kept: h.kept,
            split: (h.split.into_iter())
                .map(|s| PieceSplit {
                    piece: s.piece,
                    entered: s.entered,
                })
                .collect(),
        })
    }
}

impl From<&Settings> for w::Settings {
    fn from(s: &Settings) -> Self {
        w::Settings {
            method: method_wire(s.method).into(),
            min_length: s.min_length.into(),
            max_length: s.max_length.into(),
            max_solutions: s.max_solutions,
            time_limit_ms: s.time_limit_ms,
            probe_limit: s.probe_limit,
            anytime: s.anytime,
        }
    }
}

impl TryFrom<w::Settings> for Settings {
    type Error = DecodeError;
    fn try_from(s: w::Settings) -> Result<Self, DecodeError> {
        Ok(Settings {
            method: method_from("settings.method", s.method)?,
            min_length: u8_from("settings.min_length", s.min_length)?,
            max_length: u8_from("settings.max_length", s.max_length)?,
            max_solutions: s.max_solutions,
            time_limit_ms: s.time_limit_ms,
            probe_limit: s.probe_limit,
            anytime: s.anytime,
        })
    }
}

impl From<&Job> for w::Job {
    fn from(j: &Job) -> Self {
        let work = match &j.work {
            Work::Batch { settings, items } => w::job::Work::Batch(w::BatchWork {
                settings: Some(settings.into()),
                items: items
                    .iter()
                    .map(|i| w::BatchItem {
                        line: i.line,
                        position: position_bytes(&i.position),
                    })
                    .collect(),
            }),
            Work::Subtrees(s) => w::job::Work::Subtrees(w::SubtreeWork {
                position: position_bytes(&s.position),
                depth: s.depth.into(),
                prefixes: s.prefixes.iter().map(|p| moves_bytes(p)).collect(),
                max_solutions: s.max_solutions,
                time_limit_ms: s.time_limit_ms,
                pieces: s.pieces.into(),
                split: s.split,
            }),
        };
        w::Job {
            id: j.id.0,
            attempt: j.attempt,
            table: j.table.clone(),
            work: Some(work),
        }
    }
}

impl TryFrom<w::Job> for Job {
    type Error = DecodeError;
    fn try_from(j: w::Job) -> Result<Self, DecodeError> {
        let work = match j.work.ok_or(DecodeError::Missing("job.work"))? {
            w::job::Work::Batch(b) => Work::Batch {
                settings: b
                    .settings
                    .ok_or(DecodeError::Missing("job.batch.settings"))?
                    .try_into()?,
                items: b
                    .items
                    .into_iter()
                    .map(|i| {
                        Ok(BatchItem {
                            line: i.line,
                            position: position_from("job.batch.items.position", &i.position)?,
                        })
                    })
                    .collect::<Result<_, DecodeError>>()?,
            },
            w::job::Work::Subtrees(s) => Work::Subtrees(SubtreeWork {
                position: position_from("job.subtrees.position", &s.position)?,
                depth: u8_from("job.subtrees.depth", s.depth)?,
                prefixes: sequences_from("job.subtrees.prefixes", &s.prefixes)?,
                max_solutions: s.max_solutions,
                time_limit_ms: s.time_limit_ms,
                pieces: pieces_from(s.pieces)?,
                split: s.split,
            }),
        };
        Ok(Job {
            id: JobId(j.id),
            attempt: j.attempt,
            table: j.table,
            work,
        })
    }
}
