//! Tokens read into one flat list of turns, groups and brackets expanded.
//!
//! Grammar (whitespace already gone):
//! ```text
//! sequence := item*
//! item     := WORD | "(" sequence ")" amount | "[" sequence ("," | ":") sequence "]"
//! amount   := "" | digits | "'" | digits "'"    (and "'" digits, read as digits "'")
//! ```
//! A word is a move: a family (`R`, `Rw`, `r`, `M`, `x`, ...) and an amount, or `.`, a
//! pause that does nothing. Inverting a group inverts its turns (reversed, each undone)
//! before anything is rewritten as face moves, so a rotation inside an inverse is undone
//! where it belongs.

use super::frame::{Axis, Family, Turn};
use super::lexer::{is_amount_char, Kind, Shape, Token, Tokens};
use super::NotationError;
use crate::moves::Face;

/// Brackets nested deeper than this are refused (the parser recurses once per level).
pub(super) const MAX_DEPTH: usize = 64;
/// At most this many turns may be added by brackets (repetitions, the inverses in
/// commutators and conjugates), so that `(R)99999999` is refused rather than written out.
/// Turns written out in the text count nothing (the text's length is bounded by
/// [`crate::MAX_TEXT_BYTES`] where a position is read).
pub(super) const MAX_ADDED: usize = 1_000_000;

const TOO_LONG: &str = "brackets add more than 1000000 turns to the scramble";
const GLUED: &str = "moves are separated by spaces: (R U)3 x, not (R U)3x";
const AMOUNT: &str = "an amount is nothing, a number, ' (prime), or a number then '";

/// Reads the whole text.
pub(super) fn parse(tokens: Tokens<'_>) -> Result<Vec<Turn>, NotationError> {
    let mut p = Parser {
        tokens: tokens.peekable(),
        added: 0,
    };
    let turns = p.sequence(0)?;
    match p.tokens.next() {
        None => Ok(turns),
        Some(t) => Err(t.error(match t.kind {
            Kind::Close(Shape::Paren) => "this ) closes no (",
            Kind::Close(Shape::Square) => "this ] closes no [",
            _ => "a comma or colon belongs inside [ ]: [A, B] or [A: B]",
        })),
    }
}

struct Parser<'a> {
    tokens: std::iter::Peekable<Tokens<'a>>,
    /// Turns added by brackets so far (see [`MAX_ADDED`]).
    added: usize,
}

impl<'a> Parser<'a> {
    /// Items up to (not including) the next closing bracket, separator or the end.
    fn sequence(&mut self, depth: usize) -> Result<Vec<Turn>, NotationError> {
        let mut out = Vec::new();
        // Whether the item before ended with a closing bracket.
        let mut closed = false;
        while let Some(&t) = self.tokens.peek() {
            match t.kind {
                Kind::Close(_) | Kind::Comma | Kind::Colon => break,
                Kind::Open(_) if depth >= MAX_DEPTH => {
                    return Err(t.error("brackets nested more than 64 deep"))
                }
                Kind::Word if closed && t.glued => return Err(t.error(GLUED)),
                _ => {}
            }
            self.tokens.next();
            closed = t.kind != Kind::Word;
            match t.kind {
                Kind::Open(Shape::Paren) => out.extend(self.group(&t, depth + 1)?),
                Kind::Open(Shape::Square) => out.extend(self.bracket(&t, depth + 1)?),
                _ => out.extend(word(&t)?),
            }
        }
        Ok(out)
    }

    /// Counts `n` turns added by the bracket ending at `close`.
    fn add(&mut self, n: usize, close: &Token<'_>) -> Result<(), NotationError> {
        self.added = self.added.saturating_add(n);
        if self.added > MAX_ADDED {
            return Err(close.error(TOO_LONG));
        }
        Ok(())
    }

    /// After `(`: the group, its `)` and amount.
    fn group(&mut self, open: &Token<'a>, depth: usize) -> Result<Vec<Turn>, NotationError> {
        let body = self.sequence(depth)?;
        let close = self.take(open, "this ( is never closed")?;
        match close.kind {
            Kind::Close(Shape::Paren) => {}
            Kind::Close(Shape::Square) => return Err(close.error("this ] closes a (, not a [")),
            _ => return Err(close.error("a comma or colon belongs directly inside [ ], not ( )")),
        }
        let amount = amount(&close.text[1..]).ok_or_else(|| close.error(AMOUNT))?;
        if body.is_empty() {
            // Nothing repeated any number of times is nothing, however large the number.
            return Ok(body);
        }
        let count = usize::try_from(amount.count).unwrap_or(usize::MAX);
        self.add(body.len().saturating_mul(count.saturating_sub(1)), &close)?;
        let once: Vec<Turn> = if amount.inverse {
            undo(&body).collect()
        } else {
            body
        };
        Ok(once.repeat(count))
    }

