//! An output file, opened the one way every command opens one: never the input file it
//! is written from, and one writer at a time.
//!
//! - [`same_file`] tells whether two paths name one file, through symlinks, `..` and hard
//!   links (by device and inode), so `--output` can be refused before anything is opened
//!   for writing when it is `--input`.
//! - [`check_not_input`] is the one rule every front end applies (the CLI, Python, the
//!   cluster client): the output, whether a named file or standard output, is never the
//!   input, whether a named file or standard input (`-`). The standard streams are
//!   compared by what their descriptors hold (`< in.txt`, `>> in.txt`), as GNU `cat`
//!   refuses `cat f >> f`; a terminal, a socket or a device (`/dev/null`) is shared by
//!   design and never counts as the input.
//! - [`create`] and [`append`] take an advisory lock (`flock`) on the file for as long as
//!   the returned [`File`] lives, before they empty or read it: a second run writing the
//!   same file (two terminals, a restarted Kubernetes Job whose old pod still runs) is
//!   refused at once with the file's name, and the file is left as it is.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// Why an output file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output file is the input file: writing it would erase the input.
    #[error("--output {} is the input file; give another file", .0.display())]
    IsInput(PathBuf),
    /// The output file is the file standard input reads (`--input - < FILE`).
    #[error("--output {} is the input file (standard input reads it); give another file", .0.display())]
    IsStdin(PathBuf),
    /// Standard output is the input file (`--input FILE >> FILE`): the run would read its
    /// own records back without end.
    #[error("standard output is the input file {}; write to another file (--output FILE)", .0.display())]
    StdoutIsInput(PathBuf),
    /// Another process holds the file's lock: another run is writing it.
    #[error(
        "output file {} is being written by another run (it is locked); wait for that run \
         to end, or give another file",
        .0.display()
    )]
    Locked(PathBuf),
    /// The file could not be created, opened, locked or emptied.
    #[error("cannot create output file {}: {source}", path.display())]
    Io {
        /// The output file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Whether `a` and `b` name the same existing file (a path that does not exist names no
/// file, so it is nobody's input).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => same_inode(&x, &y, a, b),
        _ => false,
    }
}

#[cfg(unix)]
fn same_inode(x: &std::fs::Metadata, y: &std::fs::Metadata, _: &Path, _: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    x.dev() == y.dev() && x.ino() == y.ino()
}

