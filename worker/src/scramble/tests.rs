use super::*;
use proptest::prelude::*;
use tables::canonical::sequences;

/// The solved cube and the 18 one-move states are too short; every state of a canonical
/// two-move sequence is not, and is within two moves.
#[test]
fn the_filter_refuses_exactly_the_states_within_one_move() {
    assert!(solvable_within(&Cube::SOLVED, 0));
    assert!(solvable_within(&Cube::SOLVED, WCA_MIN_MOVES - 1));
    for m in Move::ALL {
        let c = Cube::from_moves(&[m]);
        assert!(!solvable_within(&c, 0), "{m}");
        assert!(solvable_within(&c, WCA_MIN_MOVES - 1), "{m}");
    }
    let two = sequences(2);
    assert_eq!(two.len(), 243);
    for s in two {
        let c = Cube::from_moves(&s);
        assert!(
            !solvable_within(&c, WCA_MIN_MOVES - 1),
            "{}",
            format_moves(&s)
        );
        assert!(solvable_within(&c, 2), "{}", format_moves(&s));
    }
}

/// Every canonical sequence of up to three moves is optimal (the first duplicates come
/// at four), so its state is within `d` moves exactly when its length is at most `d`.
#[test]
fn solvable_within_matches_the_length_of_short_sequences() {
    for len in 0..=3 {
        for s in sequences(len) {
            let c = Cube::from_moves(&s);
            for d in 0..=3u8 {
                assert_eq!(
                    solvable_within(&c, d),
                    len <= usize::from(d),
                    "{} within {d}",
                    format_moves(&s)
                );
            }
        }
    }
}

/// Too-short draws are drawn again: solved and one-move states are skipped, the first
/// state of two moves is taken.
#[test]
fn short_draws_are_drawn_again() {
    let wanted = Cube::from_moves(&tables::parse_moves("R U").unwrap());
    let mut draws = [
        Cube::SOLVED,
        Cube::from_moves(&tables::parse_moves("R").unwrap()),
        Cube::from_moves(&tables::parse_moves("B'").unwrap()),
        wanted,
        Cube::SOLVED,
    ]
    .into_iter();
    let mut n = 0;
    let got = first_long_enough(|| {
        n += 1;
        draws.next().unwrap_or(Cube::SOLVED)
    });
    assert_eq!(got, wanted);
    assert_eq!(n, 4);
}

#[test]
fn scramble_errors_are_said_once() {
    use std::error::Error as _;
    let e = ScrambleError::from(Error::Verification {
        moves: "R U".to_string(),
    });
    assert_eq!(
        e.to_string(),
        "internal error: solution R U does not solve the position"
    );
    assert!(e.source().is_none());
    let f = ScrambleError::Failed {
        facelets: to_facelets(&Cube::SOLVED),
        why: "R does not make it".to_string(),
    };
    assert!(f.to_string().ends_with(": R does not make it"), "{f}");
    assert!(f.source().is_none());
}

proptest! {
    /// A state is a pure function of (seed, index), legal, and never within one move.
    #[test]
    fn states_are_reproducible_legal_and_filtered(seed in any::<u64>(), index in any::<u64>()) {
        let c = random_state(seed, index);
        prop_assert_eq!(c, random_state(seed, index));
        prop_assert!(c.check().is_ok());
        prop_assert!(!solvable_within(&c, WCA_MIN_MOVES - 1));
    }

    /// Neighbouring indices, and the same index under another seed, get other streams.
    #[test]
    fn indices_and_seeds_get_their_own_streams(seed in any::<u64>(), index in 0..u64::MAX) {
        let first = state_rng(seed, index).next_u64();
        prop_assert_ne!(first, state_rng(seed, index + 1).next_u64());
        prop_assert_ne!(first, state_rng(seed.wrapping_add(1), index).next_u64());
    }
}

/// The chi-square test's survival function, P(X ≥ x) for X ~ χ²(df): the regularised
/// upper incomplete gamma function Q(df/2, x/2), by its series below a + 1 and its
/// continued fraction above (Numerical Recipes, §6.2).
fn chi2_sf(x: f64, df: usize) -> f64 {
    let a = df as f64 / 2.0;
    let x = x / 2.0;
    if x <= 0.0 {
        return 1.0;
    }
    // ln Γ(a) for a whole or half-whole a: Γ(1) = 1, Γ(1/2) = √π, Γ(a + 1) = a Γ(a).
    let mut ln_gamma = if df.is_multiple_of(2) {
        0.0
    } else {
        0.5 * std::f64::consts::PI.ln()
    };
    let mut b = if df.is_multiple_of(2) { 1.0 } else { 0.5 };
    while b < a {
        ln_gamma += b.ln();
        b += 1.0;
    }
    let front = (a * x.ln() - x - ln_gamma).exp();
    if x < a + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        while term > sum * 1e-17 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
        }
        1.0 - sum * front
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let (mut c, mut d) = (1.0 / tiny, 1.0 / b);
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            d = if d.abs() < tiny { tiny } else { d };
            c = b + an / c;
            c = if c.abs() < tiny { tiny } else { c };
            d = 1.0 / d;
            let step = d * c;
            h *= step;
            if (step - 1.0).abs() < 1e-16 {
                break;
            }
        }
        front * h
    }
}

#[test]
fn chi2_sf_matches_known_values() {
    // Two degrees of freedom: exactly e^(-x/2); four: e^(-x/2) (1 + x/2).
    for x in [0.5, 1.0, 3.0, 10.0, 40.0, 90.0] {
        let two = (-x / 2.0f64).exp();
        assert!(
            (chi2_sf(x, 2) - two).abs() <= 1e-12 * two.max(1e-300),
            "{x}"
        );
        let four = two * (1.0 + x / 2.0);
        assert!(
            (chi2_sf(x, 4) - four).abs() <= 1e-12 * four.max(1e-300),
            "{x}"
        );
    }
    // The textbook 5% points of one and ten degrees of freedom.
    assert!((chi2_sf(3.841_458_820_694_124, 1) - 0.05).abs() < 1e-9);
    assert!((chi2_sf(18.307_038_053_275_146, 10) - 0.05).abs() < 1e-9);
}

