use super::header::{
    get_u64, header_checksum, put_u64, OFF_BITS, OFF_BODY_LEN, OFF_DIST, OFF_ENTRIES,
    OFF_HEADER_CHECKSUM, OFF_NAME, OFF_VERSION,
};
use super::*;
use crate::packed::{AtomicPacked4, Packed4};
use crate::progress::Silent;
use proptest::prelude::*;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cubeswarm-tablefile-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A 4-bit table whose entry `i` holds `(i * 7 + i / 3) % 13`.
fn sample4(entries: u64) -> Packed4 {
    let t = AtomicPacked4::new(entries);
    for i in 0..entries {
        t.set_if_unset(i, ((i * 7 + i / 3) % 13) as u8);
    }
    t.into_packed()
}

fn write_sample(dir: &Path, name: &str, entries: u64) -> PathBuf {
    let path = table_path(dir, name);
    let table = sample4(entries);
    write_table(
        &path,
        &TableMeta::for_packed4(name, &table),
        table.as_bytes(),
    )
    .unwrap();
    path
}

/// Rewrites bytes of a file in place (tests only: real tables are never edited).
fn patch(path: &Path, at: usize, f: impl FnOnce(&mut [u8])) {
    let mut data = fs::read(path).unwrap();
    f(&mut data[at..]);
    fs::write(path, data).unwrap();
}

/// Patches a header field and re-seals the header checksum, as a buggy or foreign
/// writer would.
fn patch_sealed(path: &Path, f: impl FnOnce(&mut [u8])) {
    patch(path, 0, |b| {
        f(&mut b[..HEADER_LEN]);
        let sum = header_checksum(&b[..HEADER_LEN]);
        put_u64(b, OFF_HEADER_CHECKSUM, sum);
    });
}

#[test]
fn packed4_round_trip_write_open_verify() {
    let dir = TempDir::new("rt4");
    let table = sample4(1_000_001);
    let path = table_path(&dir.0, "h48h0k4");
    let mut meta = TableMeta::for_packed4("h48h0k4", &table);
    meta.params = [7, u64::MAX];
    let written = write_table(&path, &meta, table.as_bytes()).unwrap();
    assert_eq!(written.meta, meta);
    assert_eq!(written.distribution[..16], table.distribution()[..]);
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        HEADER_LEN as u64 + 500_001
    );

    let file = TableFile::open(&path, "h48h0k4").unwrap();
    assert_eq!(file.header(), &written);
    assert_eq!(file.path(), path);
    file.verify().unwrap();
    assert_eq!(
        file.body().as_ptr() as usize % 64,
        0,
        "body must be cache-line aligned"
    );
    let loaded = file.into_packed4().unwrap();
    assert!(loaded.is_mapped());
    assert_eq!(loaded.len(), table.len());
    assert_eq!(loaded.as_bytes(), table.as_bytes());
    for i in (0..table.len()).step_by(997) {
        assert_eq!(loaded.get(i), table.get(i));
    }
    // Only the table is left in the directory: no temporary files.
    assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
}

