//! Which way a worker can hold its tables on this host (`worker --memory`), decided at
//! start-up before it reports ready: huge pages need the tables' size free in memory (a
//! map of the page cache where the system keeps it in huge pages, shared by every worker
//! of the host, else a private copy per worker), a mapped table is one copy in the page
//! cache shared by every worker of the host. A table larger than half the host's memory
//! leaves room for one private copy at most, so the worker says to map it where it is
//! copied; a mode that cannot fit is refused with both figures in GB.
//!
//! The figures come from `/proc/meminfo` (MemTotal, MemAvailable), or, for tests and for
//! a host whose share is smaller than what the kernel reports (a container's limit), from
//! the environment variable [`HOST_MEMORY_ENV`]`=TOTAL[,AVAILABLE]` in bytes (AVAILABLE
//! defaults to TOTAL).

use crate::TableMemory;

/// The environment variable overriding the host's memory figures (see the module doc).
pub const HOST_MEMORY_ENV: &str = "CUBESWARM_HOST_MEMORY";

/// A host's memory, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostMemory {
    /// All of it (MemTotal).
    pub total: u64,
    /// What can be had now without swapping (MemAvailable).
    pub available: u64,
}

impl HostMemory {
    /// This host's figures: [`HOST_MEMORY_ENV`] when set, else `/proc/meminfo`; `None`
    /// when neither can be read (the check is then skipped).
    pub fn detect() -> Result<Option<HostMemory>, MemoryFitError> {
        if let Ok(v) = std::env::var(HOST_MEMORY_ENV) {
            if !v.trim().is_empty() {
                return parse_override(&v).map(Some);
            }
        }
        let Ok(s) = std::fs::read_to_string("/proc/meminfo") else {
            return Ok(None);
        };
        let field = |name: &str| -> Option<u64> {
            let line = s.lines().find(|l| l.starts_with(name))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kb.checked_mul(1024)
        };
        Ok(field("MemTotal:")
            .zip(field("MemAvailable:"))
            .map(|(total, available)| HostMemory { total, available }))
    }
}

/// `TOTAL[,AVAILABLE]` in bytes.
fn parse_override(v: &str) -> Result<HostMemory, MemoryFitError> {
    let bad = || MemoryFitError::BadOverride(v.to_string());
    let mut parts = v.split(',').map(|p| p.trim().parse::<u64>());
    let total = parts.next().and_then(Result::ok).ok_or_else(bad)?;
    let available = match parts.next() {
        Some(a) => a.map_err(|_| bad())?,
        None => total,
    };
    if parts.next().is_some() || available > total {
        return Err(bad());
    }
    Ok(HostMemory { total, available })
}

/// Why the tables cannot be held as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryFitError {
    /// The tables are larger than the host's memory: neither mode can hold them.
    #[error(
        "the tables take {:.2} GB, more than this host's {:.2} GB of memory: neither a \
         private copy nor the page cache can hold them (every lookup would read the disk); \
         serve a smaller table here",
        gb(*tables), gb(*total)
    )]
    LargerThanHost {
        /// The tables' bytes.
        tables: u64,
        /// The host's memory.
        total: u64,
    },
    /// A private huge-page copy does not fit in the memory available.
    #[error(
        "--memory huge-pages needs a private copy of the tables ({:.2} GB), only {:.2} GB \
         of this host's {:.2} GB is available: use --memory mapped (one copy in the page \
         cache, shared by every worker on this host)",
        gb(*tables), gb(*available), gb(*total)
    )]
    HugePagesDoNotFit {
        /// The tables' bytes.
        tables: u64,
        /// The memory available.
        available: u64,
        /// The host's memory.
        total: u64,
    },
    /// [`HOST_MEMORY_ENV`] is not `TOTAL[,AVAILABLE]` in bytes.
    #[error("{HOST_MEMORY_ENV}={0:?}: expected TOTAL[,AVAILABLE] in bytes, AVAILABLE <= TOTAL")]
    BadOverride(String),
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

