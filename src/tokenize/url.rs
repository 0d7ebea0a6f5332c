//! URLs: found in text, and taken from HTML link and image targets. A URL becomes tokens for
//! its host (`url:mail.example.com`), each parent domain (`url:example.com`, `url:com`), or the
//! whole IP address (`url:ip:192.0.2.7`), and for the words of its path (`url-path:unsubscribe`).

use super::Sink;
use regex::Regex;
use std::net::IpAddr;
use std::sync::LazyLock;

/// Plain-text URLs: an explicit scheme or a bare `www.` host, up to white space or a delimiter.
static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b(?:(?:https?|ftp)://|www\.)[^\s<>"'()\[\]{}|\\^`]+"#).expect("valid regex")
});

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
    for m in URL.find_iter(text) {
        out.push(Segment::Text(&text[last..m.start()]));
        out.push(Segment::Url(
            m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']),
        ));
        last = m.end();
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
