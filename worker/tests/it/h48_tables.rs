//! H48 tables: golden distributions and cross-checks against brute force.
//!
//! Run: `cargo test -p cubeswarm-worker h48` (tables are cached in
//! `target/test-tables`; the first run builds h48h0k4 in about 15 s).

use crate::h48_common;

use std::collections::HashMap;
use tables::packed::{Packed2, Packed4};
use tables::tablefile::{self, TableFile};
use tables::{Cube, Move, SplitMix64};
use worker::h48::cocsep::{self, Cocsep};
use worker::h48::coords::{self, Coords, ESEP};
use worker::h48::gen_k2;

/// Opens table `name` in `dir`.
fn open(dir: &std::path::Path, name: &str) -> TableFile {
    TableFile::open(tablefile::table_path(dir, name), name).unwrap()
}

/// The 4-bit table `name` in `dir`.
fn packed4(dir: &std::path::Path, name: &str) -> Packed4 {
    open(dir, name).into_packed4().unwrap()
}

/// The 2-bit table `name` in `dir`.
fn packed2(dir: &std::path::Path, name: &str) -> Packed2 {
    open(dir, name).into_packed2().unwrap()
}

/// Entries of h48h0k4 at each depth 0..=15 (also nissy-core's h0 distribution).
const H0K4_GOLDEN: [u64; 16] = [
    1, 1, 4, 34, 331, 3612, 41605, 474128, 4953846, 34776317, 68566704, 8749194, 1673, 0, 0, 0,
];

/// Raw cocsep values at each corner distance 0..=9.
const COCSEP_GOLDEN: [u64; 10] = [1, 6, 63, 468, 3068, 15438, 53814, 71352, 8784, 96];

#[test]
fn h48_h0k4_distribution_is_golden_and_verified() {
    let dir = h48_common::ensure("h48h0k4");
    let f = open(&dir, "h48h0k4");
    assert_eq!(&f.header().distribution[..16], &H0K4_GOLDEN);
    assert_eq!(f.header().meta.entries, 3393 * 34650);
    f.verify().unwrap();
    let t = f.into_packed4().unwrap();
    assert_eq!(t.distribution(), H0K4_GOLDEN);
}

#[test]
fn h48_cocsep_file_matches_a_fresh_computation() {
    let dir = h48_common::ensure("h48h0k4");
    let c = Cocsep::open(&dir).unwrap();
    let fresh = Cocsep::compute(&cocsep::sym_coord());
    assert_eq!(c.words(), fresh.words());
    let f = open(&dir, "cocsep");
    assert_eq!(&f.header().distribution[..10], &COCSEP_GOLDEN);
    assert_eq!(c.max_depth(), 9);
}

/// The index of `c` in a table with `eo_bits` orientation bits.
fn index(coords: &Coords, cs: &Cocsep, c: &Cube, eo_bits: u32) -> u64 {
    let w = cs.get(coords.cocsep_raw(c));
    let (esep, eo) = coords.edges(c, (w >> 12 & 63) as usize);
    (((w & 0xfff) as u64 * ESEP as u64 + esep as u64) << eo_bits) | coords::eo_part(eo, eo_bits)
}

/// Breadth-first search over h0 cosets (keyed without symmetry: raw corners and edge
/// separation of the cube itself) to depth 5: every coset met first at depth d must have
/// table value d, and the distinct indices per level cannot exceed the golden counts.
#[test]
fn h48_h0k4_entries_match_brute_force_to_depth_5() {
    let solver = h48_common::h0k4();
    let dir = h48_common::tables_dir();
    let t = packed4(&dir, "h48h0k4");
    let coords = Coords::new();
    let key = |c: &Cube| coords.cocsep_raw(c) as u64 * ESEP as u64 + coords.edges(c, 0).0 as u64;
    let mut seen: HashMap<u64, u8> = HashMap::new();
    seen.insert(key(&Cube::SOLVED), 0);
    let mut frontier = vec![Cube::SOLVED];
    for d in 1..=5u8 {
        let mut next = Vec::new();
        for c in &frontier {
            for m in Move::ALL {
                let n = c.apply_move(m);
                if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(key(&n)) {
                    e.insert(d);
                    next.push(n);
                }
            }
        }
        let mut indices = std::collections::HashSet::new();
        for c in &next {
            assert_eq!(t.get(solver.table_index(c)), d);
            indices.insert(solver.table_index(c));
        }
        assert!(
            indices.len() as u64 <= H0K4_GOLDEN[d as usize],
            "depth {d}: {} indices",
            indices.len()
        );
        frontier = next;
    }
}