#[test]
fn packed2_8bit_and_32bit_round_trips() {
    let dir = TempDir::new("rt2");
    let two = sample4(12_345).to_packed2(9);
    let p2 = table_path(&dir.0, "h48h0k2");
    write_table(
        &p2,
        &TableMeta::for_packed2("h48h0k2", &two),
        two.as_bytes(),
    )
    .unwrap();
    let f = TableFile::open(&p2, "h48h0k2").unwrap();
    f.verify().unwrap();
    assert_eq!(f.header().meta.base, 9);
    assert_eq!(f.header().distribution[..4], two.distribution()[..]);
    let loaded = f.into_packed2().unwrap();
    assert_eq!(loaded.base(), 9);
    assert!((0..two.len()).all(|i| loaded.get(i) == two.get(i)));

    let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 40) as u8).collect();
    let p8 = table_path(&dir.0, "bytes");
    let h8 = write_table(&p8, &TableMeta::new("bytes", 1000, 8), &bytes).unwrap();
    assert_eq!(h8.distribution[5], 25);
    assert_eq!(
        h8.distribution[31],
        9 * 25,
        "values 31..=39 share the last bucket"
    );
    TableFile::open(&p8, "bytes").unwrap().verify().unwrap();

    let words: Vec<u8> = (0..3000u32)
        .flat_map(|i| ((i % 11) << 4 | 0xabc0_0000).to_le_bytes())
        .collect();
    let p32 = table_path(&dir.0, "cocsep");
    let meta = TableMeta {
        depth_shift: 4,
        depth_width: 4,
        ..TableMeta::new("cocsep", 3000, 32)
    };
    let h32 = write_table(&p32, &meta, &words).unwrap();
    assert_eq!(
        h32.distribution[..11],
        [273, 273, 273, 273, 273, 273, 273, 273, 272, 272, 272]
    );
    let f = TableFile::open(&p32, "cocsep").unwrap();
    f.verify().unwrap();
    assert_eq!(f.body(), &words[..]);
    assert!(matches!(
        f.into_packed4(),
        Err(TableFileError::WrongBits {
            expected: 4,
            found: 32,
            ..
        })
    ));
}

#[test]
fn truncated_files_are_refused_before_mapping() {
    let dir = TempDir::new("trunc");
    let path = write_sample(&dir.0, "t", 100_000);
    let full = fs::metadata(&path).unwrap().len();
    for len in [
        full - 1,
        full - 4096,
        HEADER_LEN as u64 + 1,
        HEADER_LEN as u64,
    ] {
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len).unwrap();
        drop(f);
        match TableFile::open(&path, "t") {
            Err(TableFileError::Truncated {
                path: p,
                expected_len,
                actual_len,
            }) => {
                assert_eq!(
                    (p.as_path(), expected_len, actual_len),
                    (path.as_path(), full, len)
                );
            }
            other => panic!("length {len}: expected Truncated, got {other:?}"),
        }
    }
    for len in [HEADER_LEN as u64 - 1, 100, 0] {
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len).unwrap();
        drop(f);
        assert!(
            matches!(TableFile::open(&path, "t"), Err(TableFileError::TooShort { len: l, .. }) if l == len)
        );
    }
}

#[test]
fn trailing_data_is_refused() {
    let dir = TempDir::new("trail");
    let path = write_sample(&dir.0, "t", 1000);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"x").unwrap();
    drop(f);
    assert!(matches!(
        TableFile::open(&path, "t"),
        Err(TableFileError::TrailingData {
            expected_len: 4596,
            actual_len: 4597,
            ..
        })
    ));
}

