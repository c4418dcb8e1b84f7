//! Uniformly random cube states, from a small deterministic generator (so benchmarks and
//! tests are reproducible from a seed without pulling in a random-number crate).

use crate::cube::{perm_parity, Cube};

/// SplitMix64: a fast, well-mixed 64-bit generator. Not cryptographic.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A uniform value in `0..n` (n > 0), by rejection.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }
}

fn shuffle<const N: usize>(rng: &mut SplitMix64) -> [u8; N] {
    let mut p: [u8; N] = std::array::from_fn(|i| i as u8);
    for i in (1..N).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

impl Cube {
    /// A uniformly random reachable position (each of the 4.3·10^19 equally likely).
    pub fn random(rng: &mut SplitMix64) -> Cube {
        let cp: [u8; 8] = shuffle(rng);
        let mut ep: [u8; 12] = shuffle(rng);
        if perm_parity(&cp) != perm_parity(&ep) {
            ep.swap(10, 11);
        }
        let mut co = [0u8; 8];
        let mut eo = [0u8; 12];
        let (mut ts, mut fs) = (0u8, 0u8);
        for o in co.iter_mut().take(7) {
            *o = rng.below(3) as u8;
            ts += *o;
        }
        co[7] = (3 - ts % 3) % 3;
        for o in eo.iter_mut().take(11) {
            *o = rng.below(2) as u8;
            fs += *o;
        }
        eo[11] = fs % 2;
        Cube::from_parts_unchecked(cp, co, ep, eo)
    }
}
