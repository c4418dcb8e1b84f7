//! The Tables service: the table files this coordinator serves, listed and streamed in
//! chunks to workers that lack them, from the offset a resuming worker asks for. Each
//! chunk is read off the async threads into a buffer of its own (not zeroed first) that
//! the message then owns; chunks are 4 MiB of body on the body's 1 MiB checksum grid, so
//! a receiver that hashes what it receives finds whole checksum chunks where they lie.
//!
//! For tests only, the environment variable [`CUT_AFTER_ENV`]`=N` makes every stream end
//! with UNAVAILABLE once it has sent N bytes of the file (the last chunk cut short): an
//! interrupted transfer, for the receiver's resume to be tested over real processes.

use super::{BoxStream, ServedFile, Shared};
use proto::wire::{self as w, tables_server};
use proto::Error;
use std::sync::Arc;
use tables::tablefile::{BODY_CHUNK, HEADER_LEN};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

pub(super) struct TablesSvc(pub(super) Arc<Shared>);

/// Bytes per chunk of a table stream: a whole number of the body's checksum chunks, so
/// that a receiver that hashes what it receives finds them whole where they lie.
const CHUNK: u64 = 4 * BODY_CHUNK as u64;

/// Where the chunk of a `len`-byte file that starts at `offset` ends: the header alone,
/// then the body in `chunk`-byte pieces counted from the body's start (the first piece of
/// a resumed stream shorter, to fall back on that grid), the last piece shorter.
fn chunk_end(offset: u64, len: u64, chunk: u64) -> u64 {
    let header = HEADER_LEN as u64;
    let end = if offset < header {
        header
    } else {
        header + ((offset - header) / chunk + 1) * chunk
    };
    end.min(len)
}

/// The test-only failpoint (see the module documentation).
pub const CUT_AFTER_ENV: &str = "CUBESWARM_FETCH_CUT_AFTER";

/// The bytes after which [`CUT_AFTER_ENV`] cuts each stream, if set to a number.
fn cut_after() -> Option<u64> {
    std::env::var(CUT_AFTER_ENV).ok()?.trim().parse().ok()
}

#[tonic::async_trait]
impl tables_server::Tables for TablesSvc {
    type FetchStream = BoxStream<w::FetchResponse>;

    async fn list(
        &self,
        _req: Request<w::ListTablesRequest>,
    ) -> Result<Response<w::ListTablesResponse>, Status> {
        Ok(Response::new(w::ListTablesResponse {
            files: self.0.files.values().map(|f| f.info.clone()).collect(),
        }))
    }