/// Whether tables of `tables` bytes can be held as `mode` says on `host`: a refusal, or
/// the line to log (advice when the tables take more than half the host's memory), or
/// nothing to say.
pub fn memory_fit(
    tables: u64,
    host: HostMemory,
    mode: TableMemory,
) -> Result<Option<String>, MemoryFitError> {
    if tables > host.total {
        return Err(MemoryFitError::LargerThanHost {
            tables,
            total: host.total,
        });
    }
    if mode == TableMemory::HugePages && tables > host.available {
        return Err(MemoryFitError::HugePagesDoNotFit {
            tables,
            available: host.available,
            total: host.total,
        });
    }
    if tables.saturating_mul(2) <= host.total {
        return Ok(None);
    }
    Ok(Some(match mode {
        TableMemory::HugePages => format!(
            "the tables take {:.2} GB, more than half of this host's {:.2} GB: where this \
             host's page cache holds them in huge pages every worker shares that copy, \
             else this worker holds a private one and no second worker fits; use --memory \
             mapped to share one copy among several workers in any case",
            gb(tables),
            gb(host.total)
        ),
        TableMemory::Mapped => format!(
            "the tables take {:.2} GB, more than half of this host's {:.2} GB: mapped, one \
             copy in the page cache shared by every worker on this host",
            gb(tables),
            gb(host.total)
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    fn host(total: u64, available: u64) -> HostMemory {
        HostMemory {
            total: total * GB,
            available: available * GB,
        }
    }

    #[test]
    fn small_tables_need_no_advice_in_either_mode() {
        for mode in [TableMemory::HugePages, TableMemory::Mapped] {
            assert_eq!(memory_fit(4 * GB, host(32, 20), mode), Ok(None));
            assert_eq!(memory_fit(16 * GB, host(32, 20), mode), Ok(None));
        }
    }

    #[test]
    fn tables_over_half_the_host_are_advised_to_be_mapped() {
        // h10 (30.1 GB) on a 48 GB host with 40 GB free.
        let t = 30_100_000_000;
        let hp = memory_fit(t, host(48, 40), TableMemory::HugePages)
            .unwrap()
            .unwrap();
        assert!(hp.contains("30.10 GB") && hp.contains("48.00 GB"), "{hp}");
        assert!(hp.contains("--memory mapped"), "{hp}");
        let m = memory_fit(t, host(48, 40), TableMemory::Mapped)
            .unwrap()
            .unwrap();
        assert!(m.contains("shared by every worker"), "{m}");
    }

    #[test]
    fn a_private_copy_that_does_not_fit_is_refused_mapped_is_not() {
        // h10 on a 48 GB host with 20 GB free (another worker's copy, say).
        let t = 30_100_000_000;
        let e = memory_fit(t, host(48, 20), TableMemory::HugePages).unwrap_err();
        assert_eq!(
            e,
            MemoryFitError::HugePagesDoNotFit {
                tables: t,
                available: 20 * GB,
                total: 48 * GB
            }
        );
        let msg = e.to_string();
        assert!(
            msg.contains("30.10 GB") && msg.contains("20.00 GB") && msg.contains("--memory mapped"),
            "{msg}"
        );
        assert!(memory_fit(t, host(48, 20), TableMemory::Mapped).is_ok());
    }

    #[test]
    fn tables_larger_than_the_host_are_refused_in_both_modes() {
        // h11 (60.2 GB) on a 32 GB host.
        for mode in [TableMemory::HugePages, TableMemory::Mapped] {
            let e = memory_fit(60_200_000_000, host(32, 30), mode).unwrap_err();
            assert!(matches!(e, MemoryFitError::LargerThanHost { .. }), "{e:?}");
            assert!(e.to_string().contains("60.20 GB"), "{e}");
        }
    }

    #[test]
    fn the_override_reads_total_and_available() {
        assert_eq!(
            parse_override("1000,400"),
            Ok(HostMemory {
                total: 1000,
                available: 400
            })
        );
        assert_eq!(
            parse_override("1000"),
            Ok(HostMemory {
                total: 1000,
                available: 1000
            })
        );
        for bad in ["", "x", "10,20", "1,2,3", "-1"] {
            assert!(parse_override(bad).is_err(), "{bad}");
        }
    }
}
