//! Scrambles made whole, with the two-phase tables of `<workspace>/target/test-tables`
//! (built there once if missing): they make their states, reproduce by seed whatever the
//! thread count, and are filtered.

use std::path::Path;
use std::sync::OnceLock;
use tables::{parse_moves, Cube, Position};
use worker::scramble::{random_state, solvable_within, WCA_MIN_MOVES};
use worker::{Scrambler, TwoPhaseSolver};

fn scrambler() -> &'static Scrambler {
    static S: OnceLock<Scrambler> = OnceLock::new();
    S.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-tables");
        let solver = TwoPhaseSolver::open_or_build(&dir, &tables::progress::Silent)
            .expect("two-phase tables");
        Scrambler::new(solver).expect("scrambler")
    })
}

fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("pool")
        .install(f)
}

const COUNT: u64 = 50;

/// Each scramble, read back as text, makes its state; the state is the seed's, at
/// least two moves from solved; the scramble has at most 20 moves.
#[test]
fn scrambles_make_their_states() {
    let got = with_threads(2, || scrambler().scrambles(7, 0..COUNT)).unwrap();
    assert_eq!(got.len(), COUNT as usize);
    for (i, s) in got.iter().enumerate() {
        assert_eq!(s.index, i as u64);
        assert_eq!(s.state, random_state(7, s.index));
        assert!(s.moves.len() <= 20, "{}", s.text());
        let read = Cube::from_moves(&parse_moves(&s.text()).unwrap());
        assert_eq!(read, s.state, "{}", s.text());
        let from_facelets = Position::parse(&s.facelets()).unwrap();
        assert_eq!(*from_facelets.cube(), s.state);
        assert!(!solvable_within(&s.state, WCA_MIN_MOVES - 1));
    }
}

/// The same seed gives the same scrambles with one thread or two, in one call or in
/// pieces; another seed gives others.
#[test]
fn scrambles_reproduce_by_seed_whatever_the_threads() {
    let one = with_threads(1, || scrambler().scrambles(42, 0..COUNT)).unwrap();
    let two = with_threads(2, || scrambler().scrambles(42, 0..COUNT)).unwrap();
    assert_eq!(one, two);
    let tail = with_threads(2, || scrambler().scrambles(42, 30..COUNT)).unwrap();
    assert_eq!(tail[..], one[30..]);
    assert_eq!(scrambler().scramble(42, 17).unwrap(), one[17]);
    let other = with_threads(2, || scrambler().scrambles(43, 0..COUNT)).unwrap();
    assert!(one.iter().zip(&other).all(|(a, b)| a.state != b.state));
}
