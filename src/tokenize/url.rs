//! URLs: found in text, and taken from HTML link and image targets. A URL becomes tokens for
//! its host (`url:mail.example.com`), each parent domain (`url:example.com`, `url:com`), or the
//! whole IP address (`url:ip:192.0.2.7`), and for the words of its path (`url-path:unsubscribe`).

use super::Sink;
use std::net::IpAddr;

/// URL openings, matched case-insensitively at a word start.
const OPENINGS: [&[u8]; 4] = [b"http://", b"https://", b"ftp://", b"www."];

/// Bytes that end a plain-text URL.
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace() || b"<>\"'()[]{}|\\^`".contains(&b)
}

/// The next plain-text URL at or after `from`: an explicit scheme or a bare `www.` host, up to
/// white space or a delimiter, as (start, end) byte offsets. Hand-written rather than a regex:
/// compiling even a small regex costs about half a millisecond, which the
/// one-process-per-message filter would pay on every message. Matches start at an ASCII byte
/// and end before an ASCII byte or at the end, so they are valid UTF-8 slices.
fn next_url(text: &[u8], from: usize) -> Option<(usize, usize)> {
    for i in from..text.len() {
        // Cheap first test: every opening starts with h, f or w in either case.
        if !matches!(text[i] | 0x20, b'h' | b'f' | b'w') {
            continue;
        }
        let word_start = i == 0 || !(text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'_');
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

/// Emits the tokens of one URL (absolute, scheme-relative, or `www.` host).
pub(crate) fn push_url(sink: &mut Sink<'_>, url: &str) {
    let url = url.trim();
    let rest = match url.find("://") {
        Some(i)
            if url[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) =>
        {
            &url[i + 3..]
        }
        _ => url.strip_prefix("//").unwrap_or(url),
    };
    let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
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

/// Emits `{prefix}ip:ADDR` for an IP address, else the host and each parent domain.
pub(crate) fn push_host(sink: &mut Sink<'_>, prefix: &str, host: &str) {
    if host.parse::<IpAddr>().is_ok() {
        sink.push_joined(&[prefix, "ip:", host]);
        return;
    }
    let mut rest = host;
    loop {
        sink.push_joined(&[prefix, rest]);
        match rest.split_once('.') {
            Some((_, parent)) if !parent.is_empty() => rest = parent,
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::TokenizerConfig;
    use super::*;

    fn url_tokens(url: &str) -> Vec<String> {
        let cfg = TokenizerConfig::default();
        let mut sink = Sink::new(&cfg);
        push_url(&mut sink, url);
        sink.tokens
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
