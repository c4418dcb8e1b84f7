//! The checksum: four independent multiply–rotate lanes over 8-byte words, so a single
//! changed word always changes the result (every step is a bijection of the lane state),
//! and throughput is limited by memory rather than by one dependency chain.

const K1: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0xbf58_476d_1ce4_e5b9;
const K3: u64 = 0x94d0_49bb_1331_11eb;

#[inline(always)]
fn round(acc: u64, word: u64) -> u64 {
    (acc ^ word).wrapping_mul(K2).rotate_left(29)
}

#[inline(always)]
fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// A bijective final mix.
pub(super) fn finish(mut x: u64) -> u64 {
    x ^= x >> 31;
    x = x.wrapping_mul(K3);
    x ^= x >> 29;
    x = x.wrapping_mul(K2);
    x ^ (x >> 32)
}

/// Initial state of a fold over chunk hashes.
pub(super) fn start(len: u64) -> u64 {
    len.wrapping_mul(K1) ^ K3
}

/// Folds one chunk hash into the state (a bijection of the state).
pub(super) fn absorb(state: u64, h: u64) -> u64 {
    round(state, h)
}

/// Hash of `data` with `seed`.
pub(super) fn bytes(seed: u64, data: &[u8]) -> u64 {
    let mut lanes = [
        seed ^ K1,
        seed.wrapping_add(K2),
        seed.rotate_left(17) ^ K3,
        !seed,
    ];
    let mut blocks = data.chunks_exact(32);
    for b in &mut blocks {
        lanes[0] = round(lanes[0], le64(b, 0));
        lanes[1] = round(lanes[1], le64(b, 8));
        lanes[2] = round(lanes[2], le64(b, 16));
        lanes[3] = round(lanes[3], le64(b, 24));
    }
    let rest = blocks.remainder();
    let mut words = rest.chunks_exact(8);
    for (lane, w) in lanes.iter_mut().zip(&mut words) {
        *lane = round(*lane, le64(w, 0));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut a = [0u8; 8];
        a[..tail.len()].copy_from_slice(tail);
        lanes[3] = round(lanes[3], u64::from_le_bytes(a));
    }
    let mut h = (data.len() as u64).wrapping_mul(K3);
    for lane in lanes {
        h = round(h, finish(lane));
    }
    finish(h)
}
