//! A scramble cut into tokens.
//!
//! Whitespace (newlines included) separates tokens and is not one; `//` starts a comment
//! that runs to the end of the line. The brackets `( ) [ ]` and the separators `,` `:` are
//! tokens of their own, with or without whitespace around them; a closing bracket carries
//! the amount written right after it (`)2'`). Everything else up to the next whitespace,
//! bracket, separator or comment is one word, a move to be read by the parser. Each token
//! knows whether it touches the one before it, so the parser can refuse a move glued to a
//! closing bracket (`(R U)3x`) as it refuses one glued to a move (`R2U`).

use super::NotationError;

/// The two kinds of bracket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `( )`: a group.
    Paren,
    /// `[ ]`: a commutator or conjugate.
    Square,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A run of other characters: a move, if it reads as one.
    Word,
    /// `(` or `[`.
    Open(Shape),
    /// `)` or `]`, with the amount that follows it in the token's text.
    Close(Shape),
    /// `,`: a commutator's separator.
    Comma,
    /// `:`: a conjugate's separator.
    Colon,
}

/// One token and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token<'a> {
    /// What it is.
    pub kind: Kind,
    /// Its text as written (for a closing bracket, the bracket and its amount).
    pub text: &'a str,
    /// 1-based token number, for messages.
    pub index: usize,
    /// 0-based character offset in the input, for messages.
    pub offset: usize,
    /// Whether it follows the token before it with nothing between (no whitespace, no
    /// comment): `(R U)3x` is a `)3` and a glued `x`.
    pub glued: bool,
}

impl Token<'_> {
    /// The error that blames this token.
    pub fn error(&self, reason: &'static str) -> NotationError {
        NotationError {
            token: self.text.to_string(),
            index: self.index,
            offset: self.offset,
            reason,
        }
    }
}

/// Characters of an amount: digits and the prime (ASCII or typographic).
pub(super) fn is_amount_char(c: char) -> bool {
    c.is_ascii_digit() || c == '\'' || c == '’'
}

fn punctuation(c: char) -> Option<Kind> {
    Some(match c {
        '(' => Kind::Open(Shape::Paren),
        '[' => Kind::Open(Shape::Square),
        ')' => Kind::Close(Shape::Paren),
        ']' => Kind::Close(Shape::Square),
        ',' => Kind::Comma,
        ':' => Kind::Colon,
        _ => return None,
    })
}

/// The tokens of a text, cut one at a time (a scramble may be millions of moves long).
pub(super) struct Tokens<'a> {
    text: &'a str,
    /// (character offset, (byte offset, character)) of what is left.
    chars: std::iter::Peekable<std::iter::Enumerate<std::str::CharIndices<'a>>>,
    /// Tokens cut so far.
    count: usize,
    /// Byte offset just past the last token cut (0 before the first).
    end: usize,
}

/// Cuts `s` into tokens. Never fails: what a token means is the parser's question.
pub(super) fn tokenize(s: &str) -> Tokens<'_> {
    Tokens {
        text: s,
        chars: s.char_indices().enumerate().peekable(),
        count: 0,
        end: 0,
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let s = self.text;
        let (offset, start, c) = loop {
            let &(offset, (start, c)) = self.chars.peek()?;
            if c.is_whitespace() {
                self.chars.next();
            } else if s[start..].starts_with("//") {
                while self.chars.next_if(|&(_, (_, c))| c != '\n').is_some() {}
            } else {
                self.chars.next();
                break (offset, start, c);
            }
        };
        let mut end = start + c.len_utf8();
        let kind = punctuation(c).unwrap_or(Kind::Word);
        let continues = |b: usize, c: char| match kind {
            Kind::Close(_) => is_amount_char(c),
            Kind::Word => {
                !c.is_whitespace() && punctuation(c).is_none() && !s[b..].starts_with("//")
            }
            _ => false,
        };
        while let Some((_, (b, c))) = self.chars.next_if(|&(_, (b, c))| continues(b, c)) {
            end = b + c.len_utf8();
        }
        let glued = self.count > 0 && start == self.end;
        self.count += 1;
        self.end = end;
        Some(Token {
            kind,
            text: &s[start..end],
            index: self.count,
            offset,
            glued,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<&str> {
        tokenize(s).map(|t| t.text).collect()
    }

    #[test]
    fn brackets_and_separators_are_tokens_of_their_own() {
        assert_eq!(
            texts("[R,U' : (r2 U)3'] //x ( ]\nM"),
            ["[", "R", ",", "U'", ":", "(", "r2", "U", ")3'", "]", "M"]
        );
        assert_eq!(texts("R//c\nU"), ["R", "U"]);
        assert_eq!(texts("R U // only a comment"), ["R", "U"]);
        assert!(texts(" \t\n ").is_empty());
    }

    #[test]
    fn tokens_know_their_number_and_character_offset() {
        let t: Vec<Token> = tokenize("é R  [U").collect();
        assert_eq!(t.len(), 4);
        assert_eq!((t[1].text, t[1].index, t[1].offset), ("R", 2, 2));
        assert_eq!(
            (t[2].kind, t[2].index, t[2].offset),
            (Kind::Open(Shape::Square), 3, 5)
        );
        assert_eq!(t[3].offset, 6);
    }

    #[test]
    fn tokens_know_whether_they_touch_the_one_before() {
        let glued: Vec<(&str, bool)> = tokenize("(R U)3x [R,U]F R//c\nU")
            .map(|t| (t.text, t.glued))
            .collect();
        assert_eq!(
            glued,
            [
                ("(", false),
                ("R", true),
                ("U", false),
                (")3", true),
                ("x", true),
                ("[", false),
                ("R", true),
                (",", true),
                ("U", true),
                ("]", true),
                ("F", true),
                ("R", false),
                ("U", false),
            ]
        );
    }
}
