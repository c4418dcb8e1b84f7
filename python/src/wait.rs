//! Work on its own thread while the caller waits with the GIL released, checking for
//! signals (Ctrl-C) every few tens of milliseconds.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// How often a waiting call checks for signals.
pub const POLL: Duration = Duration::from_millis(40);

/// Waits for the next value of `rx` without the GIL. `Ok(None)`: the sender is gone. A
/// signal handler's exception (KeyboardInterrupt) is returned as the error after
/// `on_signal` ran (it stops the work).
pub fn recv<T: Send>(
    py: Python<'_>,
    rx: &Mutex<Receiver<T>>,
    on_signal: &mut dyn FnMut(),
) -> PyResult<Option<T>> {
    loop {
        match py.detach(|| {
            rx.lock()
                .unwrap_or_else(|p| p.into_inner())
                .recv_timeout(POLL)
        }) {
            Ok(v) => return Ok(Some(v)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    on_signal();
                    return Err(e);
                }
            }
        }
    }
}

/// [`recv`] for an iterator: once it fails (a signal), `done` is set, so that the
/// iterator yields nothing more.
pub fn next<T: Send>(
    py: Python<'_>,
    rx: &Mutex<Receiver<T>>,
    done: &AtomicBool,
    on_signal: &mut dyn FnMut(),
) -> PyResult<Option<T>> {
    recv(py, rx, on_signal).inspect_err(|_| done.store(true, Ordering::Release))
}