#[cfg(not(unix))]
fn same_inode(_: &std::fs::Metadata, _: &std::fs::Metadata, a: &Path, b: &Path) -> bool {
    matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

/// What a standard stream's descriptor holds (`fd` 0 or 1), when that is a file that can
/// be an input and an output at once: a regular file or a named pipe. A terminal, a
/// socket or a device is `None` (standard input and output are often the same terminal).
#[cfg(unix)]
fn stream_file(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::fs::Metadata> {
    let m = File::from(fd.try_clone_to_owned().ok()?).metadata().ok()?;
    let t = m.file_type();
    use std::os::unix::fs::FileTypeExt;
    (t.is_file() || t.is_fifo()).then_some(m)
}

#[cfg(unix)]
fn stdin_file() -> Option<std::fs::Metadata> {
    use std::os::fd::AsFd;
    stream_file(std::io::stdin().as_fd())
}

#[cfg(unix)]
fn stdout_file() -> Option<std::fs::Metadata> {
    use std::os::fd::AsFd;
    stream_file(std::io::stdout().as_fd())
}

#[cfg(not(unix))]
fn stdin_file() -> Option<std::fs::Metadata> {
    None
}

#[cfg(not(unix))]
fn stdout_file() -> Option<std::fs::Metadata> {
    None
}

/// Refuses an output that is the input, before anything is opened for writing.
///
/// `input`: the file the positions are read from, `-` for standard input, `None` when
/// they come from elsewhere (arguments, a list). `output`: the file written, `None` (or
/// `-`) for standard output.
pub fn check_not_input(input: Option<&Path>, output: Option<&Path>) -> Result<(), OutputError> {
    let Some(input) = input else {
        return Ok(());
    };
    let stdin = input.as_os_str() == "-";
    let output = output.filter(|o| o.as_os_str() != "-");
    match output {
        Some(out) if !stdin => match same_file(input, out) {
            true => Err(OutputError::IsInput(out.to_path_buf())),
            false => Ok(()),
        },
        Some(out) => match (stdin_file(), std::fs::metadata(out)) {
            (Some(i), Ok(o)) if same_inode(&i, &o, input, out) => {
                Err(OutputError::IsStdin(out.to_path_buf()))
            }
            _ => Ok(()),
        },
        None => {
            let named = if stdin {
                stdin_file()
            } else {
                std::fs::metadata(input).ok()
            };
            match (named, stdout_file()) {
                (Some(i), Some(o)) if same_inode(&i, &o, input, input) => {
                    Err(OutputError::StdoutIsInput(input.to_path_buf()))
                }
                _ => Ok(()),
            }
        }
    }
}

/// Opens `path` for writing with `options` and, when it is a regular file, locks it;
/// nothing in it is changed. Returns the file and whether it is a regular file.
///
/// A device, pipe or socket (`/dev/null`, `/dev/stdout`, a shell's `>(...)`) is shared by
/// design: many runs write `/dev/null` at once, so it is neither locked nor emptied.
fn open_locked(path: &Path, options: &OpenOptions) -> Result<(File, bool), OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = options.open(path).map_err(io)?;
    if !f.metadata().map_err(io)?.is_file() {
        return Ok((f, false));
    }
    match f.try_lock() {
        Ok(()) => Ok((f, true)),
        Err(TryLockError::WouldBlock) => Err(OutputError::Locked(path.to_path_buf())),
        Err(TryLockError::Error(e)) => Err(io(e)),
    }
}

/// The output file `path`, created or emptied, locked for as long as the file lives.
/// Refused, with the file untouched, when it is `input` or another run holds it.
pub fn create(path: &Path, input: Option<&Path>) -> Result<File, OutputError> {
    check_not_input(input, Some(path))?;
    // Not truncated on open: a file another run holds must not be emptied under it.
    let (f, regular) = open_locked(path, OpenOptions::new().write(true).create(true))?;
    if regular {
        f.set_len(0).map_err(|source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(f)
}

/// The output file `path` opened to be read and appended to (created if missing),
/// locked for as long as the file lives. Refused as [`create`] refuses.
pub fn append(path: &Path, input: Option<&Path>) -> Result<File, OutputError> {
    check_not_input(input, Some(path))?;
    open_locked(
        path,
        OpenOptions::new().read(true).append(true).create(true),
    )
    .map(|(f, _)| f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("cubeswarm-outfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    #[test]
    fn the_input_is_never_the_output_whatever_path_names_it() {
        let d = dir("input");
        let input = d.join("in.txt");
        std::fs::write(&input, "R U\n").unwrap();
        std::os::unix::fs::symlink(&input, d.join("link.txt")).unwrap();
        std::fs::hard_link(&input, d.join("hard.txt")).unwrap();
        for out in [
            input.clone(),
            d.join("sub/../in.txt"),
            d.join("link.txt"),
            d.join("hard.txt"),
        ] {
            let e = create(&out, Some(&input)).unwrap_err();
            assert!(
                matches!(e, OutputError::IsInput(_)),
                "{}: {e}",
                out.display()
            );
            assert!(e.to_string().contains("is the input file"), "{e}");
            assert!(append(&out, Some(&input)).is_err());
        }
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "R U\n");
        // Another file, a file not there yet and standard input are fine.
        assert!(create(&d.join("out.txt"), Some(&input)).is_ok());
        assert!(create(&d.join("new.txt"), Some(Path::new("-"))).is_ok());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_second_writer_is_refused_and_harms_nothing() {
        let d = dir("lock");
        let out = d.join("out.jsonl");
        let mut first = create(&out, None).unwrap();
        first.write_all(b"{\"id\":1}\n").unwrap();
        for second in [create(&out, None), append(&out, None)] {
            let e = second.unwrap_err();
            assert!(matches!(e, OutputError::Locked(_)), "{e}");
            assert!(e.to_string().contains(&out.display().to_string()), "{e}");
        }
        let mut kept = String::new();
        File::open(&out).unwrap().read_to_string(&mut kept).unwrap();
        assert_eq!(kept, "{\"id\":1}\n", "the refused writer emptied nothing");
        drop(first);
        // The lock ends with the run that held it.
        let again = append(&out, None).unwrap();
        assert_eq!(again.metadata().unwrap().len(), 9);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_device_or_pipe_is_shared_neither_locked_nor_emptied() {
        // Many runs write /dev/null at once (the browser test's client does); a device
        // cannot be emptied (ftruncate says EINVAL) and its lock would be everyone's.
        let null = Path::new("/dev/null");
        let first = create(null, None).unwrap();
        let second = create(null, None).unwrap();
        let third = append(null, None).unwrap();
        drop((first, second, third));
        // A pipe, with its reader on the other end, is written as it is.
        let d = dir("fifo");
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if matches!(made, Ok(s) if s.success()) {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
            };
            let mut w = create(&fifo, None).unwrap();
            w.write_all(b"{\"id\":1}\n").unwrap();
            drop(w);
            assert_eq!(reader.join().unwrap(), "{\"id\":1}\n");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_file_that_cannot_be_created_says_so() {
        let e = create(Path::new("/nonexistent-dir/out.txt"), None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot create output file /nonexistent-dir/out.txt"),
            "{e}"
        );
    }
}
