//! HTML character references (`&amp;`, `&#233;`, `&#x1F600;`) decoded, exactly as
//! `html_escape::decode_html_entities` decodes them, from a table that holds no pointers.
//!
//! Why not call html-escape: its table of the 2,125 named references is an array of
//! (`&[u8]`, `&str`) pairs. In a position-independent executable every one of those 4,250
//! pointers is relocated when the process starts, whether or not it ever meets an entity, and
//! the 68 KB they live in become private pages. For `spamsort filter`, one process per message,
//! that was 17 of its page faults and a tenth of a millisecond a run (`--version` of the static
//! build: 0.68-0.72 ms against 0.57-0.59 without the table; `perf stat -r 400`).
//!
//! The names and their values are still html-escape's (`html_escape::NAMED_ENTITIES`, from
//! the WHATWG's `entities.json`): they are copied at compile time into byte strings and offset
//! arrays, which sit in read-only data and need no relocation. A property test checks this
//! module against html-escape on text made of references, near-references and junk.
//!
//! What is decoded (html-escape's rules): `&name;` for a known name; `&#digits;` and
//! `&#xhex;` for a Unicode scalar value that is not NUL or a C0 control other than tab, line
//! feed, form feed and carriage return. Anything else stays as it was. One rule is HTML5's, not
//! html-escape's: a numeric reference needs no `;`, its digits end it (`&#118iagra` is
//! `viagra` in every browser and mail client; html-escape left it, and spam used it to hide
//! words). The property test holds the rest to html-escape.

use html_escape::NAMED_ENTITIES;
use std::borrow::Cow;

/// How many named references there are.
const COUNT: usize = NAMED_ENTITIES.len();

/// The total length of the names (`WHICH` 0) or of the values (`WHICH` 1).
const fn total_len<const WHICH: usize>() -> usize {
    let mut sum = 0;
    let mut i = 0;
    while i < COUNT {
        sum += part::<WHICH>(i).len();
        i += 1;
    }
    sum
}

/// Entry `i`'s name (`WHICH` 0) or value (`WHICH` 1), as html-escape holds it.
const fn part<const WHICH: usize>(i: usize) -> &'static [u8] {
    if WHICH == 0 {
        NAMED_ENTITIES[i].0
    } else {
        NAMED_ENTITIES[i].1.as_bytes()
    }
}

