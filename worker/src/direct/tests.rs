use super::*;

/// Bytes that differ from block to block and within one.
fn pattern(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn open_rw(path: &Path) -> File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cubeswarm-direct-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `data[held..]` after a file holding `data[..held]`, through [`Direct`] in
/// pieces of the given sizes (cycled), and returns the file's bytes and whether direct
/// writes could be opened there.
fn write_through(name: &str, data: &[u8], held: usize, pieces: &[usize]) -> (Vec<u8>, bool) {
    let dir = scratch(name);
    let path = dir.join("t.tbl.fetch");
    std::fs::write(&path, &data[..held]).unwrap();
    let file = open_rw(&path);
    let Some(mut direct) = Direct::open(&path, &file) else {
        return (std::fs::read(&path).unwrap(), false);
    };
    let mut at = held;
    for &n in pieces.iter().cycle() {
        if at == data.len() {
            break;
        }
        let end = (at + n).min(data.len());
        direct.write(&data[at..end], at as u64, &file).unwrap();
        at = end;
    }
    direct.finish(&file).unwrap();
    drop(file);
    let got = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (got, true)
}

#[test]
fn staged_direct_writes_give_the_bytes_in_order_to_the_last_partial_block() {
    // Three full staging buffers and a part, ending inside a block, in pieces that cross
    // buffer and block boundaries anywhere.
    let data = pattern(BLOCK + 3 * STAGE + 12_345);
    let (got, direct) = write_through("whole", &data, BLOCK, &[1 << 20, 70_001, 4096, 13]);
    if !direct {
        eprintln!(
            "O_DIRECT is not available in {:?}: nothing to test",
            std::env::temp_dir()
        );
        return;
    }
    assert_eq!(got.len(), data.len());
    assert!(got == data, "the file differs from the bytes written");
}

#[test]
fn a_resume_inside_a_block_keeps_the_bytes_held_before_it() {
    // A partial file ending in the middle of a block and of a staging buffer: the block's
    // first bytes are read back from the file and written again with the rest.
    let data = pattern(BLOCK + 2 * STAGE + 5_000);
    let held = BLOCK + STAGE + 777;
    let (got, direct) = write_through("resume", &data, held, &[STAGE, 333]);
    if !direct {
        eprintln!(
            "O_DIRECT is not available in {:?}: nothing to test",
            std::env::temp_dir()
        );
        return;
    }
    assert!(got == data, "the file differs from the bytes written");
}

#[test]
fn a_write_that_does_not_continue_the_last_is_an_error() {
    let data = pattern(BLOCK + 10_000);
    let dir = scratch("gap");
    let path = dir.join("t.tbl.fetch");
    std::fs::write(&path, &data[..BLOCK]).unwrap();
    let file = open_rw(&path);
    if let Some(mut direct) = Direct::open(&path, &file) {
        direct
            .write(&data[BLOCK..BLOCK + 100], BLOCK as u64, &file)
            .unwrap();
        let e = direct
            .write(&data[BLOCK + 200..], BLOCK as u64 + 200, &file)
            .unwrap_err();
        assert!(e.to_string().contains("expected"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
