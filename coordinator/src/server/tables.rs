//! The Tables service: the table files this coordinator serves, listed and streamed in
//! chunks to workers that lack them.

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
        let name = req.into_inner().file;
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
            let mut offset = 0u64;
            loop {
                let mut buf = vec![0u8; CHUNK];
                let mut filled = 0;
                while filled < CHUNK {
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