#[test]
fn flipped_body_byte_fails_verify_with_checksum_mismatch() {
    let dir = TempDir::new("flip");
    let path = write_sample(&dir.0, "t", 3_000_000);
    for at in [HEADER_LEN, HEADER_LEN + 1_234_567, HEADER_LEN + 1_499_999] {
        patch(&path, at, |b| b[0] ^= 0x10);
        let file = TableFile::open(&path, "t").expect("the header is intact");
        let err = file.verify().unwrap_err();
        assert!(
            matches!(err, TableFileError::ChecksumMismatch { .. }),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        patch(&path, at, |b| b[0] ^= 0x10);
        TableFile::open(&path, "t").unwrap().verify().unwrap();
    }
}

#[test]
fn distribution_mismatch_is_reported() {
    let dir = TempDir::new("dist");
    let path = write_sample(&dir.0, "t", 5000);
    // Move one count from value 0 to value 1 (the total stays right) and re-seal.
    patch_sealed(&path, |h| {
        let d0 = get_u64(h, OFF_DIST);
        let d1 = get_u64(h, OFF_DIST + 8);
        put_u64(h, OFF_DIST, d0 - 1);
        put_u64(h, OFF_DIST + 8, d1 + 1);
    });
    let err = TableFile::open(&path, "t").unwrap().verify().unwrap_err();
    assert!(
        matches!(err, TableFileError::DistributionMismatch { value: 0, .. }),
        "{err:?}"
    );
}

#[test]
fn foreign_and_damaged_headers_are_refused() {
    let dir = TempDir::new("hdr");
    let path = write_sample(&dir.0, "h48h0k4", 777);
    let pristine = fs::read(&path).unwrap();
    let reset = || fs::write(&path, &pristine).unwrap();

    patch(&path, 0, |b| b[..8].copy_from_slice(b"GIF89a\0\0"));
    assert!(
        matches!(TableFile::open(&path, "h48h0k4"), Err(TableFileError::BadMagic { found, .. }) if &found == b"GIF89a\0\0")
    );
    reset();

    patch_sealed(&path, |h| {
        h[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&2u32.to_le_bytes())
    });
    assert!(matches!(
        TableFile::open(&path, "h48h0k4"),
        Err(TableFileError::UnsupportedVersion {
            found: 2,
            supported: 1,
            ..
        })
    ));
    reset();

    // Damage anywhere in the header block: entries, the name, the reserved zeros.
    for at in [
        OFF_ENTRIES,
        OFF_NAME + 3,
        OFF_DIST + 40,
        OFF_HEADER_CHECKSUM,
        4000,
    ] {
        patch(&path, at, |b| b[0] ^= 1);
        assert!(
            matches!(
                TableFile::open(&path, "h48h0k4"),
                Err(TableFileError::HeaderCorrupt { .. })
            ),
            "damage at {at} not detected"
        );
        reset();
    }

    let err = TableFile::open(&path, "h48h11k2").unwrap_err();
    assert!(
        matches!(&err, TableFileError::WrongName { expected, found, .. } if expected == "h48h11k2" && found == "h48h0k4")
    );

    patch_sealed(&path, |h| h[OFF_BITS] = 3);
    assert!(matches!(
        TableFile::open(&path, "h48h0k4"),
        Err(TableFileError::InvalidHeader {
            field: "bits",
            value: 3,
            ..
        })
    ));
    reset();

    patch_sealed(&path, |h| put_u64(h, OFF_BODY_LEN, 388));
    assert!(matches!(
        TableFile::open(&path, "h48h0k4"),
        Err(TableFileError::BodyLength {
            expected: 389,
            found: 388,
            ..
        })
    ));
    reset();

    // A hostile entry count whose body length would overflow.
    patch_sealed(&path, |h| put_u64(h, OFF_ENTRIES, u64::MAX));
    assert!(matches!(
        TableFile::open(&path, "h48h0k4"),
        Err(TableFileError::InvalidHeader {
            field: "entries",
            ..
        })
    ));
    reset();

    patch_sealed(&path, |h| h[OFF_NAME..OFF_NAME + 3].copy_from_slice(b"../"));
    assert!(matches!(
        TableFile::open(&path, "h48h0k4"),
        Err(TableFileError::BadName { .. })
    ));
    reset();

    let opened = TableFile::open(&path, "h48h0k4").unwrap();
    assert!(matches!(
        opened.into_packed2(),
        Err(TableFileError::WrongBits {
            expected: 2,
            found: 4,
            ..
        })
    ));

    let missing = dir.0.join("nope.tbl");
    let err = TableFile::open(&missing, "nope").unwrap_err();
    assert!(matches!(&err, TableFileError::Io { path, .. } if path == &missing));
    assert!(err.to_string().contains("nope.tbl"));
}

/// An error and its sources as `anyhow`'s `{:#}` prints them: each message, then its
/// source's, separated by ": ".
fn full_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        out.push_str(": ");
        out.push_str(&e.to_string());
        next = e.source();
    }
    out
}

#[test]
fn io_errors_say_what_the_system_said_once() {
    let dir = TempDir::new("missing");
    let missing = dir.0.join("absent.tbl");
    let os = fs::File::open(&missing).unwrap_err().to_string();
    let err = TableFile::open(&missing, "absent").unwrap_err();
    let full = full_chain(&err);
    assert_eq!(full.matches(&os).count(), 1, "{full}");
    assert!(full.contains("absent.tbl"), "{full}");

    // Writing under a path whose "directory" is a file fails the same way.
    let blocker = dir.0.join("file");
    fs::write(&blocker, b"x").unwrap();
    let table = sample4(10);
    let err = write_table(
        &blocker.join("t.tbl"),
        &TableMeta::for_packed4("t", &table),
        table.as_bytes(),
    )
    .unwrap_err();
    assert!(matches!(err, TableFileError::Io { .. }), "{err:?}");
    let full = full_chain(&err);
    let os = match &err {
        TableFileError::Io { error, .. } => error.to_string(),
        _ => unreachable!(),
    };
    assert_eq!(full.matches(&os).count(), 1, "{full}");
}

