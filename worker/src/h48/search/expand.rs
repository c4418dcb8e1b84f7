//! A node's expansion: its children generated on the side with fewer allowed moves,
//! solutions recorded, and the table entries of the children's estimates prefetched.

use super::*;

/// Expands a node with `r >= 1` moves left and estimates `hn, hi <= r` into frame `f`:
/// generates its children (recording those that solve the cube), and prefetches the
/// table entries the children's estimates need (their indices go to `burst`, which the
/// caller issues). Returns whether anything is to be prefetched.
///
/// `mf` and `mb` are the moves still allowed as the next front and the next back move:
/// canonical after the last move on that side, and without half turns when an ancestor
/// (since that side last moved) had a tight estimate on the other side. That restriction
/// holds until the side moves: if the inverse needs `r` moves, the first of the remaining
/// front moves cannot be a half turn, whatever back moves come before it (it would be the
/// last move solving the inverse into the target group, which contains the half turns).
/// The side with fewer allowed moves is expanded.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn expand<L: Lookup>(
    p: &Pruner<L>,
    st: &mut Path<'_>,
    f: &mut Frame,
    n: &Cube,
    i: &Cube,
    hn: u8,
    hi: u8,
    r: u8,
    mf: u32,
    mb: u32,
    via: u8,
    burst: &mut Burst,
) -> bool {
    f.next = 0;
    f.via = via;
    f.pn = *n;
    f.pi = *i;
    f.nl = 0;
    f.resolved = false;
    f.shared = [Estimate::Known(0); 6];
    if st.nodes >= st.check_at {
        st.check_at = st.nodes + CHECK_EVERY;
        if let Some(why) = st.stop.check() {
            st.stopped = true;
            st.why = why;
        }
    }
    if st.stopped {
        return false;
    }
    let mf = if hi == r { mf & QUARTER } else { mf };
    let mb = if hn == r { mb & QUARTER } else { mb };
    f.mf = mf;
    f.mb = mb;
    let back = mb.count_ones() < mf.count_ones();
    let mut allowed = if back { mb } else { mf };
    if r == 1 {
        // The move also meets the other half.
        allowed &= if back {
            AFTER[st.last_front()]
        } else {
            PRECEDE[st.first_back()]
        };
    }
    let rr = r - 1;
    f.rr = rr;
    let fetched = match rr {
        0 => leaves(n, allowed, back, st),
        1 => one_move_children(n, allowed, back, st, f),
        _ => estimated_children(p, n, i, hn, hi, allowed, back, st, f, burst),
    };
    f.live = ALL_KIDS;
    fetched
}

/// The children of a node one move from its depth: leaves, each counted, those that solve
/// the cube recorded (front or back, as the node expands). Nothing to prefetch.
#[inline(always)]
fn leaves(n: &Cube, mut allowed: u32, back: bool, st: &mut Path<'_>) -> bool {
    while allowed != 0 {
        let mi = allowed.trailing_zeros() as usize;
        allowed &= allowed - 1;
        st.nodes += 1;
        if !child_normal(n, Move::ALL[mi], back).is_solved() {
            continue;
        }
        let m = Move::ALL[mi];
        if back {
            st.back[st.nb] = m;
            st.nb += 1;
            st.record(None);
            st.nb -= 1;
        } else {
            st.record(Some(m));
        }
        if st.stopped {
            break;
        }
    }
    false
}

/// The children of a node two moves from its depth: one move must solve each, so each is
/// compared with the 18 move cubes instead of reading tables, and those one move from
/// solved are written to `f` with their exact estimates. Nothing to prefetch.
#[inline(always)]
fn one_move_children(
    n: &Cube,
    mut allowed: u32,
    back: bool,
    st: &mut Path<'_>,
    f: &mut Frame,
) -> bool {
    let mut nk = 0;
    while allowed != 0 {
        let mi = allowed.trailing_zeros() as usize;
        allowed &= allowed - 1;
        st.nodes += 1;
        let n2 = child_normal(n, Move::ALL[mi], back);
        if !is_one_move(&n2) {
            continue;
        }
        // A half turn is in the target group (estimate 0), a quarter turn is not
        // (estimate 1): the same values the tables hold.
        let h = if is_half_turn(&n2) { 0 } else { 1 };
        f.children[nk].write(Child {
            m: Move::ALL[mi],
            face: (mi / 3) as u8,
            back,
            quarter: false,
            first: h,
            other: Estimate::Known(h),
        });
        nk += 1;
    }
    f.nl = nk as u8;
    false
}