    /// After `[`: `A, B]` (the commutator `A B A' B'`) or `A: B]` (the conjugate `A B A'`).
    fn bracket(&mut self, open: &Token<'a>, depth: usize) -> Result<Vec<Turn>, NotationError> {
        let a = self.sequence(depth)?;
        let sep = self.take(open, "this [ is never closed")?;
        let commutator = match sep.kind {
            Kind::Comma => true,
            Kind::Colon => false,
            Kind::Close(Shape::Square) => {
                return Err(sep.error("[A, B] or [A: B] needs a comma or colon before the ]"))
            }
            _ => return Err(sep.error("this ) closes a [, not a (")),
        };
        let b = self.sequence(depth)?;
        let close = self.take(open, "this [ is never closed")?;
        match close.kind {
            Kind::Close(Shape::Square) if close.text.len() > 1 => {
                return Err(close.error(
                    "a commutator or conjugate takes no amount; put it in a group: ([A, B])2",
                ))
            }
            Kind::Close(Shape::Square) => {}
            Kind::Close(Shape::Paren) => return Err(close.error("this ) closes a [, not a (")),
            _ => return Err(close.error("[A, B] or [A: B] holds one comma or colon")),
        }
        let inverses = a.len() + if commutator { b.len() } else { 0 };
        self.add(inverses, &close)?;
        let mut out = Vec::with_capacity(a.len() + b.len() + inverses);
        out.extend_from_slice(&a);
        out.extend_from_slice(&b);
        out.extend(undo(&a));
        if commutator {
            out.extend(undo(&b));
        }
        Ok(out)
    }

    /// The next token, or the error blaming `open` when the input ended.
    fn take(
        &mut self,
        open: &Token<'a>,
        unclosed: &'static str,
    ) -> Result<Token<'a>, NotationError> {
        self.tokens.next().ok_or_else(|| open.error(unclosed))
    }
}

/// The turns undoing `turns`: reversed, each inverted.
fn undo(turns: &[Turn]) -> impl Iterator<Item = Turn> + '_ {
    turns.iter().rev().map(|t| t.inverse())
}

/// An amount as written: how many times, and whether inverted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Amount {
    /// The number written (1 when none is), saturating at `u64::MAX`: what a group's
    /// repetition adds is checked against [`MAX_ADDED`], which a saturated count exceeds
    /// on any body that is not empty.
    count: u64,
    /// The number written, mod 4, exact however long the number is (a quarter turn has
    /// order 4, so this is all a move needs of it).
    residue: u8,
    /// Whether a prime was written: the inverse, repeated.
    inverse: bool,
}

/// An amount's text read: `""` is once, `2'` twice inverted. `'2` is read as `2'`, as the
/// face-move reader always has; `’` is a prime too.
fn amount(text: &str) -> Option<Amount> {
    let (digits, inverse) = match text.strip_suffix(['\'', '’']) {
        Some(d) => (d, true),
        None => match text.strip_prefix(['\'', '’']) {
            Some(d) => (d, true),
            None => (text, false),
        },
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.is_empty() {
        return Some(Amount {
            count: 1,
            residue: 1,
            inverse,
        });
    }
    let count = digits.bytes().fold(0u64, |n, b| {
        n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    });
    // 100 is a multiple of 4, so a number is its last two digits mod 4.
    let last_two = &digits.as_bytes()[digits.len().saturating_sub(2)..];
    let residue = last_two.iter().fold(0u8, |n, b| (n * 10 + (b - b'0')) % 4);
    Some(Amount {
        count,
        residue,
        inverse,
    })
}

/// A word read as a turn; `None` for `.` and for amounts that come to no turn (`R4`).
fn word(t: &Token<'_>) -> Result<Option<Turn>, NotationError> {
    let text = t.text;
    if text == "." {
        return Ok(None);
    }
    let split = text
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(split);
    if name.is_empty() {
        return Err(t.error(if text.starts_with(|c: char| c.is_ascii_digit())
            && text.contains(|c: char| c.is_ascii_alphabetic())
        {
            "layer numbers (2R, 3Rw, 2-3Rw) are for bigger cubes; on the 3x3x3 use M E S or wide moves"
        } else if text.starts_with(is_amount_char) {
            "an amount belongs right after its move or ), with no space"
        } else {
            "unknown character: a move starts with a letter"
        }));
    }
    let family = family(name).ok_or_else(|| {
        t.error(match name {
            "X" | "Y" | "Z" => "rotations are lower-case: x y z",
            "m" | "e" | "s" => "slices are upper-case: M E S",
            _ => "unknown move: faces U R F D L B, wide Rw or r, slices M E S, rotations x y z, separated by spaces",
        })
    })?;
    if rest.contains(|c: char| c.is_ascii_alphabetic()) {
        return Err(t.error("moves are separated by spaces: R2 U, not R2U"));
    }
    let amount = amount(rest).ok_or_else(|| t.error(AMOUNT))?;
    let quarters = amount.residue;
    let quarters = if amount.inverse {
        (4 - quarters) % 4
    } else {
        quarters
    };
    Ok((quarters != 0).then_some(Turn { family, quarters }))
}

/// The family a move's letters name.
fn family(name: &str) -> Option<Family> {
    let face = |c: char| Face::ALL.into_iter().find(|f| f.letter() == c);
    let mut chars = name.chars();
    let first = chars.next()?;
    Some(match (first, chars.as_str()) {
        ('M', "") => Family::Slice(Face::L),
        ('E', "") => Family::Slice(Face::D),
        ('S', "") => Family::Slice(Face::F),
        ('x', "") => Family::Rotation(Axis::X),
        ('y', "") => Family::Rotation(Axis::Y),
        ('z', "") => Family::Rotation(Axis::Z),
        (c, "") if c.is_ascii_uppercase() => Family::Face(face(c)?),
        (c, "") => Family::Wide(face(c.to_ascii_uppercase())?),
        (c, "w") if c.is_ascii_uppercase() => Family::Wide(face(c)?),
        _ => return None,
    })
}
