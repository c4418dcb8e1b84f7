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
    // Refused before the input is read for the resume check.
    crate::outfile::check_not_input(input.map(|p| p.as_path()), path)
        .map_err(JournalError::from)?;
    if !opts.resume {
        let j = Journal::create(
            path,
            input.map(|p| p.as_path()),
            opts.format,
            &opts.settings,
        )?;
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
