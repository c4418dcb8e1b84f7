//! The table a solve uses, by the catalog's one rule: here ([`local`]: the largest H48
//! table present, what is missing built first) or on a cluster ([`on_cluster`]: the
//! largest a connected worker holds).

use crate::cluster::TableChoice;
use crate::{Dialect, Error};
use proto::Method;
use std::path::Path;
use tables::progress::Progress;

/// The table a solve of `method` uses in `dir`: "twophase", `table`, or the largest H48
/// table present (h48h0k4, built, when none is). A named table that is missing is built,
/// and so is a present table's missing fallback; each build is announced on stderr.
/// The two-phase tables are built where they are opened ([`crate::Embedded::open`]).
pub fn local(
    dir: &Path,
    method: Method,
    table: Option<&str>,
    d: &Dialect,
    progress: &dyn Progress,
) -> Result<String, Error> {
    if method == Method::TwoPhase {
        return Ok(proto::catalog::TWOPHASE.to_string());
    }
    let build_error = |name: &str| {
        let name = name.to_string();
        move |e| Error::table(format!("building table {name}"), e)
    };
    let name = match table {
        Some(t) => t.to_string(),
        None => match worker::catalog::largest_h48_available(dir) {
            Some(t) => t.to_string(),
            None => {
                let t = proto::catalog::DEFAULT_H48;
                d.say(&format!(
                    "no H48 table in {}; building {t} ({}, once)…",
                    dir.display(),
                    size_of(t)
                ));
                worker::catalog::build(dir, t, progress).map_err(build_error(t))?;
                t.to_string()
            }
        },
    };
    let entry = optimal_entry(&name, d)?;
    if table.is_some() && !entry.present(dir) {
        d.say(&format!(
            "table {name} is not in {}; building it…",
            dir.display()
        ));
        worker::catalog::build_entry(dir, entry, progress).map_err(build_error(&name))?;
    }
    if let Some(f) = worker::catalog::missing_fallback(dir, entry) {
        d.say(&format!(
            "{f}, the fallback of table {name}, is not in {}; building it ({}, seconds)…",
            dir.display(),
            size_of(f)
        ));
        if let Err(e) = worker::catalog::build_file(dir, f, progress) {
            // A directory that cannot be written (a read-only volume) keeps working with
            // the older h48h0k4 fallback, as a worker's does.
            d.say(&format!(
                "could not build {f} in {} ({e}); searching with the older h48h0k4 fallback",
                dir.display()
            ));
        }
    }
    Ok(name)
}

/// The size of a solver table or table file, by the catalog, as a person reads it
/// ("59 MB", "0.94 GB").
pub fn size_of(name: &str) -> String {
    let bytes = match proto::catalog::find(name) {
        Some(e) => e.bytes(),
        None => proto::catalog::file_bytes(name).unwrap_or(0),
    };
    if bytes >= 1_000_000_000 {
        format!("{:.2} GB", bytes as f64 / 1e9)
    } else {
        format!("{:.0} MB", (bytes as f64 / 1e6).max(1.0))
    }
}

/// What an optimal solve of random-state positions costs with `table`, when that is one
/// of the smallest H48 tables (h0 to h2, which `local` builds when none is present): said
/// when a position is slow (not before: short scrambles are solved at once), with the one
/// command that makes it fast. `None` for the others.
/// The figures are docs/performance.md's (2 cores).
pub fn cost_note(table: &str) -> Option<String> {
    let h = proto::catalog::H48::parse(table)?;
    (h.eo_bits <= 2).then(|| {
        format!(
            "{table} is one of the smallest tables: a random-state position (17 to 20 moves) \
             can take minutes with it on 2 cores (160 s measured with h48h0k4); \
             `cubeswarm tables build h48h3k2` (235 MB, under a minute to build) brings that \
             to about 8 s, h48h5k2 (0.94 GB, about 9 min to build) to about 2 s"
        )
    })
}