/// The p-value of `observed` counts against category probabilities `probs` (Pearson's
/// chi-square, one degree of freedom fewer than the categories of non-zero probability;
/// a category of probability zero must be empty).
fn p_value(observed: &[u64], probs: &[f64]) -> f64 {
    assert_eq!(observed.len(), probs.len());
    let n: u64 = observed.iter().sum();
    let mut chi2 = 0.0;
    let mut categories = 0;
    for (&o, &p) in observed.iter().zip(probs) {
        if p == 0.0 {
            assert_eq!(o, 0, "a count in a category of probability zero");
            continue;
        }
        let e = p * n as f64;
        chi2 += (o as f64 - e).powi(2) / e;
        categories += 1;
    }
    chi2_sf(chi2, categories - 1)
}

/// The p-value below which a sample is called non-uniform: at most 23 tests per sample,
/// so a fair generator fails one with probability under 2.3·10⁻⁵ (and the seeded sample
/// never changes).
const P_MIN: f64 = 1e-6;

/// Exact distribution of the number of cubies of `n` with a non-zero orientation mod
/// `m`, when every orientation vector summing to 0 mod `m` is equally likely.
fn nonzero_count_distribution(n: u32, m: u32) -> Vec<f64> {
    let mut counts = vec![0u64; n as usize + 1];
    let mut total = 0u64;
    for v in 0..m.pow(n) {
        let digits: Vec<u32> = (0..n).map(|i| v / m.pow(i) % m).collect();
        if digits.iter().sum::<u32>() % m == 0 {
            counts[digits.iter().filter(|&&d| d != 0).count()] += 1;
            total += 1;
        }
    }
    counts.iter().map(|&c| c as f64 / total as f64).collect()
}

/// Every coordinate test of a sample of states: (name, p-value).
fn coordinate_tests(states: &[Cube]) -> Vec<(String, f64)> {
    let mut parity = [0u64; 2];
    let mut twist = [[0u64; 3]; 8];
    let mut flip = [[0u64; 2]; 12];
    let mut twisted = [0u64; 9];
    let mut flipped = [0u64; 13];
    for c in states {
        assert_eq!(c.corner_parity(), c.edge_parity());
        parity[usize::from(c.corner_parity())] += 1;
        let (co, eo) = (c.co(), c.eo());
        for (i, &o) in co.iter().enumerate() {
            twist[i][usize::from(o)] += 1;
        }
        for (i, &o) in eo.iter().enumerate() {
            flip[i][usize::from(o)] += 1;
        }
        twisted[co.iter().filter(|&&o| o != 0).count()] += 1;
        flipped[eo.iter().filter(|&&o| o != 0).count()] += 1;
    }
    let mut out = vec![("corner parity".to_string(), p_value(&parity, &[0.5; 2]))];
    for (i, t) in twist.iter().enumerate() {
        out.push((format!("twist of corner {i}"), p_value(t, &[1.0 / 3.0; 3])));
    }
    for (i, f) in flip.iter().enumerate() {
        out.push((format!("flip of edge {i}"), p_value(f, &[0.5; 2])));
    }
    let twist_law = nonzero_count_distribution(8, 3);
    out.push(("twisted corners".to_string(), p_value(&twisted, &twist_law)));
    let flip_law = nonzero_count_distribution(12, 2);
    out.push(("flipped edges".to_string(), p_value(&flipped, &flip_law)));
    out
}

const SAMPLE: u64 = 100_000;
const SEED: u64 = 0x5c4a_b1e5;

/// 100,000 scramble states (the generator scrambles draw from, seeded): corner
/// permutation parity, each corner's twist and each edge's flip, and the numbers of
/// twisted corners and flipped edges against their exact distributions.
#[test]
fn states_are_uniform_by_chi_square() {
    let states: Vec<Cube> = (0..SAMPLE).map(|i| random_state(SEED, i)).collect();
    for (name, p) in coordinate_tests(&states) {
        assert!(p >= P_MIN, "{name}: p = {p:e}");
    }
}

/// The same tests see a bias of a few percent: one state in twenty with its corners
/// untwisted, or one odd state in twenty drawn again.
#[test]
fn the_chi_square_tests_see_small_biases() {
    let untwisted: Vec<Cube> = (0..SAMPLE)
        .map(|i| {
            let c = random_state(SEED, i);
            if i % 20 == 0 {
                Cube::from_parts_unchecked(c.cp(), [0; 8], c.ep(), c.eo())
            } else {
                c
            }
        })
        .collect();
    let failed: Vec<String> = coordinate_tests(&untwisted)
        .into_iter()
        .filter(|(_, p)| *p < P_MIN)
        .map(|(name, _)| name)
        .collect();
    assert!(
        failed.contains(&"twisted corners".to_string()),
        "{failed:?}"
    );
    assert!(
        failed.contains(&"twist of corner 0".to_string()),
        "{failed:?}"
    );
    let even: Vec<Cube> = (0..SAMPLE)
        .map(|i| {
            let c = random_state(SEED, i);
            if i % 10 == 0 && c.corner_parity() {
                random_state(SEED ^ 1, i)
            } else {
                c
            }
        })
        .collect();
    let parity = coordinate_tests(&even)[0].clone();
    assert!(parity.1 < P_MIN, "{parity:?}");
}
