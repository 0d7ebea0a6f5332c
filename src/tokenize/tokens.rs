//! [`Tokens`]: a message's token list, held in one string.

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Tokens (feature strings such as `viagra`, `subject:free`, `url:example.com`) in the order
/// they were found, repeats kept: their bytes one after another in one string, and where each
/// ends. A message's few hundred tokens take two allocations this way, not one each: in the
/// spamd server, whose worker threads take turns on the cores, a string per token cost a cache
/// miss per allocation and per free. Serialized as a sequence of strings, byte for byte as
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

    /// No tokens yet, with room for `bytes` bytes of `tokens` tokens.
    pub fn with_capacity(bytes: usize, tokens: usize) -> Self {
        Tokens {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(tokens),
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
    pub fn iter(&self) -> TokensIter<'_> {
        TokensIter {
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
        let start = self.text.len();
        write(&mut self.text);
        debug_assert!(self.text.len() >= start, "a token's writer only appends");
        self.ends.push(self.text.len());
    }

    /// Appends the tokens `text` holds one after another, each `width` bytes long: `text`'s
    /// length must be a multiple of `width` (not 0), and every `width`-th byte a char
    /// boundary (say, ASCII text).
    pub(crate) fn push_fixed_width(&mut self, text: &str, width: usize) {
        debug_assert!(
            width > 0 && text.len().is_multiple_of(width),
            "{} by {width}",
            text.len()
        );
        let start = self.text.len();
        self.text.push_str(text);
        self.ends
            .extend((1..=text.len() / width).map(|i| start + i * width));
    }

    /// Frees the room held beyond the tokens, for a list kept long.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
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
pub struct TokensIter<'t> {
    text: &'t str,
    ends: &'t [usize],
    start: usize,
}

impl<'t> Iterator for TokensIter<'t> {
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

impl ExactSizeIterator for TokensIter<'_> {}

impl<'t> IntoIterator for &'t Tokens {
    type Item = &'t str;
    type IntoIter = TokensIter<'t>;

    fn into_iter(self) -> TokensIter<'t> {
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
    fn iterator_counts_what_is_left_and_written_tokens_equal_collected_ones() {
        let tokens: Tokens = ["a", "bc", "d"].into_iter().collect();
        let mut iter = tokens.iter();
        assert_eq!(iter.next(), Some("a"));
        assert_eq!((iter.len(), iter.size_hint()), (2, (2, Some(2))));
        assert_eq!(iter.collect::<Vec<_>>(), ["bc", "d"]);
        let mut written = Tokens::new();
        written.push_with(|text| text.push('a'));
        written.push_with(|text| text.extend(['b', 'c']));
        written.push("d");
        assert_eq!(written, tokens);
        assert!(std::panic::catch_unwind(|| tokens[3].len()).is_err());
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

    /// The model file's encoding (postcard): journals written with `Vec<String>` read back, and
    /// the same bytes written.
    #[test]
    fn tokens_encode_in_the_model_file_as_a_list_of_strings_does() {
        let lists: [&[&str]; 3] = [&[], &["", "ü", "subject:free"], &["x"; 300]];
        for words in lists {
            let strings: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            let tokens: Tokens = words.iter().collect();
            let bytes = postcard::to_stdvec(&strings).unwrap();
            assert_eq!(postcard::to_stdvec(&tokens).unwrap(), bytes);
            assert_eq!(postcard::from_bytes::<Tokens>(&bytes).unwrap(), tokens);
            let cow: std::borrow::Cow<'_, Tokens> = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(*cow, tokens);
            // Cut short, or a string that is not UTF-8: refused, as for `Vec<String>`.
            if let Some(cut) = bytes.len().checked_sub(1).filter(|&n| n > 0) {
                assert!(postcard::from_bytes::<Tokens>(&bytes[..cut]).is_err());
                assert!(postcard::from_bytes::<Vec<String>>(&bytes[..cut]).is_err());
            }
        }
        let bad = [1, 1, 0xff];
        assert!(postcard::from_bytes::<Vec<String>>(&bad).is_err());
        assert!(postcard::from_bytes::<Tokens>(&bad).is_err());
        // A count far beyond the bytes: refused without reserving room for it.
        let huge = postcard::to_stdvec(&u64::MAX).unwrap();
        assert!(postcard::from_bytes::<Tokens>(&huge).is_err());
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