/// The table every job of a cluster request of `method` needs: "twophase", `table`, or
/// the H48 tables by the catalog's rule, largest first (the first a connected worker
/// holds).
pub fn on_cluster(method: Method, table: Option<&str>, d: &Dialect) -> Result<TableChoice, Error> {
    if method == Method::TwoPhase {
        return Ok(TableChoice::Named(proto::catalog::TWOPHASE.to_string()));
    }
    if let Some(t) = table {
        return optimal_entry(t, d).map(|e| TableChoice::Named(e.name.to_string()));
    }
    let mut order: Vec<String> = Vec::new();
    while let Some(t) = proto::catalog::largest_h48_where(|e| !order.iter().any(|n| n == e.name)) {
        order.push(t.to_string());
    }
    Ok(TableChoice::FirstHeld(order))
}

/// The catalog's entry of H48 table `name`.
fn optimal_entry(name: &str, d: &Dialect) -> Result<&'static proto::catalog::Entry, Error> {
    proto::catalog::find(name)
        .filter(|e| e.method == Method::Optimal)
        .ok_or_else(|| {
            Error::Settings(format!(
                "unknown H48 table {name:?}; {} shows the known ones",
                d.list_tables
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_catalog() {
        assert_eq!(size_of("h48h5k2"), "941 MB");
        assert_eq!(size_of("h48h6k2"), "1.88 GB");
        assert_eq!(size_of("h48h0k4"), "59 MB");
        assert_eq!(size_of("eoesep"), "5 MB");
        assert_eq!(size_of("twophase"), "130 MB");
    }

    #[test]
    fn only_the_smallest_tables_come_with_a_cost_note() {
        for small in ["h48h0k4", "h48h0k2", "h48h1k2", "h48h2k2"] {
            let n = cost_note(small).unwrap();
            assert!(n.starts_with(small), "{n}");
            assert!(n.contains("cubeswarm tables build h48h3k2"), "{n}");
        }
        for fast in ["h48h3k2", "h48h5k2", "h48h11k2", "twophase", "cocsep"] {
            assert_eq!(cost_note(fast), None, "{fast}");
        }
    }

    #[test]
    fn the_table_asked_of_a_cluster_follows_the_catalog() {
        let d = &Dialect::CLI;
        assert_eq!(
            on_cluster(Method::TwoPhase, Some("h48h0k4"), d).unwrap(),
            TableChoice::Named("twophase".into())
        );
        assert_eq!(
            on_cluster(Method::Optimal, Some("h48h1k2"), d).unwrap(),
            TableChoice::Named("h48h1k2".into())
        );
        for bad in ["h48h99k2", "twophase"] {
            let e = on_cluster(Method::Optimal, Some(bad), d).unwrap_err();
            assert!(e.to_string().contains("unknown H48 table"), "{e}");
            assert!(e.to_string().contains("`cubeswarm tables list`"), "{e}");
        }
        let e = on_cluster(Method::Optimal, Some("x"), &Dialect::PYTHON).unwrap_err();
        assert!(e.to_string().contains("cubeswarm.tables.list()"), "{e}");
        // Largest first, by the catalog's one rule: the first a worker holds is the
        // largest it holds.
        let TableChoice::FirstHeld(order) = on_cluster(Method::Optimal, None, d).unwrap() else {
            panic!("candidates")
        };
        let first_of = |held: &[&str]| order.iter().find(|c| held.contains(&c.as_str())).cloned();
        assert_eq!(
            first_of(&["h48h0k2", "h48h0k4"]).as_deref(),
            Some("h48h0k4")
        );
        assert_eq!(
            first_of(&["twophase", "h48h2k2", "h48h0k4", "h48h1k2"]).as_deref(),
            Some("h48h2k2")
        );
        assert!(!order.iter().any(|t| t == "twophase"));
    }

    #[test]
    fn here_an_unknown_table_is_refused_before_anything_is_built() {
        let dir = std::env::temp_dir().join(format!("cubeswarm-table-{}", std::process::id()));
        let e = local(
            &dir,
            Method::Optimal,
            Some("h48h99k2"),
            &Dialect::PYTHON,
            &tables::progress::Silent,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown H48 table"), "{e}");
        assert!(!dir.exists());
        assert_eq!(
            local(
                &dir,
                Method::TwoPhase,
                None,
                &Dialect::CLI,
                &tables::progress::Silent
            )
            .unwrap(),
            "twophase"
        );
    }
}
