//! `solve --to FACELETS`: solve to a target pattern instead of the solved cube. The
//! search solves the position seen from the target ([`Position::relative_to`]), whose
//! solutions are exactly the sequences that take the position to the target.

use anyhow::{bail, Context as _};
use tables::Position;

/// The position to search for `--to target` (the command-line `position` itself when no
/// target is given). `--to` takes one command-line POSITION, solved here (not with
/// `--input` nor on a cluster).
pub fn position_to_solve(
    position: Option<Position>,
    target: Option<&str>,
    cluster: bool,
) -> anyhow::Result<Option<Position>> {
    let Some(target) = target else {
        return Ok(position);
    };
    let Some(position) = position else {
        bail!("--to solves one POSITION to a pattern; it does not take --input");
    };
    if cluster {
        bail!("--to solves here, not on a cluster; leave out --coordinator");
    }
    let t = Position::parse(target).with_context(|| format!("--to {target:?}"))?;
    Ok(Some(position.relative_to(&t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_changes_the_position_and_bad_uses_are_refused() {
        let p = Position::parse("R U").unwrap();
        assert_eq!(position_to_solve(Some(p), None, true).unwrap(), Some(p));
        let t = tables::facelet::to_facelets(Position::parse("F").unwrap().cube());
        let r = position_to_solve(Some(p), Some(&t), false)
            .unwrap()
            .unwrap();
        let m = tables::parse_moves("U' R' F").unwrap();
        assert!(r.is_solved_by(&m));
        let e = position_to_solve(None, Some(&t), false).unwrap_err();
        assert!(e.to_string().contains("--input"), "{e}");
        let e = position_to_solve(Some(p), Some(&t), true).unwrap_err();
        assert!(e.to_string().contains("--coordinator"), "{e}");
        let e = position_to_solve(Some(p), Some("UUUU"), false).unwrap_err();
        assert!(format!("{e:#}").contains("--to"), "{e:#}");
    }
}