#[test]
fn write_refuses_bad_descriptions() {
    let dir = TempDir::new("badmeta");
    let path = dir.0.join("x.tbl");
    let cases: [(TableMeta, usize); 6] = [
        (TableMeta::new("", 8, 4), 4),
        (TableMeta::new("a/b", 8, 4), 4),
        (TableMeta::new("x".repeat(33), 8, 4), 4),
        (TableMeta::new("x", 8, 5), 5),
        (
            TableMeta {
                base: 2,
                ..TableMeta::new("x", 8, 4)
            },
            4,
        ),
        (TableMeta::new("x", 8, 4), 5),
    ];
    for (meta, len) in cases {
        let err = write_table(&path, &meta, &vec![0; len]).unwrap_err();
        assert!(
            matches!(
                err,
                TableFileError::BadName { .. }
                    | TableFileError::InvalidHeader { .. }
                    | TableFileError::BodyLength { .. }
            ),
            "{meta:?}: {err:?}"
        );
    }
    assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 0, "nothing written");
}

#[test]
fn replacing_a_table_leaves_existing_maps_intact() {
    let dir = TempDir::new("replace");
    let path = table_path(&dir.0, "t");
    let old = sample4(10_000);
    write_table(&path, &TableMeta::for_packed4("t", &old), old.as_bytes()).unwrap();
    let mapped = TableFile::open(&path, "t").unwrap().into_packed4().unwrap();
    let new = sample4(20_000).to_packed2(3);
    write_table(&path, &TableMeta::for_packed2("t", &new), new.as_bytes()).unwrap();
    assert_eq!(
        mapped.as_bytes(),
        old.as_bytes(),
        "the old mapping still sees the old file"
    );
    let reopened = TableFile::open(&path, "t").unwrap();
    assert_eq!(reopened.header().meta.bits, 2);
    reopened.verify().unwrap();
    assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Arbitrary damage (one byte anywhere, or a cut anywhere) never panics and never
    /// goes unnoticed: open refuses it, or verify does.
    #[test]
    fn damage_is_always_detected(at in 0usize..HEADER_LEN + 2500, xor in 1u8..=255, cut in any::<bool>()) {
        let dir = TempDir::new("fuzz");
        let path = write_sample(&dir.0, "f", 5000);
        if cut {
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(at as u64).unwrap();
        } else {
            patch(&path, at, |b| b[0] ^= xor);
        }
        let ok = TableFile::open(&path, "f").and_then(|f| f.verify());
        prop_assert!(ok.is_err());
    }
}

#[test]
fn the_streaming_check_agrees_with_the_mapped_one_piece_by_piece() {
    let dir = TempDir::new("stream");
    // 3,000,000 4-bit entries: a body of three checksum chunks, read one at a time.
    let path = write_sample(&dir.0, "t", 3_000_000);
    let mapped = TableFile::open(&path, "t").unwrap();
    mapped.verify().unwrap();
    for pieces in [1, 2, 32] {
        let header =
            stream::verify_in_pieces(&path, "t", &crate::progress::Silent, pieces).unwrap();
        assert_eq!(&header, mapped.header());
    }
    assert_eq!(&read_header(&path).unwrap(), mapped.header());
    drop(mapped);
    // A flipped byte in the second chunk, a wrong name, a cut file: the same errors.
    patch(&path, HEADER_LEN + (1 << 20) + 99, |b| b[0] ^= 0x01);
    let err = stream::verify_in_pieces(&path, "t", &crate::progress::Silent, 1).unwrap_err();
    assert!(
        matches!(err, TableFileError::ChecksumMismatch { .. }),
        "{err:?}"
    );
    patch(&path, HEADER_LEN + (1 << 20) + 99, |b| b[0] ^= 0x01);
    assert!(matches!(
        verify_file(&path, "u"),
        Err(TableFileError::WrongName { .. })
    ));
    let full = fs::read(&path).unwrap();
    fs::write(&path, &full[..HEADER_LEN + 5000]).unwrap();
    assert!(matches!(
        verify_file(&path, "t"),
        Err(TableFileError::Truncated { .. })
    ));
    // The header of a partial file still reads.
    assert_eq!(read_header(&path).unwrap().body_len, 1_500_000);
    fs::write(&path, &full[..100]).unwrap();
    assert!(matches!(
        read_header(&path),
        Err(TableFileError::TooShort { .. })
    ));
}

