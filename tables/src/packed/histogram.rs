//! Per-value counts of packed bodies (a table's distribution), in parallel.

use super::PAR_BYTES;
use rayon::prelude::*;

/// Element-wise sum, for rayon reductions of histograms.
pub(crate) fn add_arrays<const N: usize>(mut a: [u64; N], b: [u64; N]) -> [u64; N] {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
    a
}

/// Number of histogram buckets: values of 31 or more share the last one.
pub(crate) const BUCKETS: usize = 32;

/// For each byte, how many of its four 2-bit fields hold 0, 1, 2, 3, as four 16-bit lanes.
const CRUMB_COUNTS: [u64; 256] = {
    let mut lut = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 4 {
            lut[b] += 1 << (16 * ((b >> (2 * k)) & 3));
            k += 1;
        }
        b += 1;
    }
    lut
};

/// Histogram of `(entry >> shift) & (2^width - 1)`, clamped to 31, over the first `entries`
/// entries of `bits` bits each stored in `bytes` (sequential). `bits` is 2, 4, 8 or 32;
/// for 2 and 4 bits the whole entry is counted (`shift` and `width` are ignored). Bytes
/// beyond the entries' extent are ignored; a short slice just counts fewer entries.
pub(crate) fn histogram_seq(
    bytes: &[u8],
    entries: u64,
    bits: u8,
    shift: u8,
    width: u8,
) -> [u64; BUCKETS] {
    let mut h = [0u64; BUCKETS];
    match bits {
        2 | 4 => count_small(bytes, entries, bits, &mut h),
        _ => {
            let mask = if width >= 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            let mut count =
                |e: u32| h[(((e >> shift.min(31)) & mask) as usize).min(BUCKETS - 1)] += 1;
            let n = usize::try_from(entries).unwrap_or(usize::MAX);
            if bits == 8 {
                bytes.iter().take(n).for_each(|&b| count(u32::from(b)));
            } else {
                bytes
                    .chunks_exact(4)
                    .take(n)
                    .for_each(|c| count(u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            }
        }
    }
    h
}

/// [`histogram_seq`] for 2- and 4-bit entries.
fn count_small(bytes: &[u8], entries: u64, bits: u8, h: &mut [u64; BUCKETS]) {
    let per_byte = u64::from(8 / bits);
    let full = usize::try_from(entries / per_byte)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let (whole, rest) = bytes.split_at(full);
    if bits == 2 {
        count_crumbs(whole, h);
    } else {
        // Count byte values (four interleaved histograms, so runs of one value do not
        // serialise on one counter), then split each byte value into its two nibbles.
        let mut lanes = [[0u64; 256]; 4];
        let mut quads = whole.chunks_exact(4);
        for q in &mut quads {
            for (lane, &b) in lanes.iter_mut().zip(q) {
                lane[b as usize] += 1;
            }
        }
        for &b in quads.remainder() {
            lanes[0][b as usize] += 1;
        }
        for b in 0..256 {
            let n = lanes[0][b] + lanes[1][b] + lanes[2][b] + lanes[3][b];
            h[b & 0xf] += n;
            h[b >> 4] += n;
        }
    }
    // The entries of a last, partly used byte.
    let left = (entries - full as u64 * per_byte).min(per_byte);
    if let Some(&b) = rest.first() {
        let mask = (1u8 << bits) - 1;
        for k in 0..left as u32 {
            h[((b >> (k * u32::from(bits))) & mask) as usize] += 1;
        }
    }
}

/// The counts of 0, 1, 2 and 3 among the 2-bit fields of `bytes` (all of them), added
/// to `h[0..4]`. Eight bytes at a time by population counts: with `lo` the fields' low
/// bits and `hi` their high bits, value 3 is `lo & hi`, 2 is `hi & !lo`, 1 is `lo & !hi`
/// (a few instructions per 32 entries, where a table lookup per byte takes one load and
/// add per 4 entries: the distribution check of a fetched H48 table is this loop).
fn count_crumbs(bytes: &[u8], h: &mut [u64; BUCKETS]) {
    const LOW: u64 = 0x5555_5555_5555_5555;
    let mut words = bytes.chunks_exact(8);
    let (mut ones, mut twos, mut threes) = (0u64, 0u64, 0u64);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let lo = w & LOW;
        let hi = (w >> 1) & LOW;
        threes += u64::from((lo & hi).count_ones());
        twos += u64::from((hi & !lo).count_ones());
        ones += u64::from((lo & !hi).count_ones());
    }
    let fields = (bytes.len() - words.remainder().len()) as u64 * 4;
    h[0] += fields - ones - twos - threes;
    h[1] += ones;
    h[2] += twos;
    h[3] += threes;
    // The last bytes: a table lookup (16-bit lanes, fewer than 8 bytes).
    let acc: u64 = words
        .remainder()
        .iter()
        .map(|&b| CRUMB_COUNTS[b as usize])
        .sum();
    for (v, slot) in h.iter_mut().take(4).enumerate() {
        *slot += (acc >> (16 * v)) & 0xffff;
    }
}

/// Multi-threaded [`histogram_seq`] over a whole body.
pub(crate) fn histogram(
    bytes: &[u8],
    entries: u64,
    bits: u8,
    shift: u8,
    width: u8,
) -> [u64; BUCKETS] {
    // Chunks of whole bytes that also hold whole entries for every width.
    let per_chunk = (PAR_BYTES as u64 * 8) / u64::from(bits.max(1));
    bytes
        .par_chunks(PAR_BYTES)
        .enumerate()
        .map(|(c, chunk)| {
            let n = entries.saturating_sub(c as u64 * per_chunk).min(per_chunk);
            histogram_seq(chunk, n, bits, shift, width)
        })
        .reduce(|| [0; BUCKETS], add_arrays)
}
