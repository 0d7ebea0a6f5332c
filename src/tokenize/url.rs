//! URLs: found in text, and taken from HTML link and image targets. A URL becomes tokens for
//! its host (`url:mail.example.com`), each parent domain (`url:example.com`, `url:com`), or the
//! whole IP address (`url:ip:192.0.2.7`), and for the words of its path (`url-path:unsubscribe`).

use super::Sink;
use std::net::IpAddr;

/// URL openings, matched case-insensitively at a word start. Each holds a separator byte (`:`
/// or `.`), the byte [`first_opening`] searches for.
const OPENINGS: [&[u8]; 4] = [b"http://", b"https://", b"ftp://", b"www."];

/// Where the first separator (`:` or `.`) sits in each of [`OPENINGS`].
const SEPARATOR_AT: [usize; 4] = [
    separator_at(OPENINGS[0]),
    separator_at(OPENINGS[1]),
    separator_at(OPENINGS[2]),
    separator_at(OPENINGS[3]),
];

/// The farthest any opening's separator sits from its start.
const MAX_SEPARATOR_AT: usize = 5;
const _: () = assert!(
    SEPARATOR_AT[0] <= MAX_SEPARATOR_AT
        && SEPARATOR_AT[1] <= MAX_SEPARATOR_AT
        && SEPARATOR_AT[2] <= MAX_SEPARATOR_AT
        && SEPARATOR_AT[3] <= MAX_SEPARATOR_AT
);

/// Offset of the first `:` or `.` in `opening` (which holds one).
const fn separator_at(opening: &[u8]) -> usize {
    let mut i = 0;
    while opening[i] != b':' && opening[i] != b'.' {
        i += 1;
    }
    i
}

/// Bytes that end a plain-text URL.
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'<' | b'>'
                | b'"'
                | b'\''
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'|'
                | b'\\'
                | b'^'
                | b'`'
        )
}

/// The next plain-text URL at or after `from`: an explicit scheme or a bare `www.` host, up to
/// white space or a delimiter, as (start, end) byte offsets. Hand-written rather than a regex:
/// compiling even a small regex costs about half a millisecond, which the
/// one-process-per-message filter would pay on every message. Matches start at an ASCII byte
/// and end before an ASCII byte or at the end, so they are valid UTF-8 slices.
fn next_url(text: &[u8], from: usize) -> Option<(usize, usize)> {
    let start = first_opening(text, from)?;
    let end = text[start..]
        .iter()
        .position(|&b| ends_url(b))
        .map_or(text.len(), |n| start + n);
    Some((start, end))
}

/// The first offset at or after `from` where one of [`OPENINGS`] begins a word. Every opening
/// holds a `:` or `.` a few bytes in, so only those bytes are visited (with memchr), not every
/// byte: words are far more common than URLs.
fn first_opening(text: &[u8], from: usize) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut search = from;
    while let Some(n) = memchr::memchr2(b':', b'.', &text[search..]) {
        let sep = search + n;
        // Openings starting before `best` have their separator at most this far past it.
        if best.is_some_and(|b| sep > b + MAX_SEPARATOR_AT) {
            break;
        }
        for (opening, &at) in OPENINGS.iter().zip(&SEPARATOR_AT) {
            let Some(start) = sep.checked_sub(at) else {
                continue;
            };
            if start < from || best.is_some_and(|b| start >= b) {
                continue;
            }
            let rest = &text[start..];
            let word_start =
                start == 0 || !(text[start - 1].is_ascii_alphanumeric() || text[start - 1] == b'_');
            if word_start
                && rest.len() >= opening.len()
                && rest[..opening.len()].eq_ignore_ascii_case(opening)
            {
                best = Some(start);
            }
        }
        search = sep + 1;
    }
    best
}

/// Most path words taken from one URL; long tracking paths add nothing beyond these.
const MAX_PATH_WORDS: usize = 8;

