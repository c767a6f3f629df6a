//! A JSON reader that keeps where every value starts, so that the readers of JSON formats
//! (WfCommons workflow instances) can name the line and column of a wrong value, not only
//! of a syntax error. RFC 8259: one value, with optional whitespace around it; strings
//! with every escape (surrogate pairs joined, lone surrogates refused); numbers kept as
//! their text, checked against the grammar. Nesting is limited to [`MAX_DEPTH`] levels,
//! so a hostile file cannot overflow the stack.

use std::borrow::Cow;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 256;

/// A JSON value and the byte offset where it starts in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<'a> {
    pub at: usize,
    pub value: Value<'a>,
}

/// A JSON value. Numbers keep their text; object members keep their order (and any
/// duplicate key: [`Node::get`] returns the first).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// The member `key` of an object (the first, if repeated); `None` for a missing key or
    /// a value that is not an object.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        match &self.value {
            Value::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Node<'a>]> {
        match &self.value {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    /// The number as a double, if this is a number (its text is valid JSON, so only an
    /// overflow gives infinity).
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Number(t) => t.parse().ok(),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// A syntax error: the byte offset and what is wrong.
pub type SyntaxError = (usize, String);

/// Parses `text` as one JSON value.
pub fn parse(text: &str) -> Result<Node<'_>, SyntaxError> {
    let mut p = Parser {
        s: text,
        b: text.as_bytes(),
        i: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i < p.b.len() {
        return Err((p.i, "text after the JSON value".into()));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn found(&self) -> String {
        match self.s[self.i..].chars().next() {
            None => "the end of the file (truncated?)".into(),
            Some(c) => format!("{c:?}"),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node<'a>, SyntaxError> {
        let at = self.i;
        let value = match self.b.get(self.i) {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.word("true", Value::Bool(true))?,
            Some(b'f') => self.word("false", Value::Bool(false))?,
            Some(b'n') => self.word("null", Value::Null)?,
            _ => return Err((at, format!("expected a JSON value, found {}", self.found()))),
        };
        Ok(Node { at, value })
    }

    fn word(&mut self, w: &str, v: Value<'a>) -> Result<Value<'a>, SyntaxError> {
        if self.b[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err((
                self.i,
                format!("expected a JSON value, found {}", self.found()),
            ))
        }
    }

    fn deeper(&self, depth: usize) -> Result<usize, SyntaxError> {
        if depth >= MAX_DEPTH {
            return Err((
                self.i,
                format!("arrays and objects nested more than {MAX_DEPTH} deep"),
            ));
        }
        Ok(depth + 1)
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, SyntaxError> {
        let depth = self.deeper(depth)?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => {
                    return Err((
                        self.i,
                        format!("expected ',' or ']' in an array, found {}", self.found()),
                    ))
                }
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, SyntaxError> {
        let depth = self.deeper(depth)?;
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return Err((
                    self.i,
                    format!("expected a member name (a string), found {}", self.found()),
                ));
            }
            let key = self.string()?;
            self.ws();
            if self.b.get(self.i) != Some(&b':') {
                return Err((
                    self.i,
                    format!("expected ':' after a member name, found {}", self.found()),
                ));
            }
            self.i += 1;
            self.ws();
            members.push((key, self.value(depth)?));
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(members));
                }
                _ => {
                    return Err((
                        self.i,
                        format!("expected ',' or '}}' in an object, found {}", self.found()),
                    ))
                }
            }
        }
    }

    fn number(&mut self) -> Result<Value<'a>, SyntaxError> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.b.get(p.i).is_some_and(u8::is_ascii_digit) {
                p.i += 1;
            }
            p.i - from
        };
        let bad = |p: &Self| Err((start, format!("a malformed number {:?}", &p.s[start..p.i])));
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let int_start = self.i;
        let n = digits(self);
        if n == 0 || (n > 1 && self.b[int_start] == b'0') {
            return bad(self);
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if digits(self) == 0 {
                return bad(self);
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return bad(self);
            }
        }
        Ok(Value::Number(&self.s[start..self.i]))
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let at = self.i;
        let h = self
            .b
            .get(self.i..self.i + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .filter(|_| self.b[self.i..self.i + 4].iter().all(u8::is_ascii_hexdigit))
            .ok_or((
                at,
                "\\u must be followed by four hexadecimal digits".to_string(),
            ))?;
        self.i += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<Cow<'a, str>, SyntaxError> {
        let open = self.i;
        self.i += 1;
        let start = self.i;
        // The common case: no escape, borrowed.
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(Cow::Borrowed(&self.s[start..self.i - 1]));
                }
                b'\\' => break,
                0..=0x1f => {
                    return Err((self.i, "a control character inside a string".into()));
                }
                _ => self.i += 1,
            }
        }
        let mut out = String::from(&self.s[start..self.i]);
        loop {
            let Some(&c) = self.b.get(self.i) else {
                return Err((open, "a string that never ends (truncated?)".into()));
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                b'\\' => {
                    let at = self.i;
                    self.i += 1;
                    let e = self.b.get(self.i).copied();
                    self.i += 1;
                    match e {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if !self.b[self.i..].starts_with(b"\\u") {
                                    return Err((at, "a lone high surrogate in \\u".into()));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err((at, "a lone high surrogate in \\u".into()));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            out.push(
                                char::from_u32(code).ok_or_else(|| {
                                    (at, "a lone low surrogate in \\u".to_string())
                                })?,
                            );
                        }
                        _ => return Err((at, "an unknown escape in a string".into())),
                    }
                }
                0..=0x1f => {
                    return Err((self.i, "a control character inside a string".into()));
                }
                _ => {
                    // Copy up to the next quote or backslash (UTF-8 continuation bytes
                    // never equal either).
                    let from = self.i;
                    while self
                        .b
                        .get(self.i)
                        .is_some_and(|&c| c != b'"' && c != b'\\' && c > 0x1f)
                    {
                        self.i += 1;
                    }
                    out.push_str(&self.s[from..self.i]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_places() {
        let t = "{\"a\": [1, -2.5e3, true, null],\n \"b\": \"x\\u00e9\\ud83d\\ude00\\n\"}";
        let v = parse(t).unwrap();
        let a = v.get("a").unwrap();
        assert_eq!(a.at, 6);
        let items = a.as_array().unwrap();
        assert_eq!(items[1].as_f64(), Some(-2500.0));
        assert_eq!(items[2].value, Value::Bool(true));
        assert_eq!(items[3].value, Value::Null);
        let b = v.get("b").unwrap();
        assert_eq!(b.as_str(), Some("x\u{e9}\u{1f600}\n"));
        assert_eq!(&t[b.at..b.at + 1], "\"");
        assert!(v.get("c").is_none());
    }

    #[test]
    fn syntax_errors_have_places() {
        for (t, at) in [
            ("", 0),
            ("{\"a\" 1}", 5),
            ("[1, 2", 5),
            ("[01]", 1),
            ("[1.]", 1),
            ("[1e]", 1),
            ("[-]", 1),
            ("\"abc", 0),
            ("\"a\\x\"", 2),
            ("\"\\ud800\"", 1),
            ("\"\\udc00\"", 1),
            ("\"\\u12g4\"", 3),
            ("\"a\tb\"", 2),
            ("[1] 2", 4),
            ("tru", 0),
            ("{1: 2}", 1),
        ] {
            let e = parse(t).expect_err(t);
            assert_eq!(e.0, at, "{t}: {}", e.1);
        }
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().1.contains("nested"));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }

    /// Agrees with serde_json on the values of random documents.
    #[test]
    fn agrees_with_serde_json() {
        fn same(a: &Node, b: &serde_json::Value) -> bool {
            match (&a.value, b) {
                (Value::Null, serde_json::Value::Null) => true,
                (Value::Bool(x), serde_json::Value::Bool(y)) => x == y,
                (Value::Number(_), serde_json::Value::Number(y)) => a.as_f64() == y.as_f64(),
                (Value::String(x), serde_json::Value::String(y)) => x == y,
                (Value::Array(x), serde_json::Value::Array(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
                }
                (Value::Object(x), serde_json::Value::Object(y)) => {
                    x.len() == y.len() && x.iter().all(|(k, v)| same(v, &y[k.as_ref()]))
                }
                _ => false,
            }
        }
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        fn gen(rng: &mut impl Rng, depth: u32, key: &mut u32) -> serde_json::Value {
            match rng.gen_range(0..if depth > 3 { 4 } else { 6 }) {
                0 => serde_json::Value::Null,
                1 => serde_json::json!(rng.gen_bool(0.5)),
                2 => serde_json::json!(rng.gen_range(-1e6..1e6)),
                3 => {
                    let s: String = (0..rng.gen_range(0..6))
                        .map(|_| {
                            ['a', '"', '\\', '\n', '\u{e9}', '\u{1f600}', '/'][rng.gen_range(0..7)]
                        })
                        .collect();
                    serde_json::json!(s)
                }
                4 => serde_json::Value::Array(
                    (0..rng.gen_range(0..4))
                        .map(|_| gen(rng, depth + 1, key))
                        .collect(),
                ),
                _ => serde_json::Value::Object(
                    (0..rng.gen_range(0..4))
                        .map(|_| {
                            *key += 1;
                            (format!("k{key}"), gen(rng, depth + 1, key))
                        })
                        .collect(),
                ),
            }
        }
        let mut key = 0;
        for _ in 0..300 {
            let v = gen(&mut rng, 0, &mut key);
            for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
                let n = parse(&text).unwrap();
                assert!(same(&n, &v), "{text}");
            }
        }
    }
}
