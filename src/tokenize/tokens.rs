//! [`Tokens`]: a message's token list, held in one string.

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Tokens (feature strings such as `viagra`, `subject:free`, `url:example.com`) in the order
/// they were found, repeats kept: their bytes one after another in one string, and where each
/// ends. A message's few hundred tokens so take two allocations instead
/// of one each; in the spamd server, whose worker threads take turns on the cores, a string per
/// token cost a cache miss per allocation and per free. Serialized as a sequence of strings, as
/// `Vec<String>` is.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Tokens {
    text: String,
    ends: Vec<usize>,
}

impl Tokens {
    /// No tokens.
    pub const fn new() -> Self {
        Tokens {
            text: String::new(),
            ends: Vec::new(),
        }
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of all tokens together.
    pub fn bytes(&self) -> usize {
        self.text.len()
    }

    /// Token `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&str> {
        let start = match i {
            0 => 0,
            _ => *self.ends.get(i - 1)?,
        };
        self.text.get(start..*self.ends.get(i)?)
    }

    /// The last token.
    pub fn last(&self) -> Option<&str> {
        self.get(self.len().checked_sub(1)?)
    }

    /// The tokens in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            text: &self.text,
            ends: &self.ends,
            start: 0,
        }
    }

    /// True if `token` is one of them.
    pub fn contains(&self, token: &str) -> bool {
        self.iter().any(|t| t == token)
    }

    /// Appends `token`.
    pub fn push(&mut self, token: &str) {
        self.push_with(|text| text.push_str(token));
    }

    /// Appends the token `write` appends to the string it is given (which holds the tokens
    /// before it: `write` must only append).
    pub(crate) fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.text);
        self.ends.push(self.text.len());
    }

    /// Removes the last token, if any.
    pub(crate) fn pop(&mut self) {
        if self.ends.pop().is_some() {
            self.text.truncate(self.ends.last().copied().unwrap_or(0));
        }
    }

    /// Removes every token.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Keeps only the tokens `keep` is true of, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        *self = self.iter().filter(|t| keep(t)).collect();
    }

    /// The tokens as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

/// The tokens of a [`Tokens`], in order.
#[derive(Debug, Clone)]
pub struct Iter<'t> {
    text: &'t str,
    ends: &'t [usize],
    start: usize,
}

impl<'t> Iterator for Iter<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let (&end, rest) = self.ends.split_first()?;
        let token = self.text.get(self.start..end).unwrap_or_default();
        self.start = end;
        self.ends = rest;
        Some(token)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.ends.len(), Some(self.ends.len()))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'t> IntoIterator for &'t Tokens {
    type Item = &'t str;
    type IntoIter = Iter<'t>;

    fn into_iter(self) -> Iter<'t> {
        self.iter()
    }
}

impl<S: AsRef<str>> Extend<S> for Tokens {
    fn extend<I: IntoIterator<Item = S>>(&mut self, tokens: I) {
        for token in tokens {
            self.push(token.as_ref());
        }
    }
}

impl<S: AsRef<str>> FromIterator<S> for Tokens {
    fn from_iter<I: IntoIterator<Item = S>>(tokens: I) -> Self {
        let mut all = Tokens::new();
        all.extend(tokens);
        all
    }
}

impl std::ops::Index<usize> for Tokens {
    type Output = str;

    /// Token `i`; panics if there is none, as a slice does.
    fn index(&self, i: usize) -> &str {
        match self.get(i) {
            Some(token) => token,
            None => panic!("token {i} of {}", self.len()),
        }
    }
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for Tokens {
    fn eq(&self, other: &[S]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for Tokens {
    fn eq(&self, other: &[S; N]) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for Tokens {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

impl Serialize for Tokens {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for token in self {
            seq.serialize_element(token)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Tokens {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(TokensVisitor)
    }
}

struct TokensVisitor;

impl<'de> Visitor<'de> for TokensVisitor {
    type Value = Tokens;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of tokens")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tokens, A::Error> {
        let mut tokens = Tokens::new();
        while seq.next_element_seed(Append(&mut tokens))?.is_some() {}
        Ok(tokens)
    }
}

/// Reads one token straight into the string of the others.
struct Append<'t>(&'t mut Tokens);

impl<'de> DeserializeSeed<'de> for Append<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Append<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a token")
    }

    fn visit_str<E: serde::de::Error>(self, token: &str) -> Result<(), E> {
        self.0.push(token);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_keep_order_repeats_and_empty_ones() {
        let words = ["free", "", "money", "free", "ü"];
        let tokens: Tokens = words.iter().collect();
        assert_eq!(tokens.len(), 5);
        assert_eq!(tokens, words);
        assert_eq!(tokens.iter().len(), 5);
        assert_eq!(tokens.get(1), Some(""));
        assert_eq!(&tokens[4], "ü");
        assert_eq!(tokens.get(5), None);
        assert_eq!(tokens.last(), Some("ü"));
        assert_eq!(tokens.bytes(), words.concat().len());
        assert!(tokens.contains("money") && !tokens.contains("mone"));
        assert_eq!(tokens.to_vec(), words);
        assert_eq!(format!("{tokens:?}"), format!("{words:?}"));
        let mut kept = tokens.clone();
        kept.retain(|t| t != "free");
        assert_eq!(kept, ["", "money", "ü"]);
        kept.clear();
        assert!(kept.is_empty() && kept.bytes() == 0);
    }

    #[test]
    fn pop_removes_the_last_token_and_its_bytes() {
        let mut tokens: Tokens = ["a", "bc"].into_iter().collect();
        tokens.pop();
        assert_eq!(tokens, ["a"]);
        assert_eq!(tokens.bytes(), 1);
        tokens.push_with(|text| text.push_str("de"));
        assert_eq!(tokens, ["a", "de"]);
        tokens.pop();
        tokens.pop();
        tokens.pop();
        assert!(tokens.is_empty() && tokens.bytes() == 0);
        assert_eq!(tokens.last(), None);
    }

    #[test]
    fn tokens_serialize_as_a_list_of_strings_does() {
        let words = vec!["subject:free".to_string(), String::new(), "ü".to_string()];
        let tokens: Tokens = words.iter().collect();
        let json = serde_json::to_string(&tokens).unwrap();
        assert_eq!(json, serde_json::to_string(&words).unwrap());
        let back: Tokens = serde_json::from_str(&json).unwrap();
        assert_eq!(back, tokens);
        // An escaped string is not borrowed from the input: appended all the same.
        let back: Tokens = serde_json::from_str(r#"["a\"b","c"]"#).unwrap();
        assert_eq!(back, ["a\"b", "c"]);
        assert!(serde_json::from_str::<Tokens>(r#"["a",1]"#).is_err());
    }
}