/// The k2 generator (breadth-first over h11 cosets, then depth-first tails), run with a
/// small base on N = 0, must reproduce h48h0k4 reduced to 2 bits with that base, byte for
/// byte.
#[test]
fn h48_k2_generator_reproduces_h0k4_with_a_small_base() {
    let dir = h48_common::ensure("h48h0k4");
    let cs = Cocsep::open(&dir).unwrap();
    let name = "test-h0k2-b3";
    gen_k2::generate(&dir, name, 0, 3, &cs, &tables::progress::Silent).unwrap();
    let gen = packed2(&dir, name);
    let conv = packed4(&dir, "h48h0k4").to_packed2(3);
    assert_eq!(gen.base(), 3);
    assert_eq!(gen.distribution(), conv.distribution());
    assert!(gen.as_bytes() == conv.as_bytes(), "tables differ");
}

/// With N = 2 and a small base: each entry is at least its h0 entry (it stands for fewer
/// positions), and short scrambles never get a bound above their length.
#[test]
fn h48_k2_generator_with_orientation_bits_is_admissible_and_refines_h0() {
    let dir = h48_common::ensure("h48h0k4");
    let cs = Cocsep::open(&dir).unwrap();
    let name = "test-h2k2-b3";
    gen_k2::generate(&dir, name, 2, 3, &cs, &tables::progress::Silent).unwrap();
    let h2 = packed2(&dir, name);
    let h0 = packed4(&dir, "h48h0k4").to_packed2(3);
    let (a, b) = (h2.as_bytes(), h0.as_bytes());
    // Entry i of h2 lies in h0 entry i >> 2: byte j of h2 holds entries 4j..4j+4, all in
    // h0 entry j.
    for j in 0..a.len() {
        let h0v = (b[j / 4] >> (2 * (j % 4))) & 3;
        for k in 0..4 {
            assert!(
                (a[j] >> (2 * k)) & 3 >= h0v,
                "entry {} below its h0 entry",
                4 * j + k
            );
        }
    }
    let coords = Coords::new();
    let mut rng = SplitMix64::new(11);
    let mut strict = 0;
    for _ in 0..20_000 {
        let len = 1 + rng.below(6) as usize;
        let moves: Vec<Move> = (0..len)
            .map(|_| Move::ALL[rng.below(18) as usize])
            .collect();
        let c = Cube::from_moves(&moves);
        let s = h2.get(index(&coords, &cs, &c, 2));
        let bound = if s == 0 { 0 } else { 3 + s as usize };
        assert!(bound <= len, "{moves:?}: bound {bound}");
        strict += (bound > 0) as u32;
    }
    assert!(strict > 1000, "the table says something: {strict}");
}

/// Body checksums of two small k2 tables as a reference build writes them (one that keeps
/// a byte copy beside the table and holds the breadth-first levels as cubes): the
/// memory-bounded build must write the same bytes.
const OLD_METHOD_CHECKSUMS: [(&str, u8, u8, u64); 2] = [
    ("test-h2k2-b3", 2, 3, 0x8d5ca1cacaa57457),
    ("test-h3k2-b5", 3, 5, 0xc793160123c30ce0),
];

#[test]
fn h48_k2_generator_writes_the_same_bytes_as_the_previous_method() {
    let dir = h48_common::ensure("h48h0k4");
    let cs = Cocsep::open(&dir).unwrap();
    for (name, eo_bits, base, checksum) in OLD_METHOD_CHECKSUMS {
        gen_k2::generate(&dir, name, eo_bits, base, &cs, &tables::progress::Silent).unwrap();
        let f = open(&dir, name);
        f.verify().unwrap();
        assert_eq!(f.header().checksum, checksum, "{name}");
    }
}