/// A stretch of text: plain text or one URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Segment<'t> {
    /// Text between URLs.
    Text(&'t str),
    /// A URL; trailing sentence punctuation belongs to neither segment.
    Url(&'t str),
}

/// Splits `text` into URLs and the text between them, in order.
pub(crate) fn split_urls(text: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut last = 0;
    while let Some((start, end)) = next_url(text.as_bytes(), last) {
        out.push(Segment::Text(&text[last..start]));
        out.push(Segment::Url(
            text[start..end].trim_end_matches(['.', ',', ';', ':', '!', '?']),
        ));
        last = end;
    }
    out.push(Segment::Text(&text[last..]));
    out
}

/// Schemes whose URLs browsers read as WHATWG's URL standard reads its "special" schemes: a
/// `\` is a `/`, and any run of them after the `:` comes before the host.
const SPECIAL_SCHEMES: [&str; 3] = ["http", "https", "ftp"];

/// Emits the tokens of one URL (absolute, scheme-relative, or `www.` host). The host is the
/// one a browser goes to: with an `http`, `https` or `ftp` scheme, after any slashes and
/// backslashes (`http:\\evil.example`, `https:evil.example`); and for every URL it ends at
/// the first `/`, `\`, `?` or `#`, so `http://evil.example\@bank.example/` is evil.example's,
/// as browsers read it, not bank.example's.
pub(crate) fn push_url(sink: &mut Sink<'_>, url: &str) {
    let url = url.trim();
    let rest = match (url.split_once(':'), url.find("://")) {
        (Some((scheme, after)), _)
            if SPECIAL_SCHEMES
                .iter()
                .any(|s| s.eq_ignore_ascii_case(scheme)) =>
        {
            after.trim_start_matches(['/', '\\'])
        }
        (_, Some(i))
            if url[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) =>
        {
            &url[i + 3..]
        }
        // Scheme-relative: mail is read over http(s), a special scheme, so `\\host` and
        // `/\host` are `//host` too.
        _ => match url.as_bytes() {
            [b'/' | b'\\', b'/' | b'\\', ..] => &url[2..],
            _ => url,
        },
    };
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = strip_port(host_port)
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if host.is_empty() {
        return;
    }
    push_host(sink, "url:", &host);
    let words = path
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2 && w.len() <= 40)
        .take(MAX_PATH_WORDS);
    for word in words {
        sink.push_lower("url-path:", word);
    }
}

fn strip_port(host_port: &str) -> &str {
    if let Some(inner) = host_port.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner);
    }
    match host_port.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host_port,
    }
}

/// Longest host (bytes) that yields tokens: the longest name DNS allows. A longer host is
/// cut to its last labels that fit, so its tokens stay within a small multiple of its length.
const MAX_HOST_BYTES: usize = 253;

/// Parent domains of at most this many labels yield a token. Real hosts have fewer (the
/// longest seen in the sample corpus, reverse-DNS names of dial-up pools, have 8); without
/// the cap a host of n labels would yield n tokens of up to n labels each, quadratic bytes.
const MAX_PARENT_LABELS: usize = 9;

/// Emits `{prefix}ip:ADDR` for an IP address, else the host and its parent domains of at most
/// [`MAX_PARENT_LABELS`] labels, longest first. Output bytes are at most about
/// `(MAX_PARENT_LABELS + 1) * (prefix + MAX_HOST_BYTES)` per host, whatever its length.
pub(crate) fn push_host(sink: &mut Sink<'_>, prefix: &str, host: &str) {
    if host.parse::<IpAddr>().is_ok() {
        sink.push_joined(&[prefix, "ip:", host]);
        return;
    }
    let host = last_labels(host, MAX_HOST_BYTES);
    sink.push_joined(&[prefix, host]);
    let dots: Vec<usize> = host
        .rmatch_indices('.')
        .take(MAX_PARENT_LABELS)
        .map(|(i, _)| i)
        .collect();
    for &dot in dots.iter().rev() {
        let parent = &host[dot + 1..];
        if !parent.is_empty() {
            sink.push_joined(&[prefix, parent]);
        }
    }
}

/// The longest tail of `host` made of whole labels and at most `max` bytes long; if even its
/// last label is longer, that label's last `max` bytes (or fewer, on a char boundary).
fn last_labels(host: &str, max: usize) -> &str {
    if host.len() <= max {
        return host;
    }
    let mut start = host.len() - max;
    while !host.is_char_boundary(start) {
        start += 1;
    }
    match host[start..].find('.') {
        // The tail already begins a label, or starts after the next dot.
        _ if host.as_bytes()[start - 1] == b'.' => &host[start..],
        Some(dot) if start + dot + 1 < host.len() => &host[start + dot + 1..],
        _ => &host[start..],
    }
}

