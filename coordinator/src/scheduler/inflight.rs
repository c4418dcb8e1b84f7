//! The lines of a request between the oldest not yet released and the newest read: a
//! window indexed by sequence number, each line open (its position in flight) or done
//! (its record waiting for its turn). Records leave from the front, in input order, so
//! the reorder buffer costs no map and no allocation per line.

use proto::Record;
use std::collections::VecDeque;

/// One line of the window.
#[derive(Debug)]
enum Slot<P> {
    /// Its position is in flight.
    Open(P),
    /// Its record waits for the lines before it.
    Ready(Record),
}

/// The window of lines not yet released.
#[derive(Debug)]
pub(crate) struct InFlight<P> {
    /// Sequence number of the front line (lines released so far).
    base: u64,
    slots: VecDeque<Slot<P>>,
}

impl<P> Default for InFlight<P> {
    fn default() -> Self {
        InFlight {
            base: 0,
            slots: VecDeque::new(),
        }
    }
}

impl<P> InFlight<P> {
    /// Lines released so far.
    pub fn released(&self) -> u64 {
        self.base
    }

    /// The sequence number the next line gets (lines pushed so far).
    pub fn next_seq(&self) -> u64 {
        self.base + self.slots.len() as u64
    }

    /// Lines pushed and not yet released.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The lines in flight, with their sequence numbers.
    pub fn iter_open(&self) -> impl Iterator<Item = (u64, &P)> + '_ {
        let base = self.base;
        (self.slots.iter().enumerate()).filter_map(move |(i, s)| match s {
            Slot::Open(p) => Some((base + i as u64, p)),
            Slot::Ready(_) => None,
        })
    }

    /// Adds a line whose position is in flight; returns its sequence number.
    pub fn push_open(&mut self, p: P) -> u64 {
        let seq = self.next_seq();
        self.slots.push_back(Slot::Open(p));
        seq
    }

    /// Adds a line whose record is known already; returns its sequence number.
    pub fn push_ready(&mut self, r: Record) -> u64 {
        let seq = self.next_seq();
        self.slots.push_back(Slot::Ready(r));
        seq
    }

    fn index(&self, seq: u64) -> Option<usize> {
        let i = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        (i < self.slots.len()).then_some(i)
    }

    /// The open line `seq`.
    pub fn get(&self, seq: u64) -> Option<&P> {
        match self.slots.get(self.index(seq)?)? {
            Slot::Open(p) => Some(p),
            Slot::Ready(_) => None,
        }
    }

    /// The open line `seq`.
    pub fn get_mut(&mut self, seq: u64) -> Option<&mut P> {
        let i = self.index(seq)?;
        match self.slots.get_mut(i)? {
            Slot::Open(p) => Some(p),
            Slot::Ready(_) => None,
        }
    }

    /// Closes the open line `seq` with the record `make` builds from it; returns what
    /// is left of the position.
    pub fn close(&mut self, seq: u64, make: impl FnOnce(&mut P) -> Record) -> Option<P> {
        let i = self.index(seq)?;
        let slot = self.slots.get_mut(i)?;
        let Slot::Open(p) = slot else { return None };
        let record = make(p);
        match std::mem::replace(slot, Slot::Ready(record)) {
            Slot::Open(p) => Some(p),
            Slot::Ready(_) => None,
        }
    }

    /// The front record, if its line is done.
    pub fn pop_ready(&mut self) -> Option<Record> {
        if !matches!(self.slots.front(), Some(Slot::Ready(_))) {
            return None;
        }
        self.base += 1;
        match self.slots.pop_front() {
            Some(Slot::Ready(r)) => Some(r),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::RecordError;

    fn rec(line: u64) -> Record {
        Record {
            line,
            input: String::new(),
            outcome: Err(RecordError::NotUtf8),
        }
    }

    #[test]
    fn records_leave_in_order_whatever_order_lines_close_in() {
        let mut w: InFlight<u64> = InFlight::default();
        assert_eq!(w.push_open(10), 0);
        assert_eq!(w.push_ready(rec(11)), 1);
        assert_eq!(w.push_open(12), 2);
        assert!(w.pop_ready().is_none());
        assert_eq!(w.close(2, |&mut l| rec(l)), Some(12));
        assert_eq!(w.close(2, |&mut l| rec(l)), None);
        assert!(w.get(1).is_none() && w.get(3).is_none());
        assert!(w.pop_ready().is_none());
        assert_eq!(w.close(0, |&mut l| rec(l)), Some(10));
        let lines: Vec<u64> = std::iter::from_fn(|| w.pop_ready())
            .map(|r| r.line)
            .collect();
        assert_eq!(lines, vec![10, 11, 12]);
        assert_eq!((w.released(), w.next_seq(), w.len()), (3, 3, 0));
        assert!(w.get(0).is_none());
    }
}
