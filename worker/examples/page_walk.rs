//! Probe: what one random access to a large table costs this machine when it is
//! prefetched far ahead, i.e. what is left once memory latency is hidden (an experiment
//! tool; see docs/performance.md, "what a lookup costs on this machine").
//!
//! `cargo run --release -p cubeswarm-worker --features examples --example page_walk -- [--small-pages] [--burst N] [--chase] [MB ...]`
//! (default 8 32 256 1024; `--small-pages`: the array advised `MADV_NOHUGEPAGE` instead)
//!
//! For each size, an array in (transparent) huge pages is read at 4M positions, each
//! prefetched 64 iterations before it is read, with a fixed amount of independent
//! arithmetic between reads (about 45 ns here). Three patterns:
//! - `in-page`: random lines within one 4 KiB page (cache hits: the arithmetic alone);
//! - `random`: random lines over the whole array (what the search's table lookups do);
//! - `8/page`: 8 random lines in one random 4 KiB page, then the next page: as many cache
//!   misses as `random`, one eighth of the distinct pages.
//!
//! The cost per access is the time beyond `in-page`. If `8/page` costs far less than
//! `random`, the cost is per page (address translation), not per line (memory latency
//! or bandwidth).
//!
//! `--burst N`: the prefetches are issued N at a time, back to back, every N accesses,
//! instead of one per access (each still well ahead of its read). Where a prefetch that
//! misses the TLB holds up the core until its page walk is done (so the arithmetic after
//! it waits too), N walks then overlap and the cost per access falls; where prefetches
//! cost nothing but their line, N changes nothing.
//!
//! `--chase`: instead, the latency of a random line and how many misses one thread keeps
//! in flight. The array's lines are linked into one random cycle, and 1, 2, 4, … 32
//! independent pointer chases walk it at once; each read's address is the previous
//! read's value, so nothing can be prefetched. One chase gives the latency; the time per
//! read stops falling once the core's outstanding misses are all in use, and that floor
//! is what a random table lookup costs at best however well it is prefetched.

#[cfg(target_arch = "x86_64")]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let small = args.iter().any(|a| a == "--small-pages");
    let chase = args.iter().any(|a| a == "--chase");
    let burst: usize = args.iter().position(|a| a == "--burst").map_or(1, |i| {
        args.get(i + 1)
            .and_then(|n| n.parse().ok())
            .expect("--burst N")
    });
    let sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|&(i, a)| !a.starts_with("--") && (i == 0 || args[i - 1] != "--burst"))
        .map(|(_, a)| a)
        .map(|s| s.parse().expect("sizes in MB"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![8, 32, 256, 1024]
    } else {
        sizes
    };
    if chase {
        println!("size      ns per read with 1, 2, 4, 8, 16, 32 chases at once");
        for mb in sizes {
            chases(mb << 20);
        }
        return;
    }
    println!("size      in-page   random   8/page   (ns per access; AnonHugePages of the process)");
    for mb in sizes {
        let bytes = mb << 20;
        let huge;
        let plain;
        let table: &[u8] = if small {
            plain = small_pages(bytes);
            &plain
        } else {
            huge = tables::huge::HugeArray::from_slice(&vec![1u8; bytes]);
            &huge
        };
        let mut out = Vec::new();
        for pattern in 0..3 {
            let positions = positions(bytes, pattern);
            // Two runs, the faster kept (the first also warms the TLB and caches).
            let t = (0..2)
                .map(|_| run(table, &positions, burst.max(1)))
                .fold(f64::MAX, f64::min);
            out.push(t);
        }
        println!(
            "{:>5} MB  {:>7.1}  {:>7.1}  {:>7.1}   +{:.1} random, +{:.1} 8/page; {}",
            mb,
            out[0],
            out[1],
            out[2],
            out[1] - out[0],
            out[2] - out[0],
            anon_huge()
        );
    }
}

/// A page-aligned array of `bytes` ones, advised not to use huge pages (before it is
/// touched).
#[cfg(target_arch = "x86_64")]
fn small_pages(bytes: usize) -> Vec<u8> {
    let mut v: Vec<u8> = Vec::with_capacity(bytes + 4096);
    let start = v.as_ptr() as usize;
    let aligned = start.next_multiple_of(4096);
    #[cfg(target_os = "linux")]
    // SAFETY: the range lies inside `v`'s allocation (capacity `bytes + 4096`, `aligned -
    // start < 4096`); madvise only changes how the kernel backs it.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_NOHUGEPAGE);
    }
    let _ = aligned;
    v.resize(bytes, 1);
    v
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    eprintln!("page_walk: x86_64 only");
}

