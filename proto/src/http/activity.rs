//! When a connection last moved a byte: its stream wrapped so that every read and write
//! that moves one says so.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// The time of a connection's last byte in or out, shared by its stream (which sets it)
/// and its watcher (which reads it).
#[derive(Clone, Debug)]
pub(super) struct Activity {
    /// The connection's opening: the time the offsets count from.
    origin: Instant,
    /// Nanoseconds from `origin` to the last byte moved (an atomic: the stream and the
    /// watcher are polled apart).
    last_ns: Arc<AtomicU64>,
}

impl Activity {
    /// A connection opened at `origin`, which counts as its last activity.
    pub(super) fn new(origin: Instant) -> Activity {
        Activity {
            origin,
            last_ns: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A byte moved now.
    fn touch(&self) {
        let ns = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_ns.store(ns, Ordering::Relaxed);
    }

    /// When a byte last moved.
    pub(super) fn last(&self) -> Instant {
        self.origin + std::time::Duration::from_nanos(self.last_ns.load(Ordering::Relaxed))
    }
}

/// A stream that records its activity.
#[derive(Debug)]
pub(super) struct Tracked<T> {
    /// The stream itself.
    inner: T,
    /// Where each read or write that moves a byte is recorded.
    activity: Activity,
}

impl<T> Tracked<T> {
    /// `inner`, recording into `activity`.
    pub(super) fn new(inner: T, activity: Activity) -> Tracked<T> {
        Tracked { inner, activity }
    }

    /// Records a write's result if it moved a byte, and passes it on.
    fn wrote(&self, r: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = &r {
            if *n > 0 {
                self.activity.touch();
            }
        }
        r
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Tracked<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tracked<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
