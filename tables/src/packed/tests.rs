use super::*;
use proptest::prelude::*;

/// A 4-bit table holding `values` (each < 15, or 15 to leave unset).
fn packed4(values: &[u8]) -> Packed4 {
    let t = AtomicPacked4::new(values.len() as u64);
    for (i, &v) in values.iter().enumerate() {
        if v != UNSET {
            assert!(t.set_if_unset(i as u64, v));
        }
    }
    t.into_packed()
}

#[test]
fn new_table_is_unset_and_set_if_unset_wins_once() {
    let t = AtomicPacked4::new(37);
    assert!((0..37).all(|i| t.get(i) == UNSET));
    assert!(t.set_if_unset(5, 3));
    assert!(!t.set_if_unset(5, 4), "second set must lose");
    assert_eq!(t.get(5), 3);
    assert_eq!(t.get(4), UNSET);
    assert_eq!(t.get(6), UNSET);
    assert!(t.set_if_unset(36, 0));
    assert_eq!(t.get(36), 0);
}

#[test]
fn concurrent_set_if_unset_has_one_winner_per_entry() {
    let n = 100_000u64;
    let t = AtomicPacked4::new(n);
    // Eight contenders per entry, all racing over neighbouring nibbles of shared words.
    let wins: u64 = (0..8u8)
        .into_par_iter()
        .map(|v| (0..n).filter(|&i| t.set_if_unset(i, v)).count() as u64)
        .sum();
    assert_eq!(wins, n);
    let d = t.distribution();
    assert_eq!(d.iter().sum::<u64>(), n);
    assert_eq!(d[UNSET as usize], 0);
}

#[test]
fn byte_layout_is_low_nibble_first_and_padding_is_zero() {
    let t = packed4(&[1, 2, 3, 4, 5]);
    assert_eq!(t.as_bytes(), &[0x21, 0x43, 0x05]);
    assert_eq!(
        (0..5).map(|i| t.get(i)).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    let two = t.to_packed2(2);
    // 1,2 -> 0; 3 -> 1; 4 -> 2; 5 -> 3.
    assert_eq!(two.as_bytes(), &[0b10_01_00_00, 0b11]);
    assert_eq!(two.base(), 2);
}

#[test]
fn empty_tables_work() {
    let t = AtomicPacked4::new(0).into_packed();
    assert!(t.is_empty());
    assert_eq!(t.as_bytes().len(), 0);
    assert_eq!(t.distribution(), [0; 16]);
    let two = t.to_packed2(0);
    assert!(two.is_empty());
    assert_eq!(two.distribution(), [0; 4]);
}

#[test]
fn buffers_are_cache_line_aligned() {
    for n in [1u64, 17, 1000, 123_457] {
        let t = AtomicPacked4::new(n).into_packed();
        assert_eq!(t.as_bytes().as_ptr() as usize % 64, 0);
        assert_eq!(t.to_packed2(1).as_bytes().as_ptr() as usize % 64, 0);
    }
}

#[test]
fn prefetch_is_harmless_anywhere() {
    let t = packed4(&[1, 2, 3]);
    for i in [0, 2, 3, 1 << 40, u64::MAX] {
        t.prefetch(i);
        t.to_packed2(0).prefetch(i);
    }
}

#[test]
#[should_panic]
fn out_of_range_get_panics_rather_than_reading_past_the_end() {
    packed4(&[1, 2]).get(2);
}

#[test]
fn histogram_of_32_bit_entries_uses_the_depth_field() {
    let entries: [u32; 4] = [0x0000_0300, 0x0000_0500, 0xffff_0300, 0x0000_ff00];
    let bytes: Vec<u8> = entries.iter().flat_map(|e| e.to_le_bytes()).collect();
    let h = histogram(&bytes, 4, 32, 8, 8);
    assert_eq!(h[3], 2);
    assert_eq!(h[5], 1);
    assert_eq!(h[31], 1, "values above 31 share the last bucket");
    let h8 = histogram(&[0, 7, 7, 200], 4, 8, 0, 8);
    assert_eq!((h8[0], h8[7], h8[31]), (1, 2, 1));
}

proptest! {
    #[test]
    fn packed4_roundtrip_and_distribution(values in proptest::collection::vec(0u8..16, 0..3000)) {
        let t = packed4(&values);
        prop_assert_eq!(t.len(), values.len() as u64);
        for (i, &v) in values.iter().enumerate() {
            prop_assert_eq!(t.get(i as u64), v);
        }
        let mut expect = [0u64; 16];
        values.iter().for_each(|&v| expect[v as usize] += 1);
        prop_assert_eq!(t.distribution(), expect);
    }

    #[test]
    fn packed2_follows_the_nxopt_rule(
        values in proptest::collection::vec(0u8..16, 0..3000),
        base in 0u8..14,
    ) {
        let two = packed4(&values).to_packed2(base);
        prop_assert_eq!(two.len(), values.len() as u64);
        prop_assert_eq!(two.as_bytes().len(), values.len().div_ceil(4));
        let mut expect = [0u64; 4];
        for (i, &v) in values.iter().enumerate() {
            let s = two.get(i as u64);
            prop_assert_eq!(s, v.saturating_sub(base).min(3));
            // The decoded bound never exceeds the true value.
            if s > 0 {
                prop_assert!(base + s <= v);
            }
            expect[s as usize] += 1;
        }
        prop_assert_eq!(two.distribution(), expect);
        // Padding bits are zero.
        if values.len() % 4 != 0 {
            let last = *two.as_bytes().last().unwrap();
            prop_assert_eq!(last >> (2 * (values.len() % 4)), 0);
        }
    }

    #[test]
    fn sequential_and_parallel_histograms_agree(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        bits in prop_oneof![Just(2u8), Just(4), Just(8), Just(32)],
        drop in 0u64..5,
    ) {
        let entries = (bytes.len() as u64 * 8 / u64::from(bits)).saturating_sub(drop);
        let h = histogram(&bytes, entries, bits, 0, bits.min(8));
        prop_assert_eq!(h, histogram_seq(&bytes, entries, bits, 0, bits.min(8)));
        prop_assert_eq!(h.iter().sum::<u64>(), entries);
        // Naive reference.
        let mut naive = [0u64; BUCKETS];
        for i in 0..entries as usize {
            let v = match bits {
                2 => (bytes[i / 4] >> (2 * (i % 4))) & 3,
                4 => (bytes[i / 2] >> (4 * (i % 2))) & 15,
                8 => bytes[i],
                _ => bytes[4 * i],
            };
            naive[(v as usize).min(BUCKETS - 1)] += 1;
        }
        prop_assert_eq!(h, naive);
    }
}
