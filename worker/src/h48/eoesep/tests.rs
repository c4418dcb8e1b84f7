use super::*;
use crate::h48::coords::Coords;
use std::sync::OnceLock;
use tables::progress::Silent;
use tables::random::SplitMix64;
use tables::symmetry::symmetries;
use tables::{Move, Position};

/// The table, generated once for every test of this module.
fn table() -> &'static (EoesepCoord, bfs::Generated) {
    static T: OnceLock<(EoesepCoord, bfs::Generated)> = OnceLock::new();
    T.get_or_init(|| Eoesep::generate(&Silent))
}

fn bound(c: &Cube) -> u8 {
    let (coord, g) = table();
    g.table.get(coord.index_of(c))
}

/// Whether the edges of `c` have the solved separation and orientation.
fn coordinate_solved(c: &Cube) -> bool {
    EdgeSep.index(c) == EdgeSep.index(&Cube::SOLVED) && eo_bits(c) == 0
}

#[test]
fn the_reduction_has_its_class_count_and_agrees_with_conjugation() {
    let coord = EoesepCoord::new();
    assert_eq!(coord.classes(), CLASSES);
    let syms = symmetries();
    let coords = Coords::new();
    let mut rng = SplitMix64::new(37);
    for _ in 0..2000 {
        let c = Cube::random(&mut rng);
        // The search's fast coordinates are this module's.
        assert_eq!(coords.edges(&c, 0), (EdgeSep.index(&c), eo_bits(&c)));
        let x = coord.index_of(&c);
        let mut same = Vec::new();
        coord.images((x / EO) as u32, (x % EO) as u32, |i| same.push(i));
        assert!(same.contains(&x));
        for (k, &s) in SYMS.iter().enumerate() {
            let conj = syms.conjugate(&c, s);
            // Each symmetry acts on the orientation bits alone ...
            assert_eq!(
                coord.eo_map[k << 12 | eo_bits(&c) as usize] as u32,
                eo_bits(&conj),
                "symmetry {s}"
            );
            // ... and the conjugate is the same entry, up to a self-symmetry.
            assert!(same.contains(&coord.index_of(&conj)), "symmetry {s}");
        }
    }
}

#[test]
fn the_table_is_the_exact_distance_of_its_coordinate() {
    let (coord, g) = table();
    assert_eq!(g.table.len(), ENTRIES);
    assert_eq!(g.unreachable, 0);
    assert_eq!(g.capped, 0);
    assert_eq!(g.distribution.iter().sum::<u64>(), ENTRIES);
    assert_eq!(g.distribution, g.table.distribution());
    // Solved is 0, and only the solved coordinate is.
    assert_eq!(bound(&Cube::SOLVED), 0);
    let solved = coord.index_of(&Cube::SOLVED);
    let fixed = coord.selfsym[(solved / EO) as usize].count_ones() as u64;
    assert!(g.distribution[0] <= fixed);
    // Random positions and random walks from solved: a BFS distance changes by at most
    // one a move, and a position not at 0 has a move that brings it one closer. With 0
    // only at the solved coordinate, that makes each value the exact distance.
    let mut rng = SplitMix64::new(4);
    let mut walk = Cube::SOLVED;
    for i in 0..3000 {
        let c = if i % 2 == 0 {
            Cube::random(&mut rng)
        } else {
            walk = walk.compose(&MOVE_CUBES[rng.below(18) as usize]);
            walk
        };
        let v = bound(&c);
        assert_eq!(v == 0, coordinate_solved(&c), "position {i}");
        let next: Vec<u8> = MOVE_CUBES.iter().map(|m| bound(&c.compose(m))).collect();
        assert!(next.iter().all(|&n| n.abs_diff(v) <= 1), "position {i}");
        assert!(v == 0 || next.contains(&(v - 1)), "position {i}");
    }
}

#[test]
fn it_sees_the_flips_that_h0_cannot() {
    // Corners solved, every edge in place and flipped: the corner-and-separation bound
    // is 0, this one is the orientation's whole distance.
    let superflip = Position::parse("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2").unwrap();
    let c = superflip.cube();
    assert_eq!(EdgeSep.index(c), EdgeSep.index(&Cube::SOLVED));
    assert_eq!(eo_bits(c), 0xfff);
    let v = bound(c);
    assert!(v >= 7, "superflip bound {v}");
    assert!(v <= 20);
    // A bound never exceeds a known solution's length.
    let mut rng = SplitMix64::new(9);
    for len in 0..=12 {
        for _ in 0..50 {
            let moves: Vec<Move> = (0..len)
                .map(|_| Move::ALL[rng.below(18) as usize])
                .collect();
            let c = moves
                .iter()
                .fold(Cube::SOLVED, |c, m| c.compose(&MOVE_CUBES[m.index()]));
            assert!(bound(&c) as usize <= len, "{moves:?}");
        }
    }
}

#[test]
fn a_written_table_opens_and_a_damaged_one_is_refused() {
    let dir = std::env::temp_dir().join(format!("cubeswarm-eoesep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Eoesep::build(&dir, &Silent).unwrap();
    let t = Eoesep::open(&dir).unwrap();
    let (_, g) = table();
    assert_eq!(t.table.as_bytes(), g.table.as_bytes());
    let path = tablefile::table_path(&dir, NAME);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x11;
    std::fs::write(&path, &bytes).unwrap();
    let err = Eoesep::open(&dir).err().expect("damaged table refused");
    let msg = err.to_string();
    assert!(msg.contains(NAME), "{msg}");
    assert!(msg.contains("checksum"), "{msg}");
    bytes.truncate(n - 1000);
    std::fs::write(&path, &bytes).unwrap();
    let msg = Eoesep::open(&dir).err().unwrap().to_string();
    assert!(msg.contains(NAME), "{msg}");
    std::fs::remove_dir_all(&dir).unwrap();
}