#[test]
fn a_body_fed_in_pieces_of_any_size_checks_as_the_whole_file_does() {
    let dir = TempDir::new("incremental");
    // A body of three checksum chunks (the last one short).
    let path = write_sample(&dir.0, "t", 5_000_000);
    let header = read_header(&path).unwrap();
    let full = fs::read(&path).unwrap();
    let body = &full[HEADER_LEN..];
    let feed = |body: &[u8], sizes: &[usize]| {
        let mut check = BodyCheck::new(&path, header.clone());
        let mut at = 0;
        for &n in sizes.iter().cycle() {
            if at == body.len() {
                break;
            }
            let end = (at + n).min(body.len());
            check.feed(&body[at..end]);
            at = end;
        }
        assert_eq!(check.fed(), body.len() as u64);
        check.finish()
    };
    // Whole chunks, pieces across chunk boundaries (a stream aligned on the file, not the
    // body), single bytes at the seams, everything at once.
    let whole = 1 << 20;
    for sizes in [
        &[whole][..],
        &[whole - HEADER_LEN, HEADER_LEN][..],
        &[1, whole - 1, 7, 3 * whole][..],
        &[333_333][..],
        &[body.len()][..],
    ] {
        assert_eq!(feed(body, sizes).unwrap(), header, "{sizes:?}");
    }
    // One flipped bit in the last chunk, a byte short, a byte too many: typed errors.
    let mut bad = body.to_vec();
    bad[2 * whole + 5] ^= 0x10;
    let err = feed(&bad, &[whole - HEADER_LEN]).unwrap_err();
    assert!(
        matches!(err, TableFileError::ChecksumMismatch { .. }),
        "{err:?}"
    );
    let err = feed(&body[..body.len() - 1], &[whole]).unwrap_err();
    assert!(matches!(err, TableFileError::Truncated { .. }), "{err:?}");
    let mut long = body.to_vec();
    long.push(0);
    let err = feed(&long, &[whole]).unwrap_err();
    assert!(
        matches!(err, TableFileError::TrailingData { .. }),
        "{err:?}"
    );
}

#[test]
fn a_large_table_in_huge_pages_reads_its_file_exactly() {
    // 40 MB, beyond `huge::PAGE_CACHE_FROM`: mapped again from the page cache where the
    // system keeps it in huge pages (then at most one 2 MiB block of it in small pages),
    // else copied; the same bytes either way.
    let dir = TempDir::new("pagecache");
    let entries: u64 = 80_000_000;
    let body: Vec<u8> = (0..entries as usize / 2)
        .map(|i| (i * 131 + i / 4099) as u8)
        .collect();
    let path = table_path(&dir.0, "h48h0k4");
    write_table(&path, &TableMeta::new("h48h0k4", entries, 4), &body).unwrap();
    let mapped = TableFile::open(&path, "h48h0k4")
        .unwrap()
        .into_packed4()
        .unwrap();
    let huge = mapped.to_huge_pages();
    assert_eq!(huge.as_bytes(), &body[..]);
    assert_eq!(huge.len(), entries);
    assert!(!huge.is_mapped());
    assert!(huge.is_huge_copy() != huge.is_page_cache_huge());
    if huge.is_huge_copy() {
        eprintln!("copied: this system keeps no page cache in huge pages here");
        return;
    }
    let (size_kb, huge_kb) = crate::huge::coverage(huge.as_bytes().as_ptr() as usize).unwrap();
    let file_kb = fs::metadata(&path).unwrap().len() / 1024;
    assert_eq!(
        size_kb,
        file_kb.next_multiple_of(4),
        "the map is the whole file"
    );
    assert!(
        huge_kb + 2 * 2048 >= file_kb,
        "{huge_kb} of {file_kb} kB in huge pages"
    );
}

