//! The Tables service: the table files this coordinator serves, listed and streamed in
//! chunks to workers that lack them, from the offset a resuming worker asks for.
//!
//! For tests only, the environment variable [`CUT_AFTER_ENV`]`=N` makes every stream end
//! with UNAVAILABLE once it has sent N bytes of the file (the last chunk cut short): an
//! interrupted transfer, for the receiver's resume to be tested over real processes.

use super::{BoxStream, Shared};
use proto::wire::{self as w, tables_server};
use proto::Error;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

pub(super) struct TablesSvc(pub(super) Arc<Shared>);

/// Bytes per chunk of a table stream.
const CHUNK: usize = 1 << 20;

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
        use tokio::io::AsyncReadExt;
        let w::FetchRequest { file: name, offset } = req.into_inner();
        let Some(f) = self.0.files.get(&name).cloned() else {
            return Err(Error::FileNotServed {
                file: name,
                serving: self.0.files.keys().cloned().collect(),
            }
            .into());
        };
        let mut file = tokio::fs::File::open(&f.path)
            .await
            .map_err(|e| Error::FileUnreadable {
                path: f.path.display().to_string(),
                reason: e.to_string(),
            })?;
        if offset > f.info.bytes {
            return Err(Error::FetchOffset {
                file: name,
                offset,
                bytes: f.info.bytes,
            }
            .into());
        }
        if offset > 0 {
            use tokio::io::AsyncSeekExt;
            file.seek(std::io::SeekFrom::Start(offset))
                .await
                .map_err(|e| Error::FileUnreadable {
                    path: f.path.display().to_string(),
                    reason: e.to_string(),
                })?;
            tracing::info!(file = %name, offset, "resuming a fetch of {name} at byte {offset}");
        }
        let cut = cut_after();
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(async move {
            use w::fetch_response::Msg;
            if tx
                .send(Ok(w::FetchResponse {
                    msg: Some(Msg::Start(w::FetchStart {
                        info: Some(f.info.clone()),
                    })),
                }))
                .await
                .is_err()
            {
                return;
            }
            let first = offset;
            let mut offset = offset;
            loop {
                let want = match cut {
                    Some(limit) => {
                        let left = (first + limit).saturating_sub(offset);
                        if left == 0 {
                            let _ = tx
                                .send(Err(Status::unavailable(format!(
                                    "failpoint {CUT_AFTER_ENV}: the stream was cut after \
                                     {limit} bytes"
                                ))))
                                .await;
                            return;
                        }
                        CHUNK.min(usize::try_from(left).unwrap_or(CHUNK))
                    }
                    None => CHUNK,
                };
                let mut buf = vec![0u8; want];
                let mut filled = 0;
                while filled < want {
                    match file.read(&mut buf[filled..]).await {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) => {
                            let _ = tx
                                .send(Err(Error::FileUnreadable {
                                    path: f.path.display().to_string(),
                                    reason: e.to_string(),
                                }
                                .into()))
                                .await;
                            return;
                        }
                    }
                }
                if filled == 0 {
                    return;
                }
                buf.truncate(filled);
                let n = filled as u64;
                let msg = w::FetchResponse {
                    msg: Some(Msg::Chunk(w::Chunk { offset, data: buf })),
                };
                if tx.send(Ok(msg)).await.is_err() {
                    return;
                }
                offset += n;
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}
