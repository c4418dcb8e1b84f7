use super::{open_locked, partial_path, valid_name, FetchError};

#[tokio::test]
async fn a_second_fetch_of_the_same_file_is_refused_while_the_first_holds_it() {
    let dir = std::env::temp_dir().join(format!("cubeswarm-fetch-lock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let partial = partial_path(&dir, "cocsep");
    let first = open_locked(&dir, "cocsep", &partial).unwrap();
    let second = open_locked(&dir, "cocsep", &partial);
    assert!(matches!(second, Err(FetchError::Busy { .. })), "{second:?}");
    drop(first);
    assert!(
        open_locked(&dir, "cocsep", &partial).is_ok(),
        "the lock went with the file"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_cannot_hide_paths() {
    assert!(valid_name("cocsep"));
    assert!(valid_name("twophase-p1"));
    assert!(!valid_name(""));
    assert!(!valid_name("../etc/passwd"));
    assert!(!valid_name("a/b"));
    assert!(!valid_name(".hidden"));
    assert!(!valid_name(&"x".repeat(33)));
}
