//! HTML to text for tokenizing: tags dropped, comments, scripts and styles removed, entities
//! decoded, and link and image targets kept for URL tokens. Formatting tags (`<b>`, `<font>`,
//! ...) vanish without a trace, so `V<b></b>iagra` and `via<!-- x -->gra` read as one word;
//! block tags become a space. So do tags a browser does not know (`vi<x>agra`, Word's
//! `<o:p>`) and bogus comments (`<!x>`, `<?x>`): they render inline, as nothing. One linear
//! pass, no DOM: cost is bounded by the input length.

use super::find_ascii_ci;
use std::collections::BTreeSet;

/// What the tokenizer needs from an HTML part.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct HtmlText {
    /// Visible text, entities decoded.
    pub text: String,
    /// `href`, `src`, `action` and `background` attribute values, entities decoded.
    pub urls: Vec<String>,
    /// Distinct tag names used, sorted.
    pub tags: Vec<String>,
}

/// The tags that end a word where they stand, as rendered: block and table elements, line
/// breaks, and elements that show something of their own (images, form controls, embedded
/// content) or hide their content (the head, scripts). Every other tag, known or made up
/// (`<span>`, `<ins>`, `<x>`, `<o:p>`), and every bogus comment (`<!x>`, `<?x>`), is rendered
/// inline and shows nothing itself, so it vanishes: a list of the inline tags instead put a
/// space into `vi<x>agra`, which every mail client shows as one word. Sorted, for a binary
/// search (a test checks it).
const BREAKING_TAGS: &[&str] = &[
    "address",
    "applet",
    "area",
    "article",
    "aside",
    "audio",
    "base",
    "blockquote",
    "body",
    "br",
    "button",
    "canvas",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "iframe",
    "img",
    "input",
    "isindex",
    "keygen",
    "legend",
    "li",
    "link",
    "listing",
    "main",
    "marquee",
    "math",
    "menu",
    "meta",
    "meter",
    "nav",
    "noembed",
    "noframes",
    "noscript",
    "object",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "picture",
    "plaintext",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "script",
    "section",
    "select",
    "source",
    "style",
    "summary",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
    "video",
    "xmp",
];
const URL_ATTRIBUTES: &[&str] = &["href", "src", "action", "background"];

