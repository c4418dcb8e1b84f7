//! The scheduler (work in progress).