/// The children of a node further from its depth, by their table estimates: two passes
/// over the faces with allowed moves, so that the corner-table reads of all first lookups
/// overlap (their cubes and corner words, then the corner bounds, the main-table indices
/// and their prefetches, added to `burst`). A face's two quarter turns share their first
/// estimate (see the module docs), on the side they are made on; its half turn reads the
/// other side (the side it is made on keeps the parent's). Only the children those bounds
/// keep are written to `f`, in move order (a face's first quarter turn, its half turn,
/// its second quarter turn). Returns whether anything is to be prefetched.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn estimated_children<L: Lookup>(
    p: &Pruner<L>,
    n: &Cube,
    i: &Cube,
    hn: u8,
    hi: u8,
    allowed: u32,
    back: bool,
    st: &mut Path<'_>,
    f: &mut Frame,
    burst: &mut Burst,
) -> bool {
    let rr = f.rr;
    let mut fetched = false;
    st.nodes += allowed.count_ones() as u64;
    // Per face used: the face, its allowed moves (3 bits), and where its cubes are.
    let mut faces = [(0u8, 0u8); 6];
    let mut nfaces = 0;
    let mut cubes = [Cube::SOLVED; 12];
    let mut words = [0u32; 12];
    let mut nc = 0;
    let mut rest = allowed;
    while rest != 0 {
        let face = rest.trailing_zeros() as usize / 3;
        let bits = (rest >> (3 * face)) & 7;
        rest &= !(7 << (3 * face));
        faces[nfaces] = (face as u8, bits as u8);
        nfaces += 1;
        // A face's two quarter turns are allowed together: the canonical rules take
        // whole faces, and the tight-bound rule only half turns.
        debug_assert!(bits & 5 == 0 || bits & 5 == 5, "face {face}: {bits:03b}");
        if bits & 1 != 0 {
            let m = Move::ALL[3 * face];
            cubes[nc] = if back {
                child_normal(n, m, true)
            } else {
                child_inverse(i, m, false)
            };
            words[nc] = p.corner_word(&cubes[nc]);
            nc += 1;
        }
        if bits & 2 != 0 {
            let m = Move::ALL[3 * face + 1];
            cubes[nc] = if back {
                child_inverse(i, m, true)
            } else {
                child_normal(n, m, false)
            };
            words[nc] = p.corner_word(&cubes[nc]);
            nc += 1;
        }
    }
    let mut nl = 0;
    let mut c = 0;
    for &(face, bits) in &faces[..nfaces] {
        let face = face as usize;
        let mut quarters = false;
        if bits & 1 != 0 {
            let e = Estimate::from_word(p, &cubes[c], words[c], rr, burst);
            c += 1;
            f.shared[face] = e;
            quarters = matches!(e, Estimate::At(_));
            if quarters {
                fetched = true;
                f.children[nl].write(Child::quarter_turn(Move::ALL[3 * face], face, back));
                nl += 1;
            }
        }
        if bits & 2 != 0 {
            let k = c;
            c += 1;
            // A half turn is one move from its face's quarter turns.
            let pruned = matches!(f.shared[face], Estimate::Known(v) if v > rr + 1);
            if !pruned {
                let e = Estimate::from_word(p, &cubes[k], words[k], rr, burst);
                if matches!(e, Estimate::At(_)) {
                    fetched = true;
                    f.children[nl].write(Child {
                        m: Move::ALL[3 * face + 1],
                        face: face as u8,
                        back,
                        quarter: false,
                        first: if back { hn } else { hi },
                        other: e,
                    });
                    nl += 1;
                }
            }
        }
        if quarters {
            f.children[nl].write(Child::quarter_turn(Move::ALL[3 * face + 2], face, back));
            nl += 1;
        }
    }
    f.nl = nl as u8;
    fetched
}
