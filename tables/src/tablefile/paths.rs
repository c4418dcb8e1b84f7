//! Where table files live: the default directory and a table's file name.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where tables live by default: `$CUBESWARM_TABLES` if set, else
/// `$XDG_DATA_HOME/cubeswarm/tables`, else `~/.local/share/cubeswarm/tables`, else
/// `./cubeswarm-tables`.
pub fn default_tables_dir() -> PathBuf {
    tables_dir_from(|key| std::env::var_os(key))
}

/// Where this user's stamps of verified tables live (see `stamp`):
/// `$XDG_CACHE_HOME/cubeswarm/verified`, else `~/.cache/cubeswarm/verified` (`None`: no
/// home is known).
pub(super) fn stamp_dir() -> Option<PathBuf> {
    stamp_dir_from(|key| std::env::var_os(key))
}

fn stamp_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |key: &str| var(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    // The XDG spec says relative values are invalid and must be ignored.
    let cache = set("XDG_CACHE_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| set("HOME").map(|h| h.join(".cache")))?;
    Some(cache.join("cubeswarm").join("verified"))
}

fn tables_dir_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |key: &str| var(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("CUBESWARM_TABLES") {
        return dir;
    }
    // The XDG spec says relative values are invalid and must be ignored.
    if let Some(data) = set("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return data.join("cubeswarm").join("tables");
    }
    if let Some(home) = set("HOME") {
        return home
            .join(".local")
            .join("share")
            .join("cubeswarm")
            .join("tables");
    }
    PathBuf::from("./cubeswarm-tables")
}

/// The file of table `name` in directory `dir`: `<dir>/<name>.tbl`.
pub fn table_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.tbl"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_tables_and_stamp_dirs_follow_env_then_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            tables_dir_from(env(&[
                ("CUBESWARM_TABLES", "/t"),
                ("XDG_DATA_HOME", "/x"),
                ("HOME", "/h")
            ])),
            PathBuf::from("/t")
        );
        assert_eq!(
            tables_dir_from(env(&[("CUBESWARM_TABLES", ""), ("XDG_DATA_HOME", "/x")])),
            PathBuf::from("/x/cubeswarm/tables")
        );
        assert_eq!(
            tables_dir_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")])),
            PathBuf::from("/h/.local/share/cubeswarm/tables")
        );
        assert_eq!(
            tables_dir_from(env(&[])),
            PathBuf::from("./cubeswarm-tables")
        );
        assert_eq!(
            table_path(Path::new("/t"), "h48h0k4"),
            PathBuf::from("/t/h48h0k4.tbl")
        );
        assert_eq!(
            stamp_dir_from(env(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")])),
            Some(PathBuf::from("/c/cubeswarm/verified"))
        );
        assert_eq!(
            stamp_dir_from(env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/cubeswarm/verified"))
        );
        assert_eq!(stamp_dir_from(env(&[])), None);
    }
}
