//! Results: a [`JobResult`] and its output, one answer per position of a batch job
//! ([`PositionResult`] or its [`PositionError`]) or one [`SubtreeResult`] per prefix of a
//! subtree job, or the job's error.

use super::fields::{moves_bytes, sequences_from, stop_from, stop_wire, u8_from};
use super::DecodeError;
use crate::job::{
    JobId, JobOutput, JobResult, PositionAnswer, PositionError, PositionResult, SubtreeResult,
};
use crate::wire as w;

impl From<&PositionResult> for w::PositionResult {
    fn from(r: &PositionResult) -> Self {
        w::PositionResult {
            line: r.line,
            solutions: r.solutions.iter().map(|s| moves_bytes(s)).collect(),
            optimal: r.optimal,
            lower_bound: r.lower_bound.into(),
            depth_exhausted: r.depth_exhausted.map(u32::from),
            nodes: r.nodes,
            lookups: r.lookups,
            micros: r.micros,
            stop: stop_wire(r.stop).into(),
            error: None,
        }
    }
}

pub(super) fn answer_wire(a: &PositionAnswer) -> w::PositionResult {
    match a {
        Ok(r) => r.into(),
        Err(e) => w::PositionResult {
            line: e.line,
            error: Some((&e.error).into()),
            ..Default::default()
        },
    }
}

pub(super) fn answer_from(r: w::PositionResult) -> Result<PositionAnswer, DecodeError> {
    if let Some(e) = r.error {
        return Ok(Err(PositionError {
            line: r.line,
            error: e.try_into()?,
        }));
    }
    Ok(Ok(PositionResult {
        line: r.line,
        solutions: sequences_from("result.solutions", &r.solutions)?,
        optimal: r.optimal,
        lower_bound: u8_from("result.lower_bound", r.lower_bound)?,
        depth_exhausted: r
            .depth_exhausted
            .map(|d| u8_from("result.depth_exhausted", d))
            .transpose()?,
        nodes: r.nodes,
        lookups: r.lookups,
        micros: r.micros,
        stop: stop_from("result.stop", r.stop)?,
    }))
}

impl From<&SubtreeResult> for w::SubtreeResult {
    fn from(r: &SubtreeResult) -> Self {
        w::SubtreeResult {
            prefix: r.prefix,
            solutions: r.solutions.iter().map(|s| moves_bytes(s)).collect(),
            nodes: r.nodes,
            lookups: r.lookups,
            stop: stop_wire(r.stop).into(),
        }
    }
}

impl TryFrom<w::SubtreeResult> for SubtreeResult {
    type Error = DecodeError;
    fn try_from(r: w::SubtreeResult) -> Result<Self, DecodeError> {
        Ok(SubtreeResult {
            prefix: r.prefix,
            solutions: sequences_from("subtree.solutions", &r.solutions)?,
            nodes: r.nodes,
            lookups: r.lookups,
            stop: stop_from("subtree.stop", r.stop)?,
        })
    }
}

impl From<&JobResult> for w::JobResult {
    fn from(r: &JobResult) -> Self {
        use w::job_result::Output;
        let output = match &r.output {
            Ok(JobOutput::Batch(v)) => Output::Batch(w::BatchOutput {
                results: v.iter().map(answer_wire).collect(),
            }),
            Ok(JobOutput::Subtrees(v)) => Output::Subtrees(w::SubtreesOutput {
                results: v.iter().map(Into::into).collect(),
            }),
            Err(e) => Output::Error(e.into()),
        };
        w::JobResult {
            id: r.id.0,
            attempt: r.attempt,
            micros: r.micros,
            output: Some(output),
        }
    }
}

impl TryFrom<w::JobResult> for JobResult {
    type Error = DecodeError;
    fn try_from(r: w::JobResult) -> Result<Self, DecodeError> {
        use w::job_result::Output;
        let output = match r.output.ok_or(DecodeError::Missing("job_result.output"))? {
            Output::Batch(b) => Ok(JobOutput::Batch(
                b.results
                    .into_iter()
                    .map(answer_from)
                    .collect::<Result<_, _>>()?,
            )),
            Output::Subtrees(s) => Ok(JobOutput::Subtrees(
                s.results
                    .into_iter()
                    .map(TryInto::try_into)
                    .collect::<Result<_, _>>()?,
            )),
            Output::Error(e) => Err(e.try_into()?),
        };
        Ok(JobResult {
            id: JobId(r.id),
            attempt: r.attempt,
            micros: r.micros,
            output,
        })
    }
}
