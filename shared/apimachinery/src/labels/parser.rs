//! Upstream's label-selector lexer and recursive-descent parser, byte for byte: the same
//! tokens, the same lookahead rules (`in`/`notin` are identifiers where values are
//! expected) and the same error texts.

use super::{Error, Operator, Requirement, Result, validate_label_key};
use crate::validation::field::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// Upstream's `string2token`.
fn literal_token(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Upstream's `Lexer`. A NUL byte reads like the end of input, as in upstream.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn new(s: &'a str) -> Lexer<'a> {
        Lexer {
            s: s.as_bytes(),
            pos: 0,
        }
    }

    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let start = self.pos;
        let mut end = self.pos;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            end = self.pos;
        }
        // Splits happen only at ASCII bytes, so the slice is whole UTF-8.
        let buf = &self.s[start..end];
        let lit = String::from_utf8_lossy(buf).into_owned();
        match literal_token(buf) {
            Some(tok) => (tok, lit),
            None => (Token::Identifier, lit),
        }
    }

    /// The longest operator made of special symbols (`!=` over `!`, `==` over `=`).
    fn scan_special_symbol(&mut self) -> (Token, String) {
        let start = self.pos;
        let mut last: Option<(Token, usize)> = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special_symbol(ch) {
                self.unread();
                break;
            }
            if let Some(tok) = literal_token(&self.s[start..self.pos]) {
                last = Some((tok, self.pos));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        match last {
            Some((tok, end)) => (
                tok,
                String::from_utf8_lossy(&self.s[start..end]).into_owned(),
            ),
            None => (
                Token::Error,
                format!(
                    "error expected: keyword found '{}'",
                    String::from_utf8_lossy(&self.s[start..self.pos])
                ),
            ),
        }
    }

    /// Upstream `Lex()`: the next token and its literal.
    fn lex(&mut self) -> (Token, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special_symbol(ch) {
            self.scan_special_symbol()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
    path: Path,
}

/// Upstream's `binaryOperators`, as listed in "expected" messages.
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

fn syntax(msg: String) -> Error {
    Error::Syntax(msg)
}

impl Parser {
    fn new(selector: &str, path: &Path) -> Parser {
        let mut lexer = Lexer::new(selector);
        let mut items = Vec::new();
        loop {
            let (tok, lit) = lexer.lex();
            items.push((tok, lit));
            if tok == Token::EndOfString {
                break;
            }
        }
        Parser {
            items,
            position: 0,
            path: path.clone(),
        }
    }

    fn item(&self, at: usize, ctx: Context) -> (Token, String) {
        // The last item is always EndOfString; reading past it keeps returning it.
        let (tok, lit) = &self.items[at.min(self.items.len() - 1)];
        let tok = match (ctx, tok) {
            (Context::Values, Token::In | Token::NotIn) => Token::Identifier,
            _ => *tok,
        };
        (tok, lit.clone())
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        self.position += 1;
        self.item(self.position - 1, ctx)
    }

    fn parse(&mut self) -> Result<Vec<Requirement>> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| Error::Requirement(Box::new(e)))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(syntax(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(syntax(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(syntax(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return Requirement::validated(&key, op, Vec::new(), false, &self.path);
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::validated(&key, operator, values, false, &self.path)
    }

    /// The key, and `Exists`/`DoesNotExist` when no binary operator follows.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>)> {
        let mut operator = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(syntax(format!("found '{lit}', expected: identifier")));
        }
        if let Some(e) = validate_label_key(&lit, &self.path) {
            return Err(Error::Invalid(vec![e]));
        }
        let (next, _) = self.lookahead(Context::Values);
        if (next == Token::EndOfString || next == Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((lit, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(syntax(format!(
                    "found '{lit}', expected: {BINARY_OPERATORS}"
                )));
            }
        })
    }

    /// `(a,b,...)`, as a sorted set (upstream's `sets.String.List()`).
    fn parse_values(&mut self) -> Result<Vec<String>> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(syntax(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    return Err(syntax(format!("found '{lit}', expected: ')'")));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(syntax(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    /// A possibly empty list of possibly empty identifiers; the `)` is left unread.
    fn parse_identifiers_list(&mut self) -> Result<Vec<String>> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => return Err(syntax(format!("found '{lit2}', expected: ',' or ')'"))),
                    }
                }
                Token::Comma => {
                    // "(," ",)" and ",," each stand for an empty value.
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set.into_iter().collect());
                    }
                    if tok2 == Token::Comma {
                        set.insert(String::new());
                    }
                }
                _ => {
                    return Err(syntax(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )));
                }
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>` or `<`; nothing there means `""`.
    fn parse_exact_value(&mut self) -> Result<Vec<String>> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(syntax(format!("found '{lit}', expected: identifier")))
    }
}

/// Upstream's unexported `parse`: the requirements in input order (the caller sorts).
pub(super) fn parse(selector: &str, path: &Path) -> Result<Vec<Requirement>> {
    Parser::new(selector, path).parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(selector: &str) -> Vec<(Token, String)> {
        Parser::new(selector, &Path::nil()).items
    }

    fn parse_operator(s: &str) -> Result<Operator> {
        Parser::new(s, &Path::nil()).parse_operator()
    }

    #[test]
    fn lexer_single_tokens() {
        let cases = [
            ("", Token::EndOfString),
            (",", Token::Comma),
            ("notin", Token::NotIn),
            ("in", Token::In),
            ("=", Token::Equals),
            ("==", Token::DoubleEquals),
            (">", Token::GreaterThan),
            ("<", Token::LessThan),
            ("!", Token::DoesNotExist),
            ("!=", Token::NotEquals),
            ("(", Token::OpenPar),
            (")", Token::ClosedPar),
            ("~", Token::Identifier),
            ("||", Token::Identifier),
        ];
        for (s, want) in cases {
            let mut l = Lexer::new(s);
            let (tok, lit) = l.lex();
            assert_eq!(tok, want, "{s}");
            assert_eq!(lit, s, "{s}");
        }
    }

    #[test]
    fn lexer_sequences() {
        use Token::*;
        let cases: Vec<(&str, Vec<Token>)> = vec![
            (
                "key in ( value )",
                vec![Identifier, In, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key notin ( value )",
                vec![Identifier, NotIn, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key in ( value1, value2 )",
                vec![
                    Identifier, In, OpenPar, Identifier, Comma, Identifier, ClosedPar,
                ],
            ),
            ("key", vec![Identifier]),
            ("!key", vec![DoesNotExist, Identifier]),
            ("()", vec![OpenPar, ClosedPar]),
            (
                "x in (),y",
                vec![Identifier, In, OpenPar, ClosedPar, Comma, Identifier],
            ),
            (
                "== != (), = notin",
                vec![
                    DoubleEquals,
                    NotEquals,
                    OpenPar,
                    ClosedPar,
                    Comma,
                    Equals,
                    NotIn,
                ],
            ),
            ("key>2", vec![Identifier, GreaterThan, Identifier]),
            ("key<1", vec![Identifier, LessThan, Identifier]),
            ("===", vec![DoubleEquals, Equals]),
            ("!!=", vec![DoesNotExist, NotEquals]),
        ];
        for (s, want) in cases {
            let mut want = want;
            want.push(EndOfString);
            let got: Vec<Token> = tokens(s).into_iter().map(|(t, _)| t).collect();
            assert_eq!(got, want, "{s}");
        }
    }

    #[test]
    fn parse_operator_errors() {
        for s in ["in", "=", "==", ">", "<", "notin", "!="] {
            assert!(parse_operator(s).is_ok(), "{s}");
        }
        for (s, found) in [("!", "!"), ("exists", "exists"), ("(", "(")] {
            assert_eq!(
                parse_operator(s).unwrap_err().to_string(),
                format!("found '{found}', expected: in, notin, =, ==, !=, gt, lt")
            );
        }
    }
}