const N: usize = 1 << 22;
const AHEAD: usize = 64;

/// A xorshift64 generator: the same sequence on every run for a given seed.
fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Byte offsets of the accesses (64-byte lines).
fn positions(bytes: usize, pattern: u32) -> Vec<usize> {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let lines = (bytes / 64) as u64;
    let mut out = Vec::with_capacity(N);
    for i in 0..N {
        let r = (next() % lines) as usize * 64;
        out.push(match pattern {
            0 => r & 4095,
            1 => r,
            _ if i % 8 == 0 => r,
            _ => (out[i - 1] & !4095) | ((next() % 64) as usize * 64),
        });
    }
    out
}

/// Nanoseconds per access.
#[cfg(target_arch = "x86_64")]
fn run(table: &[u8], at: &[usize], burst: usize) -> f64 {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let (mut a, mut b, mut c, mut d) = (1u64, 2u64, 3u64, 4u64);
    let (mut e, mut f, mut g, mut h) = (5u64, 6u64, 7u64, 8u64);
    let mut acc = 0u64;
    let start = std::time::Instant::now();
    for i in 0..at.len() {
        if i % burst == 0 {
            for k in 0..burst {
                let ahead = at[(i + AHEAD + k) % at.len()];
                // SAFETY: `ahead < table.len()`: a prefetch of an address inside the slice
                // (a prefetch never faults anyway).
                unsafe { _mm_prefetch::<_MM_HINT_T0>(table.as_ptr().add(ahead).cast()) };
            }
        }
        for w in 0..40u64 {
            a = a.wrapping_add(w);
            b ^= a;
            c = c.wrapping_add(b);
            d ^= c;
            e = e.wrapping_add(w ^ 3);
            f ^= e;
            g = g.wrapping_add(f);
            h ^= g;
            // Keeps the arithmetic as written (eight short dependency chains).
            (a, b, c, d, e, f, g, h) = std::hint::black_box((a, b, c, d, e, f, g, h));
        }
        acc += table[at[i]] as u64;
    }
    let t = start.elapsed().as_secs_f64();
    std::hint::black_box(acc ^ a ^ b ^ c ^ d ^ e ^ f ^ g ^ h);
    t / at.len() as f64 * 1e9
}

/// Links the lines of a `bytes`-long array (in huge pages) into one random cycle and
/// prints the time per read of 1 to 32 simultaneous chases along it.
#[cfg(target_arch = "x86_64")]
fn chases(bytes: usize) {
    let lines = bytes / 64;
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    // Sattolo's shuffle: a single cycle through every line.
    let mut order: Vec<u32> = (0..lines as u32).collect();
    for i in (1..lines).rev() {
        let j = (next() % i as u64) as usize;
        order.swap(i, j);
    }
    let mut raw = vec![0u8; bytes];
    for i in 0..lines {
        let at = order[i] as usize * 64;
        let to = order[(i + 1) % lines] as u64 * 64;
        raw[at..at + 8].copy_from_slice(&to.to_le_bytes());
    }
    let table = tables::huge::HugeArray::from_slice(&raw);
    drop(raw);
    let read = |at: u64| {
        let at = at as usize;
        u64::from_le_bytes(table[at..at + 8].try_into().expect("8 bytes"))
    };
    let steps = 2_000_000usize;
    let mut line = format!("{:>5} MB ", bytes >> 20);
    for k in [1usize, 2, 4, 8, 16, 32] {
        let mut at: Vec<u64> = (0..k).map(|j| order[lines / k * j] as u64 * 64).collect();
        let start = std::time::Instant::now();
        for _ in 0..steps / k {
            for a in at.iter_mut() {
                *a = read(*a);
            }
        }
        let t = start.elapsed().as_secs_f64();
        std::hint::black_box(&at);
        line.push_str(&format!(" {:>7.1}", t / (steps / k * k) as f64 * 1e9));
    }
    println!("{line}");
}

fn anon_huge() -> String {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages"))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "unknown".to_string())
}
