//! Whole-cube rotations as integer matrices, for checking that the six centres of a
//! facelet string are an arrangement a real cube can have.
//!
//! Axes: x towards R, y towards U, z towards F. Face `f`'s outward normal is
//! [`NORMAL`]`[f]` (faces in the order U R F D L B).

/// An integer vector.
pub(super) type Vec3 = [i8; 3];
/// An integer 3×3 matrix.
pub(super) type Mat3 = [[i8; 3]; 3];

/// The outward normal of each face, U R F D L B.
pub(super) const NORMAL: [Vec3; 6] = [
    [0, 1, 0],
    [1, 0, 0],
    [0, 0, 1],
    [0, -1, 0],
    [-1, 0, 0],
    [0, 0, -1],
];

const IDENTITY: Mat3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
/// x: the whole cube turned as R turns (F goes to U).
pub(super) const ROT_X: Mat3 = [[1, 0, 0], [0, 0, 1], [0, -1, 0]];
/// y: the whole cube turned as U turns (F goes to L).
pub(super) const ROT_Y: Mat3 = [[0, 0, -1], [0, 1, 0], [1, 0, 0]];

/// `m · v`.
pub(super) fn apply(m: &Mat3, v: Vec3) -> Vec3 {
    std::array::from_fn(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
}

/// `a · b`.
pub(super) fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    std::array::from_fn(|r| std::array::from_fn(|c| (0..3).map(|k| a[r][k] * b[k][c]).sum()))
}

/// The 24 rotations, generated from x and y.
pub(super) fn rotations() -> Vec<Mat3> {
    let mut all = vec![IDENTITY];
    let mut k = 0;
    while k < all.len() {
        for g in [ROT_X, ROT_Y] {
            let m = mul(&g, &all[k]);
            if !all.contains(&m) {
                all.push(m);
            }
        }
        k += 1;
    }
    all
}