#[test]
fn huge_page_copy_of_a_mapped_table_reads_its_file_exactly() {
    let dir = TempDir::new("huge");
    // 4.5 MB: three 2 MiB shares, so several threads read, the last one short.
    let path = write_sample(&dir.0, "h48h0k4", 9_000_001);
    let mapped = TableFile::open(&path, "h48h0k4")
        .unwrap()
        .into_packed4()
        .unwrap();
    let copy = mapped.to_huge_pages();
    assert!(copy.is_huge_copy() && !copy.is_mapped());
    assert_eq!(copy.as_bytes(), mapped.as_bytes());
    assert_eq!(copy.len(), mapped.len());

    // The reader itself: any offset, any thread count; a file shorter than asked for is
    // an error, not a partly filled table.
    let file = fs::File::open(&path).unwrap();
    let len = fs::metadata(&path).unwrap().len() as usize;
    let whole = fs::read(&path).unwrap();
    for threads in [1, 2, 3, 8] {
        let got = crate::huge::HugeArray::read_file(&file, 17, len - 17, threads).unwrap();
        assert_eq!(&got[..], &whole[17..], "{threads} threads");
    }
    let short = crate::huge::HugeArray::read_file(&file, 17, len, 2)
        .err()
        .unwrap();
    assert_eq!(short.kind(), std::io::ErrorKind::UnexpectedEof);
    let empty = crate::huge::HugeArray::read_file(&file, 0, 0, 2).unwrap();
    assert!(empty.is_empty());
}

/// `verify_once` reads a body the first time and remembers it; a write to the file
/// makes it read again (and a damaged body is refused); a file written whole is
/// remembered as it is written.
#[test]
fn a_verified_file_is_remembered_until_it_changes() {
    use super::stamp::Stamps;
    let dir = TempDir::new("stamp");
    let stamps = Stamps::at(dir.0.join("cache"));
    let path = write_sample(&dir.0, "stamped", 3000);
    let f = TableFile::open(&path, "stamped").unwrap();
    assert!(!f.verified_in(&stamps));
    assert_eq!(
        f.verify_once_in(&stamps, &Silent).unwrap(),
        Checked::Verified
    );
    assert!(f.verified_in(&stamps));
    assert_eq!(
        f.verify_once_in(&stamps, &Silent).unwrap(),
        Checked::Remembered
    );
    drop(f);
    // Rewritten in place with a byte of the body flipped: no longer remembered.
    patch(&path, HEADER_LEN + 10, |b| b[0] ^= 1);
    let f = TableFile::open(&path, "stamped").unwrap();
    assert!(!f.verified_in(&stamps));
    assert!(matches!(
        f.verify_once_in(&stamps, &Silent),
        Err(TableFileError::ChecksumMismatch { .. })
    ));
    // Still refused the next time (a failure is never remembered).
    assert!(f.verify_once_in(&stamps, &Silent).is_err());
    drop(f);
    // Mended in place: read again, then remembered.
    patch(&path, HEADER_LEN + 10, |b| b[0] ^= 1);
    let f = TableFile::open(&path, "stamped").unwrap();
    assert_eq!(
        f.verify_once_in(&stamps, &Silent).unwrap(),
        Checked::Verified
    );
    assert_eq!(
        f.verify_once_in(&stamps, &Silent).unwrap(),
        Checked::Remembered
    );
    // A file written whole is stamped by its writer.
    let file = std::fs::File::open(&path).unwrap();
    stamps.remember_file(&file, f.header().checksum);
    let g = TableFile::open(&path, "stamped").unwrap();
    assert!(g.verified_in(&stamps));
}