/// Converts HTML to text, URLs and tag names.
pub(crate) fn html_to_text(html: &str) -> HtmlText {
    let mut out = HtmlText::default();
    // A set, not `Vec::contains`: markup of many distinct made-up tags (`<t1><t2>...`) would
    // otherwise cost time quadratic in its length.
    let mut tags = BTreeSet::new();
    let mut raw = String::with_capacity(html.len() / 2);
    // The name of the tag at hand, lowercased; one buffer for all, so a tag already seen
    // costs no allocation.
    let mut name = String::new();
    let bytes = html.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let Some(lt) = memchr::memchr(b'<', &bytes[i..]) else {
            raw.push_str(&html[i..]);
            break;
        };
        raw.push_str(&html[i..i + lt]);
        i += lt;
        let rest = &html[i..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            i += 4 + comment_len(comment);
            continue;
        }
        let next = rest.as_bytes().get(1).copied().unwrap_or(b' ');
        if !(next.is_ascii_alphabetic() || next == b'/' || next == b'!' || next == b'?') {
            raw.push('<');
            i += 1;
            continue;
        }
        // HTML5's bogus comments (`<!x`, `<?x`, `</` then no letter) end at their first `>`,
        // quotes or not: read as a tag, `<!x '>buy viagra'>` hid what every client shows.
        let bogus = match rest.as_bytes()[1] {
            b'!' | b'?' => true,
            b'/' => !rest.as_bytes().get(2).is_some_and(u8::is_ascii_alphabetic),
            _ => false,
        };
        let end = if bogus {
            memchr::memchr(b'>', rest.as_bytes()).map_or(rest.len(), |n| n + 1)
        } else {
            tag_end(rest)
        };
        let tag = if rest[..end].ends_with('>') {
            &rest[1..end - 1]
        } else {
            &rest[1..end]
        };
        i += end;
        let closing = tag.starts_with('/');
        name.clear();
        name.extend(
            tag.trim_start_matches(['/', '!', '?'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .map(|c| c.to_ascii_lowercase()),
        );
        if name.is_empty() {
            continue;
        }
        // A browser's tag name runs to white space or `/`: `<br:x>`, `<p-x>` and
        // `<script-x>` are no `br`, `p` or `script` but elements it does not know, shown
        // inline. (Their `html:` token is still of the letters and digits they start with.)
        let whole = tag.strip_prefix('/').unwrap_or(tag);
        let whole = whole
            .find(|c: char| c.is_ascii_whitespace() || c == '/')
            .unwrap_or(whole.len());
        let known = !bogus && whole == name.len();
        if !closing && !bogus {
            collect_urls(tag, &mut out.urls);
            if known && (name == "script" || name == "style") {
                let close = format!("</{name}");
                let skipped = find_ascii_ci(&html.as_bytes()[i..], close.as_bytes())
                    .unwrap_or(html.len() - i);
                i += skipped;
            }
        }
        if known && BREAKING_TAGS.binary_search(&name.as_str()).is_ok() {
            raw.push(' ');
        }
        if !tags.contains(&name) {
            tags.insert(name.clone());
        }
    }
    out.tags = tags.into_iter().collect();
    out.text = super::entities::decode(&raw).into_owned();
    out
}

/// Length of the comment whose text starts `body` (what follows its `<!--`), through its end,
/// as HTML5 ends comments and so every mail client that renders HTML: `<!-->` and `<!--->` are
/// whole (empty) comments, any other ends at its first `-->` or `--!>`, and an unclosed one
/// runs to the end of the input. (Read as the start of a comment that only a later `-->`
/// ends, `<!-->` hid all the text after it.) One pass: every `--` is looked at once.
fn comment_len(body: &str) -> usize {
    if body.starts_with('>') {
        return 1;
    }
    if body.starts_with("->") {
        return 2;
    }
    let bytes = body.as_bytes();
    let mut from = 0;
    while let Some(n) = memchr::memmem::find(&bytes[from..], b"--") {
        let after = from + n + 2;
        match (bytes.get(after), bytes.get(after + 1)) {
            (Some(b'>'), _) => return after + 1,
            (Some(b'!'), Some(b'>')) => return after + 2,
            _ => from += n + 1,
        }
    }
    body.len()
}

/// Length of the tag at the start of `s` (which begins with `<`), through its `>`, quotes
/// respected. An unterminated tag runs to the end of the input.
fn tag_end(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut from = 1;
    // Jumps from quote to quote: attribute values can be long (URLs, inline styles).
    while let Some(n) = memchr::memchr3(b'>', b'"', b'\'', &bytes[from..]) {
        let at = from + n;
        if bytes[at] == b'>' {
            return at + 1;
        }
        match memchr::memchr(bytes[at], &bytes[at + 1..]) {
            Some(n) => from = at + 1 + n + 1,
            None => break,
        }
    }
    s.len()
}

/// Where `needle` (not empty) first occurs in `haystack`. A tag is short, so a scan for the
/// needle's first byte beats setting up a substring searcher for each attribute name.
fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(n) = memchr::memchr(needle[0], &haystack[from..]) {
        let at = from + n;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Pushes the values of URL-bearing attributes in the tag body `tag`. Each search for an
/// attribute resumes after the value it found, so values never overlap: a tag of
/// `href=href=href=...` costs time and URL bytes linear in its length, not quadratic.
fn collect_urls(tag: &str, urls: &mut Vec<String>) {
    // Every value follows an `=`: most tags have none, and need no lowercased copy.
    if !tag.contains('=') {
        return;
    }
    // ASCII lowercasing keeps every byte offset, so offsets in `lower` are offsets in `tag`.
    let lower = tag.to_ascii_lowercase();
    for attr in URL_ATTRIBUTES {
        let mut from = 0;
        while let Some(pos) = find_bytes(&lower.as_bytes()[from..], attr.as_bytes()) {
            let start = from + pos;
            from = start + attr.len();
            let boundary = start == 0 || !lower.as_bytes()[start - 1].is_ascii_alphanumeric();
            let after = lower[from..].trim_start();
            if !boundary || !after.starts_with('=') {
                continue;
            }
            let rest = &tag[tag.len() - after.len() + 1..];
            let value = rest.trim_start();
            let value_start = tag.len() - value.len();
            let (value, value_end) = match value.as_bytes().first() {
                Some(&q @ (b'"' | b'\'')) => {
                    let inner = &value[1..];
                    let len = inner.find(char::from(q)).unwrap_or(inner.len());
                    // Past the closing quote, if there is one.
                    (&inner[..len], (value_start + len + 2).min(tag.len()))
                }
                _ => {
                    let len = value
                        .find(|c: char| c.is_whitespace() || c == '>')
                        .unwrap_or(value.len());
                    (&value[..len], value_start + len)
                }
            };
            from = from.max(value_end);
            if !value.is_empty() {
                urls.push(super::entities::decode(value).into_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tag_end` as it was before it jumped between quotes: byte by byte.
    fn tag_end_reference(s: &str) -> usize {
        let mut quote = None;
        for (i, b) in s.bytes().enumerate().skip(1) {
            match (quote, b) {
                (None, b'"' | b'\'') => quote = Some(b),
                (Some(q), _) if q == b => quote = None,
                (None, b'>') => return i + 1,
                _ => {}
            }
        }
        s.len()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// Tag ends and attribute searches agree with the byte-by-byte and `str::find`
        /// versions on text dense with quotes, brackets and attribute names.
        #[test]
        fn tag_end_and_find_bytes_equal_their_references(
            text in crate::tokenize::text_of_pieces(
                &["<", ">", "\"", "'", "=", " ", "a", "href", "hre", "src", "é", "\n"],
                24,
            )
        ) {
            let text = format!("<{text}");
            proptest::prop_assert_eq!(tag_end(&text), tag_end_reference(&text));
            for needle in ["href", "src", "action", "background", "\"", "é"] {
                proptest::prop_assert_eq!(
                    find_bytes(text.as_bytes(), needle.as_bytes()),
                    text.find(needle)
                );
            }
        }
    }

    #[test]
    fn strips_tags_keeps_links() {
        let h = html_to_text(
            "<html><head><style>p{color:red}</style><script>var x='<b>';</script></head>\
             <body><p>Cheap V<b></b>iagra &amp; more&nbsp;here<!-- junk -->now</p>\
             <a HREF=\"http://spam.example/buy?a=1&amp;b=2\">click</a><img src='http://img.example/x.gif'>\
             <td>a</td><td>b</td></body></html>",
        );
        assert_eq!(
            h.text.split_whitespace().collect::<Vec<_>>(),
            ["Cheap", "Viagra", "&", "more", "herenow", "click", "a", "b"]
        );
        assert_eq!(
            h.urls,
            [
                "http://spam.example/buy?a=1&b=2",
                "http://img.example/x.gif"
            ]
        );
        assert_eq!(
            h.tags,
            [
                "a", "b", "body", "head", "html", "img", "p", "script", "style", "td"
            ]
        );
    }

    #[test]
    fn comments_end_where_html5_ends_them() {
        let text = |html| html_to_text(html).text;
        // Empty comments: once read as comments that only a later `-->` closes, hiding the
        // rest of the part.
        assert_eq!(text("vi<!-->agra"), "viagra");
        assert_eq!(text("vi<!--->agra"), "viagra");
        assert_eq!(text("vi<!---->agra<!-- x -- y -->!"), "viagra!");
        assert_eq!(text("vi<!-- x --!>agra -->"), "viagra -->");
        assert_eq!(text("a<!-- x --->b<!--x--"), "ab");
    }

    #[test]
    fn breaking_tags_are_sorted_for_their_binary_search() {
        assert!(BREAKING_TAGS.is_sorted());
    }

    #[test]
    fn unknown_tags_and_bogus_comments_vanish_as_inline_ones_do() {
        let text = |html| html_to_text(html).text;
        for html in [
            "vi<x>agra",
            "vi</x>agra",
            "v<ins>i</ins>agra",
            "vi<o:p></o:p>agra",
            "vi<st1:place>agra",
            "vi<!x>agra",
            "vi<?x>agra",
            "vi<span>agra",
            "vi<p-x>agra",
            "vi<br:x>agra",
            "vi</td.x>agra",
            "vi<script-x>agra",
        ] {
            assert_eq!(text(html), "viagra", "{html}");
        }
        // A bogus comment ends at its first `>`, quotes or not.
        for html in ["a<!x '>b", "a<?x \">b", "a</3 '>b", "a</>b"] {
            assert_eq!(text(html), "ab", "{html}");
        }
        for html in [
            "vi<br>agra",
            "vi</p>agra",
            "vi<td>agra",
            "vi<img src=x>agra",
        ] {
            assert_eq!(text(html), "vi agra", "{html}");
        }
    }

    #[test]
    fn unterminated_and_stray_brackets() {
        assert_eq!(html_to_text("a < b and c<d").text, "a < b and c");
        assert_eq!(html_to_text("x <!-- never closed").text, "x ");
        assert_eq!(html_to_text("<a href=").urls, Vec::<String>::new());
    }

    #[test]
    fn attribute_values_never_overlap_so_url_bytes_stay_linear() {
        assert_eq!(
            html_to_text("<a href=\"http://x.example/?href=y\" href=href=href=z>").urls,
            ["http://x.example/?href=y", "href=href=z"]
        );
        // Once each value was searched again for every attribute name inside it: 20 KB of
        // `href=` took seconds and made a URL of every suffix, quadratic bytes.
        let tag = format!("<a {}>", "href=".repeat(20_000));
        let urls = html_to_text(&tag).urls;
        assert!(urls.iter().map(String::len).sum::<usize>() <= tag.len());
        assert_eq!(urls.len(), 1);
    }
}