    async fn fetch(
        &self,
        req: Request<w::FetchRequest>,
    ) -> Result<Response<Self::FetchStream>, Status> {
        let w::FetchRequest { file: name, offset } = req.into_inner();
        let Some(f) = self.0.files.get(&name).cloned() else {
            return Err(Error::FileNotServed {
                file: name,
                serving: self.0.files.keys().cloned().collect(),
            }
            .into());
        };
        let file = open_at(&f, &name, offset).await?;
        let cut = cut_after().map(|limit| (offset, limit));
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(send_file(f, file, offset, cut, tx));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// The error of a served file that cannot be read.
fn unreadable(f: &ServedFile, e: std::io::Error) -> Error {
    Error::FileUnreadable {
        path: f.path.display().to_string(),
        reason: e.to_string(),
    }
}

/// The served file `f` (`name`), opened at `offset` (a resumed fetch: logged).
async fn open_at(f: &ServedFile, name: &str, offset: u64) -> Result<std::fs::File, Status> {
    let mut file = tokio::fs::File::open(&f.path)
        .await
        .map_err(|e| unreadable(f, e))?;
    if offset > f.info.bytes {
        return Err(Error::FetchOffset {
            file: name.to_string(),
            offset,
            bytes: f.info.bytes,
        }
        .into());
    }
    if offset > 0 {
        use tokio::io::AsyncSeekExt;
        file.seek(std::io::SeekFrom::Start(offset))
            .await
            .map_err(|e| unreadable(f, e))?;
        tracing::info!(file = %name, offset, "resuming a fetch of {name} at byte {offset}");
    }
    Ok(file.into_std().await)
}

/// Sends `f`'s start message, then its chunks from `offset` (`file` is there) to the
/// end, or to the failpoint's `cut` (the offset it counts from, and its limit); stops at
/// an error (sent) or when the receiver is gone.
async fn send_file(
    f: ServedFile,
    file: std::fs::File,
    mut offset: u64,
    cut: Option<(u64, u64)>,
    tx: mpsc::Sender<Result<w::FetchResponse, Status>>,
) {
    use w::fetch_response::Msg;
    let start = w::FetchResponse {
        msg: Some(Msg::Start(w::FetchStart {
            info: Some(f.info.clone()),
        })),
    };
    if tx.send(Ok(start)).await.is_err() {
        return;
    }
    let mut file = Some(file);
    while offset < f.info.bytes {
        let end = chunk_end(offset, f.info.bytes, CHUNK);
        let end = match cut {
            Some((first, limit)) if offset >= first.saturating_add(limit) => {
                let _ = tx
                    .send(Err(Status::unavailable(format!(
                        "failpoint {CUT_AFTER_ENV}: the stream was cut after \
                         {limit} bytes"
                    ))))
                    .await;
                return;
            }
            Some((first, limit)) => end.min(first.saturating_add(limit)),
            None => end,
        };
        let Some(held) = file.take() else { return };
        let buf = match read_chunk(held, end - offset).await {
            Ok((held, buf)) => {
                file = Some(held);
                buf
            }
            Err(e) => {
                let _ = tx.send(Err(unreadable(&f, e).into())).await;
                return;
            }
        };
        // A file shorter than announced (changed since it was listed): the stream
        // ends early, and the receiver says so.
        if buf.is_empty() {
            return;
        }
        let n = buf.len() as u64;
        let msg = w::FetchResponse {
            msg: Some(Msg::Chunk(w::Chunk {
                offset,
                data: buf.into(),
            })),
        };
        if tx.send(Ok(msg)).await.is_err() {
            return;
        }
        offset += n;
    }
}

/// The next `want` bytes of `file` (fewer at its end), read off the async threads into a
/// buffer that is not zeroed first; the file comes back for the next chunk.
async fn read_chunk(
    mut file: std::fs::File,
    want: u64,
) -> std::io::Result<(std::fs::File, Vec<u8>)> {
    let read = tokio::task::spawn_blocking(move || {
        let mut buf = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
        let r = std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, want), &mut buf);
        (file, r.map(|_| buf))
    })
    .await;
    match read {
        Ok((file, Ok(buf))) => Ok((file, buf)),
        Ok((_, Err(e))) => Err(e),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_end, CHUNK, HEADER_LEN};

    #[test]
    fn chunks_follow_the_body_grid_from_any_offset() {
        let h = HEADER_LEN as u64;
        let len = h + 3 * CHUNK + 10;
        // The header alone, then whole chunks of body, then the short last one.
        let mut ends = vec![];
        let mut at = 0;
        while at < len {
            at = chunk_end(at, len, CHUNK);
            ends.push(at);
        }
        assert_eq!(ends, [h, h + CHUNK, h + 2 * CHUNK, h + 3 * CHUNK, len]);
        // A resume inside the header or the body falls back on the grid at once.
        assert_eq!(chunk_end(100, len, CHUNK), h);
        assert_eq!(chunk_end(h + 5, len, CHUNK), h + CHUNK);
        assert_eq!(chunk_end(h + CHUNK, len, CHUNK), h + 2 * CHUNK);
        // Never past the end, even for a file shorter than a header.
        assert_eq!(chunk_end(0, 10, CHUNK), 10);
        assert_eq!(chunk_end(len - 1, len, CHUNK), len);
    }
}