#[cfg(test)]
mod tests {
    use super::super::TokenizerConfig;
    use super::*;

    fn url_tokens(url: &str) -> Vec<String> {
        let cfg = TokenizerConfig::default();
        let mut sink = Sink::new(&cfg, 1 << 20);
        push_url(&mut sink, url);
        sink.tokens.to_vec()
    }

    #[test]
    fn host_parents_and_path() {
        assert_eq!(
            url_tokens("http://user:pw@Mail.Example.COM:8080/Cheap/meds.html?id=1"),
            [
                "url:mail.example.com",
                "url:example.com",
                "url:com",
                "url-path:cheap",
                "url-path:meds",
                "url-path:html",
                "url-path:id"
            ]
        );
        assert_eq!(
            url_tokens("https://192.0.2.7/x1"),
            ["url:ip:192.0.2.7", "url-path:x1"]
        );
        assert_eq!(
            url_tokens("www.spam.biz"),
            ["url:www.spam.biz", "url:spam.biz", "url:biz"]
        );
    }

    #[test]
    fn host_is_the_one_a_browser_goes_to() {
        let evil = ["url:evil.example", "url:example"];
        for url in [
            "http:\\\\evil.example",
            "HTTP:/\\evil.example",
            "https:evil.example",
            "http:///evil.example",
            "http://evil.example\\",
            "\\\\evil.example",
            "/\\evil.example",
            "//evil.example",
        ] {
            assert_eq!(url_tokens(url), evil, "{url}");
        }
        assert_eq!(
            url_tokens("http://evil.example\\@bank.example/"),
            [
                "url:evil.example",
                "url:example",
                "url-path:bank",
                "url-path:example"
            ]
        );
    }

    /// `next_url` as it was before it searched for separators: every byte tried as a start.
    fn next_url_reference(text: &[u8], from: usize) -> Option<(usize, usize)> {
        for i in from..text.len() {
            let word_start =
                i == 0 || !(text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'_');
            let rest = &text[i..];
            if word_start
                && OPENINGS
                    .iter()
                    .any(|o| rest.len() >= o.len() && rest[..o.len()].eq_ignore_ascii_case(o))
            {
                let end = rest
                    .iter()
                    .position(|&b| ends_url(b))
                    .map_or(text.len(), |n| i + n);
                return Some((i, end));
            }
        }
        None
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// Searching from the separators finds the URL trying every byte finds, from any
        /// offset, in text dense with near-openings.
        #[test]
        fn next_url_equals_trying_every_byte(
            text in crate::tokenize::text_of_pieces(
                &[
                    "http", "HTTPS", "s", "ftp", "Www", "w", ":", "://", "/", ".", "..", "x",
                    "_", " ", "(", "1", "é",
                ],
                24,
            ),
            from in 0usize..64,
        ) {
            let from = from.min(text.len());
            proptest::prop_assert_eq!(
                next_url(text.as_bytes(), from),
                next_url_reference(text.as_bytes(), from)
            );
        }
    }

    #[test]
    fn url_ends_at_white_space_and_the_delimiters_listed() {
        for b in 0..=u8::MAX {
            let listed = b"<>\"'()[]{}|\\^`".contains(&b);
            assert_eq!(ends_url(b), b.is_ascii_whitespace() || listed, "byte {b}");
        }
    }

    #[test]
    fn finds_urls_in_text() {
        let segments = split_urls("see http://a.example/x, or www.b.example.");
        assert_eq!(
            split_urls("xhttp://no WWW.Yes.example"),
            [
                Segment::Text("xhttp://no "),
                Segment::Url("WWW.Yes.example"),
                Segment::Text("")
            ]
        );
        assert_eq!(
            split_urls("見http://a.example/ü<b"),
            [
                Segment::Text("見"),
                Segment::Url("http://a.example/ü"),
                Segment::Text("<b")
            ]
        );
        assert_eq!(
            segments,
            [
                Segment::Text("see "),
                Segment::Url("http://a.example/x"),
                Segment::Text(" or "),
                Segment::Url("www.b.example"),
                Segment::Text(""),
            ]
        );
    }
}
