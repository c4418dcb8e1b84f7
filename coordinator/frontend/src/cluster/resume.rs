//! The output of a scramble set: new, resumed (checked against the input), or standard
//! output.

use super::error::ClientError;
use super::journal::{Done, Journal, JournalError, ResumeInput};
use super::observer::{Notice, Observer};
use super::options::{Options, Output, Positions};
use std::io::BufReader;

/// The journal of `opts`, the ids already done, and how many records were kept.
pub(super) fn open_journal(
    opts: &Options,
    observer: &mut dyn Observer,
) -> Result<(Journal, Done, u64), ClientError> {
    // The input as named (`-`: standard input), for the one rule that an output is never
    // the input; refused before anything is opened for writing or read to resume.
    let named = match &opts.work {
        Positions::File(input) => Some(input.as_path()),
        _ => None,
    };
    let written = match &opts.output {
        Output::File(path) => Some(Some(path.as_path())),
        Output::Stdout => Some(None),
        Output::Nowhere => None,
    };
    if let Some(output) = written {
        crate::outfile::check_not_input(named, output).map_err(JournalError::from)?;
    }
    let path = match &opts.output {
        Output::File(path) => path,
        Output::Stdout | Output::Nowhere if opts.resume => {
            return Err(ClientError::ResumeWithoutOutput)
        }
        Output::Stdout => {
            let j = Journal::stdout(opts.format, &opts.settings).map_err(ClientError::Write)?;
            return Ok((j, Done::default(), 0));
        }
        Output::Nowhere => {
            let j = Journal::to_writer(Box::new(std::io::sink()), opts.format, &opts.settings)
                .map_err(ClientError::Write)?;
            return Ok((j, Done::default(), 0));
        }
    };
    let input = match &opts.work {
        Positions::File(input) if input.as_os_str() != "-" => Some(input),
        _ => None,
    };
    if !opts.resume {
        let j = Journal::create(path, named, opts.format, &opts.settings)?;
        return Ok((j, Done::default(), 0));
    }
    // The kept records are checked against the input file they must come from
    // (standard input cannot be read twice: not checked).
    let check = match input {
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|source| ClientError::Input {
                path: p.clone(),
                source,
            })?;
            Some(ResumeInput {
                path: p,
                reader: Box::new(BufReader::with_capacity(1 << 16, f)),
            })
        }
        None => None,
    };
    let (journal, r) = Journal::resume(path, opts.format, &opts.settings, check)?;
    let kept = r.done.len() as u64;
    observer.notice(&Notice::Resumed {
        path: path.clone(),
        kept,
        dropped: r.dropped,
        torn: r.torn,
    });
    Ok((journal, r.done, kept))
}
