use super::small::flip_conjugation;
use super::*;
use ::tables::SplitMix64;

fn tables() -> (TwoPhaseTables, Vec<u32>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-tables");
    let t = TwoPhaseTables::open_or_build(&dir, &::tables::progress::Silent).unwrap();
    let fsym = decode_fsym(&TableFile::open(table_path(&dir, FSYM_NAME), FSYM_NAME).unwrap());
    (t, fsym.unwrap())
}

/// The flip of a conjugated position splits into a part of the flip and a part of the
/// UDSlice, as `flip_conjugation` assumes.
#[test]
fn conjugated_flip_splits_into_flip_and_slice_parts() {
    let (p, m) = flip_conjugation();
    let syms = ::tables::symmetries();
    let mut rng = SplitMix64::new(11);
    for _ in 0..20_000 {
        let c = Cube::random(&mut rng);
        let s = rng.below(NSYM_UD as u64) as usize;
        let (f, u) = (Flip.index(&c) as usize, UdSlice.index(&c) as usize);
        assert_eq!(
            Flip.index(&syms.conjugate(&c, s)) as u16,
            p[s * N_FLIP + f] ^ m[s * N_SLICE + u]
        );
    }
}

/// The in-cache route to the pruning entry reads the same distance as the class file.
#[test]
fn pruning_index_agrees_with_the_class_file() {
    let (t, fsym) = tables();
    let mut rng = SplitMix64::new(12);
    for _ in 0..50_000 {
        let c = Cube::random(&mut rng);
        let (f, u, tw) = (Flip.index(&c), UdSlice.index(&c), Twist.index(&c));
        let cs = fsym[(f + N_FLIP as u32 * u) as usize];
        let tc = t.twist_conj[(cs & 15) as usize * N_TWIST + tw as usize];
        let old = u64::from(cs >> 4) * N_TWIST as u64 + u64::from(tc);
        let new = t.p1_index(f as u16, u as u16, tw as u16);
        assert_eq!(
            t.p1.get(new),
            t.p1.get(old),
            "flip {f} slice {u} twist {tw}"
        );
    }
}
