//! Turns of any kind rewritten as face moves of the cube as held at the end.
//!
//! The cube model has fixed centres, so it knows only face moves. A slice or wide move is
//! two face-layer turns plus a whole-cube rotation, and a rotation turns nothing relative
//! to the centres: it only changes which centre sits on which side. [`face_moves`] keeps
//! that arrangement while it goes along, and writes each turn of a side (`U` means "the
//! layer now on top") as the face move of the centre now on that side: the model's
//! cube, named in the frame the sequence started in.
//!
//! The position is the cube as held after the whole sequence, so a last pass renames each
//! face move by the side its centre ends on (the model's cube conjugated by the net
//! rotation; a rotation is proper, so clockwise stays clockwise). `x2 U` turns the model's
//! `D`, whose centre ends on top: it reads as `U`, solved by `U'`. `U x U` reads as `B U`.
//!
//! The identities used, each a product of turns on one axis (which commute):
//! - `M = R L' x'`, `E = U D' y'`, `S = B F' z`: a slice turns as `L`, `D`, `F` do;
//! - `Rw = L x`, `Lw = R x'`, `Uw = D y`, `Dw = U y'`, `Fw = B z`, `Bw = F z'`;
//! - `x`, `y`, `z` turn the whole cube as `R`, `U`, `F` do.

use crate::moves::{Face, Move};

/// The three whole-cube rotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    /// `x`, as `R` turns.
    X,
    /// `y`, as `U` turns.
    Y,
    /// `z`, as `F` turns.
    Z,
}

/// What a turn turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// One outer layer: `R`.
    Face(Face),
    /// An outer layer and the middle one beside it: `Rw` or `r`.
    Wide(Face),
    /// The middle layer turning as this face does: `M` is `Slice(L)`, `E` is `Slice(D)`,
    /// `S` is `Slice(F)`.
    Slice(Face),
    /// The whole cube.
    Rotation(Axis),
}

/// One turn: a family and a number of clockwise quarter turns, 1 to 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Turn {
    /// What turns.
    pub family: Family,
    /// Clockwise quarter turns, 1..=3.
    pub quarters: u8,
}

impl Turn {
    /// The turn undoing this one.
    pub fn inverse(self) -> Turn {
        Turn {
            quarters: 4 - self.quarters,
            ..self
        }
    }
}

/// Each rotation as the four sides it carries round, each side to the next: `x` takes
/// what is in front to the top.
fn cycle(axis: Axis) -> [Face; 4] {
    match axis {
        Axis::X => [Face::F, Face::U, Face::B, Face::D],
        Axis::Y => [Face::F, Face::L, Face::B, Face::R],
        Axis::Z => [Face::U, Face::R, Face::D, Face::L],
    }
}

/// The rotation turning as `face` does, with its direction: `L` turns as `x'`.
fn rotation_as(face: Face) -> (Axis, bool) {
    match face {
        Face::R => (Axis::X, true),
        Face::L => (Axis::X, false),
        Face::U => (Axis::Y, true),
        Face::D => (Axis::Y, false),
        Face::F => (Axis::Z, true),
        Face::B => (Axis::Z, false),
    }
}

/// Which centre is on each side of the cube as held.
struct Frame {
    /// `centre[side]`: the face (of the cube model) whose centre is on `side` now.
    centre: [Face; 6],
}

impl Frame {
    /// `quarters` clockwise quarter turns of the layer on `side` (0 is none).
    fn turn(&self, side: Face, quarters: u8, out: &mut Vec<Move>) {
        if !quarters.is_multiple_of(4) {
            out.push(Move::new(self.centre[side as usize], quarters % 4));
        }
    }

    /// Renames `moves`, face moves of the model, by the side each model face's centre is
    /// on now: the same turns as this frame holds the cube.
    fn rename_to_held(&self, moves: &mut [Move]) {
        if self.centre == Face::ALL {
            return;
        }
        let mut side = Face::ALL;
        for s in Face::ALL {
            side[self.centre[s as usize] as usize] = s;
        }
        for m in moves {
            *m = Move::new(side[m.face_index()], m.power());
        }
    }

    /// The whole cube turned `quarters` clockwise quarter turns as `face` turns.
    fn rotate(&mut self, face: Face, quarters: u8) {
        let (axis, clockwise) = rotation_as(face);
        let steps = if clockwise { quarters } else { 4 - quarters };
        let sides = cycle(axis);
        for _ in 0..steps % 4 {
            let before = self.centre;
            for k in 0..4 {
                self.centre[sides[(k + 1) % 4] as usize] = before[sides[k] as usize];
            }
        }
    }
}

/// The face moves that make the cube that `turns` make, as it is held at the end.
pub(super) fn face_moves(turns: &[Turn]) -> Vec<Move> {
    let mut frame = Frame { centre: Face::ALL };
    let mut out = Vec::with_capacity(turns.len());
    for t in turns {
        let q = t.quarters % 4;
        match t.family {
            Family::Face(f) => frame.turn(f, q, &mut out),
            Family::Wide(f) => {
                frame.turn(f.opposite(), q, &mut out);
                frame.rotate(f, q);
            }
            Family::Slice(f) => {
                frame.turn(f.opposite(), q, &mut out);
                frame.turn(f, 4 - q, &mut out);
                frame.rotate(f, q);
            }
            Family::Rotation(a) => {
                let face = match a {
                    Axis::X => Face::R,
                    Axis::Y => Face::U,
                    Axis::Z => Face::F,
                };
                frame.rotate(face, q);
            }
        }
    }
    frame.rename_to_held(&mut out);
    out
}
