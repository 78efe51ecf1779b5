//! Finding the YAML flow collection (`[` or `{`) a syntax error is really about: the parser
//! gives up where the text stops making sense, often lines after the bracket left open.

use crate::Pos;

/// The innermost flow collection opened before `at` and never closed in `text`, as its
/// opening character and position. A light scan: quoted scalars and comments are skipped,
/// and in block context only a bracket that starts a value opens a flow collection.
pub(crate) fn unclosed_before(text: &str, at: Pos) -> Option<(char, Pos)> {
    let mut open: Vec<(char, Pos)> = Vec::new();
    let mut unclosed: Vec<(char, Pos)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let mut prev = ' ';
        let mut chars = line.chars().enumerate().peekable();
        while let Some((c, ch)) = chars.next() {
            let pos = Pos {
                line: line_no,
                column: u32::try_from(c + 1).unwrap_or(u32::MAX),
            };
            let at_value_start = prev.is_whitespace() || matches!(prev, '[' | '{' | ',' | ':');
            match ch {
                '#' if prev.is_whitespace() => break,
                '\'' | '"' if at_value_start => {
                    // Skip the quoted scalar (on this line; multi-line quotes are rare here).
                    let mut escaped = false;
                    for (_, q) in chars.by_ref() {
                        if ch == '"' && q == '\\' && !escaped {
                            escaped = true;
                            continue;
                        }
                        if q == ch && !escaped {
                            break;
                        }
                        escaped = false;
                    }
                }
                '[' | '{' if !open.is_empty() || at_value_start || prev == '-' || prev == '?' => {
                    open.push((ch, pos));
                }
                ']' | '}' if !open.is_empty() => {
                    if let Some(o) = open.pop()
                        && (o.0 == '[') != (ch == ']')
                    {
                        unclosed.push(o);
                    }
                }
                _ => {}
            }
            prev = ch;
        }
    }
    unclosed.extend(open);
    unclosed
        .into_iter()
        .filter(|(_, p)| (p.line, p.column) <= (at.line, at.column))
        .max_by_key(|(_, p)| (p.line, p.column))
}

/// The note a syntax error at `at` gets when a flow collection before it is left open.
pub(crate) fn note(text: &str, at: Pos) -> String {
    match unclosed_before(text, at) {
        Some((ch, p)) => {
            let (kind, close) = if ch == '[' {
                ("sequence", ']')
            } else {
                ("mapping", '}')
            };
            format!(
                "; the flow {kind} `{ch}` opened at {}:{} is never closed (expected `{close}`)",
                p.line, p.column
            )
        }
        None => String::new(),
    }
}