/// A build stopped after some batches of tails (as a killed one would be, its checkpoint
/// on disk) and then run again resumes from the checkpoint and writes the same bytes as
/// an uninterrupted build; the checkpoint is gone afterwards.
#[test]
fn h48_k2_build_stopped_and_resumed_writes_the_same_bytes() {
    use worker::h48::checkpoint::{self, Checkpoint};
    use worker::h48::gen_k2::{GenOptions, Outcome};
    let src = h48_common::ensure("h48h0k4");
    let cs = Cocsep::open(&src).unwrap();
    let dir = h48_common::tables_dir().join("resume");
    std::fs::create_dir_all(&dir).unwrap();
    let (name, eo_bits, base, checksum) = OLD_METHOD_CHECKSUMS[1];
    let _ = std::fs::remove_file(tablefile::table_path(&dir, name));
    Checkpoint::remove(&dir, name);
    let stop = GenOptions {
        checkpoint_every: None,
        stop_after: Some(100),
    };
    let silent = &tables::progress::Silent;
    let out = gen_k2::generate_with(&dir, name, eo_bits, base, &cs, silent, &stop).unwrap();
    let Outcome::Stopped { done, total } = out else {
        panic!("not stopped: {out:?}")
    };
    assert_eq!(done, 100);
    assert!(total > done, "{total} batches");
    assert!(!tablefile::table_path(&dir, name).exists());
    let c = Checkpoint::probe(&dir, name).expect("a checkpoint");
    assert_eq!(
        (c.done, c.total, c.eo_bits, c.base),
        (100, total, eo_bits, base)
    );
    let out = gen_k2::generate_with(&dir, name, eo_bits, base, &cs, silent, &Default::default());
    assert_eq!(out.unwrap(), Outcome::Written);
    assert_eq!(open(&dir, name).header().checksum, checksum);
    assert!(!checkpoint::path(&dir, name).exists());
    // Checked: its 0.24 GB are not kept between runs.
    let _ = std::fs::remove_file(tablefile::table_path(&dir, name));
}

/// `build_table_with_base` (`tables build NAME --base B`): a base is refused where a table
/// has none or out of range; a k2 table built with another base holds it in its header, has
/// the generator's bytes for that base, and serves optimal solves.
#[test]
fn a_k2_table_built_with_another_base_holds_it_and_serves() {
    let src = h48_common::ensure("h48h0k4");
    let dir = h48_common::tables_dir().join("k2-chosen-base");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["cocsep", "h48h0k4"] {
        let to = tablefile::table_path(&dir, name);
        if !to.exists() {
            h48_common::link_or_copy(&tablefile::table_path(&src, name), &to);
        }
    }
    let silent = &tables::progress::Silent;
    for (name, base) in [
        ("h48h0k4", 3),
        ("h48h0k2", 3),
        ("cocsep", 3),
        ("h48h2k2", 0),
        ("h48h2k2", 13),
    ] {
        let err = worker::h48::build_table_with_base(&dir, name, Some(base), silent).unwrap_err();
        assert!(
            matches!(&err, worker::Error::BadBase { base: b, .. } if *b == base),
            "{name} base {base}: {err}"
        );
    }
    worker::h48::build_table_with_base(&dir, "h48h1k2", Some(4), silent).unwrap();
    let cs = Cocsep::open(&dir).unwrap();
    gen_k2::generate(&dir, "test-h1k2-b4", 1, 4, &cs, silent).unwrap();
    let (built, gen) = (packed2(&dir, "h48h1k2"), packed2(&dir, "test-h1k2-b4"));
    assert_eq!(built.base(), 4);
    assert_ne!(
        gen_k2::BASES[1],
        4,
        "the test must use a base other than the default"
    );
    assert!(built.as_bytes() == gen.as_bytes(), "tables differ");
    let solver = worker::h48::H48Solver::open(&dir, "h48h1k2").unwrap();
    let settings = proto::Settings::default().validate().unwrap();
    let stop = worker::StopToken::new();
    let mut rng = SplitMix64::new(5);
    for len in [6usize, 8] {
        let moves: Vec<Move> = (0..len)
            .map(|_| Move::ALL[rng.below(18) as usize])
            .collect();
        let p = tables::Position::new(Cube::from_moves(&moves)).unwrap();
        let want = h48_common::h0k4().solve(&p, &settings, &stop).unwrap();
        let got = solver.solve(&p, &settings, &stop).unwrap();
        let (want, got) = (&want.solutions[0], &got.solutions[0]);
        assert_eq!(got.len(), want.len(), "{moves:?}");
        assert!(p.is_solved_by(got), "{moves:?}");
    }
}