/// The names (`WHICH` 0) or values (`WHICH` 1), one after another, in the table's order.
const fn joined<const WHICH: usize, const LEN: usize>() -> [u8; LEN] {
    let mut out = [0; LEN];
    let (mut i, mut at) = (0, 0);
    while i < COUNT {
        let bytes = part::<WHICH>(i);
        let mut j = 0;
        while j < bytes.len() {
            out[at] = bytes[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Where each name (`WHICH` 0) or value (`WHICH` 1) ends in its joined string.
const fn ends<const WHICH: usize>() -> [u16; COUNT] {
    // The offsets fit in 16 bits (checked here, so a longer table fails the build).
    assert!(total_len::<WHICH>() <= u16::MAX as usize);
    let mut out = [0; COUNT];
    let (mut i, mut at) = (0, 0);
    while i < COUNT {
        at += part::<WHICH>(i).len();
        out[i] = at as u16;
        i += 1;
    }
    out
}

const NAMES_LEN: usize = total_len::<0>();
const VALUES_LEN: usize = total_len::<1>();
static NAMES: [u8; NAMES_LEN] = joined::<0, NAMES_LEN>();
static NAME_ENDS: [u16; COUNT] = ends::<0>();
static VALUES: [u8; VALUES_LEN] = joined::<1, VALUES_LEN>();
static VALUE_ENDS: [u16; COUNT] = ends::<1>();

/// Piece `i` of a joined string cut at `ends`.
fn piece<'a>(joined: &'a [u8], ends: &[u16], i: usize) -> &'a [u8] {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &joined[start..ends[i] as usize]
}

/// The text a named reference stands for (`name` without `&` and `;`), if it is one. The
/// table is sorted by name (a test checks), so a binary search finds it.
fn named(name: &[u8]) -> Option<&'static str> {
    use std::cmp::Ordering;
    let (mut low, mut high) = (0, COUNT);
    while low < high {
        let mid = low + (high - low) / 2;
        match piece(&NAMES, &NAME_ENDS, mid).cmp(name) {
            Ordering::Less => low = mid + 1,
            Ordering::Greater => high = mid,
            Ordering::Equal => return std::str::from_utf8(piece(&VALUES, &VALUE_ENDS, mid)).ok(),
        }
    }
    None
}

/// The character of a numeric reference's digits in `radix`, if they are one it decodes.
fn numeric(digits: &[u8], radix: u32) -> Option<char> {
    // A sign is no digit: `from_str_radix` would take a leading `+`.
    let first = *digits.first()?;
    if !(first.is_ascii_digit() || (radix == 16 && first.is_ascii_hexdigit())) {
        return None;
    }
    let number = u32::from_str_radix(std::str::from_utf8(digits).ok()?, radix).ok()?;
    // NUL and the C0 controls are refused, but for the white space among them.
    char::from_u32(number).filter(|&c| c >= ' ' || matches!(c, '\t' | '\n' | '\u{c}' | '\r'))
}

/// A decoded reference.
enum Decoded {
    Char(char),
    Text(&'static str),
}

/// The numeric reference at the start of `body` (what follows a `&`) whose digits end it, `;`
/// or not (HTML5's rule), if it decodes: its length in `body` (through a `;` right after the
/// digits) and its character.
fn unclosed_numeric(body: &[u8]) -> Option<(usize, char)> {
    let (radix, start) = match body {
        [b'#', b'x' | b'X', ..] => (16, 2),
        [b'#', ..] => (10, 1),
        _ => return None,
    };
    let digits = body[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || (radix == 16 && b.is_ascii_hexdigit()))
        .count();
    let end = start + digits;
    let c = numeric(&body[start..end], radix)?;
    Some((end + usize::from(body.get(end) == Some(&b';')), c))
}

/// The next reference at or after byte `from` of `text` that decodes: its start, the byte
/// after it, and what it decodes to. A numeric reference's digits end it, a `;` right after
/// them included ([`unclosed_numeric`]); a named reference's body runs from its `&` to the
/// next `&` or `;`, only a `;` closes it, and a `&` starts the next candidate.
fn next_reference(text: &[u8], mut from: usize) -> Option<(usize, usize, Decoded)> {
    loop {
        let amp = from + memchr::memchr(b'&', text.get(from..)?)?;
        let body_start = amp + 1;
        if let Some((len, c)) = unclosed_numeric(&text[body_start..]) {
            return Some((amp, body_start + len, Decoded::Char(c)));
        }
        let stop = body_start + memchr::memchr2(b'&', b';', &text[body_start..])?;
        if text[stop] == b'&' {
            from = stop;
            continue;
        }
        // A numeric one that did not decode above does not with its `;` either: only a name.
        if let Some(value) = named(&text[body_start..stop]) {
            return Some((amp, stop + 1, Decoded::Text(value)));
        }
        from = stop + 1;
    }
}

/// `text` with its character references decoded; borrowed when it has none that decode.
pub(crate) fn decode(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(mut found) = next_reference(bytes, 0) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    loop {
        let (start, end, decoded) = found;
        // `start` is at a `&` and `end` right after a `;` or an ASCII digit: both are
        // character boundaries.
        out.push_str(&text[copied..start]);
        match decoded {
            Decoded::Char(c) => out.push(c),
            Decoded::Text(s) => out.push_str(s),
        }
        copied = end;
        match next_reference(bytes, end) {
            Some(next) => found = next,
            None => break,
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_table_is_html_escapes_sorted_by_name() {
        for (i, (name, value)) in NAMED_ENTITIES.iter().enumerate() {
            assert_eq!(piece(&NAMES, &NAME_ENDS, i), *name);
            assert_eq!(piece(&VALUES, &VALUE_ENDS, i), value.as_bytes());
            if i > 0 {
                assert!(piece(&NAMES, &NAME_ENDS, i - 1) < *name);
            }
        }
    }

    #[test]
    fn references_decode_and_others_stay() {
        assert_eq!(decode("a &amp; b &lt;i&gt;"), "a & b <i>");
        assert_eq!(decode("&#233;t&#xE9; &#X1F600;"), "été 😀");
        assert_eq!(decode("AT&T &amp"), "AT&T &amp");
        assert_eq!(
            decode("&nosuch; &#0; &#1; &#9; &#xD800; &#+5; &#x;"),
            "&nosuch; &#0; &#1; \t &#xD800; &#+5; &#x;"
        );
        assert_eq!(decode("&&amp;;"), "&&;");
        // HTML5: the digits end a numeric reference, `;` or not.
        assert_eq!(
            decode("&#118iagra &#x76iagra &#X56;iagra &#0118 &#x76agra"),
            "viagra viagra Viagra v \u{76A}gra"
        );
        assert_eq!(decode("&#118&amp;&#0&#+5"), "v&&#0&#+5");
        assert!(matches!(decode("plain & simple"), Cow::Borrowed(_)));
    }

    /// Text of references (known or not, numeric in range or not), pieces of them and junk.
    fn texts() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("&".to_string()),
            Just(";".to_string()),
            Just("#".to_string()),
            Just("x".to_string()),
            "[0-9a-fA-F]{1,9}",
            "[ a-zé😀]{1,4}",
            (0..COUNT).prop_map(|i| format!("&{};", String::from_utf8_lossy(NAMED_ENTITIES[i].0))),
            (0..COUNT).prop_map(|i| String::from_utf8_lossy(NAMED_ENTITIES[i].0).into_owned()),
            any::<u32>().prop_map(|n| format!("&#{n};")),
            any::<u32>().prop_map(|n| format!("&#x{n:x};")),
            (0u32..0x100).prop_map(|n| format!("&#{n};")),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    /// `text` with a `;` after every numeric reference that decodes but lacks one: what
    /// html-escape needs to decode `text` as [`decode`] does (by HTML5's rule).
    fn closed_numeric(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut copied = 0;
        for amp in memchr::memchr_iter(b'&', bytes) {
            if amp < copied {
                continue;
            }
            if let Some((len, _)) = unclosed_numeric(&bytes[amp + 1..]) {
                let end = amp + 1 + len;
                out.push_str(&text[copied..end]);
                if bytes[end - 1] != b';' {
                    out.push(';');
                }
                copied = end;
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    proptest! {
        #[test]
        fn decodes_as_html_escape_does(text in texts()) {
            let closed = closed_numeric(&text);
            prop_assert_eq!(decode(&text), html_escape::decode_html_entities(&closed));
        }
    }
}
