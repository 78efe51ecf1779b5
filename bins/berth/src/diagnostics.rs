//! Diagnostics in the rustc style (codespan-reporting): the source line with a caret under
//! the spot, line:column, the field path; color only when asked (a terminal, no NO_COLOR).

use std::io::IsTerminal as _;
use std::ops::Range;

use berth_doc::{Diagnostic, Severity};
use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config, termcolor};

/// Whether a stream should get color: only a terminal, and not when `NO_COLOR` is set and
/// not empty (no-color.org) or `TERM` is `dumb`.
pub fn color_allowed(is_terminal: bool, env: impl Fn(&str) -> Option<String>) -> bool {
    is_terminal
        && env("NO_COLOR").is_none_or(|v| v.is_empty())
        && env("TERM").is_none_or(|t| t != "dumb")
}

/// Whether stderr should get color.
pub fn stderr_color() -> bool {
    color_allowed(std::io::stderr().is_terminal(), |k| std::env::var(k).ok())
}

/// Whether stdout should get color.
pub fn stdout_color() -> bool {
    color_allowed(std::io::stdout().is_terminal(), |k| std::env::var(k).ok())
}

/// Prints diagnostics on stderr (color when stderr is a terminal).
pub fn eprint(name: &std::path::Path, source: &str, diags: &[Diagnostic]) {
    if !diags.is_empty() {
        let name = name.display().to_string();
        eprint!("{}", render(&name, source, diags, stderr_color()));
    }
}

/// Renders every diagnostic of `source` (named `name`), in order.
pub fn render(name: &str, source: &str, diags: &[Diagnostic], color: bool) -> String {
    let file = SimpleFile::new(name, source);
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let mut buf = if color {
        termcolor::Buffer::ansi()
    } else {
        termcolor::Buffer::no_color()
    };
    for d in diags {
        let report = to_report(source, d);
        if term::emit_to_write_style(&mut buf, &config, &file, &report).is_err() {
            // A span the file cannot show (cannot happen: spans are clamped): the plain line.
            buf = push_plain(buf, name, d);
        }
    }
    String::from_utf8_lossy(buf.as_slice()).into_owned()
}

fn push_plain(mut buf: termcolor::Buffer, name: &str, d: &Diagnostic) -> termcolor::Buffer {
    use std::io::Write as _;
    let _ = writeln!(buf, "{name}: {}: {d}", d.severity);
    buf
}

fn to_report(source: &str, d: &Diagnostic) -> Report<()> {
    let report = match d.severity {
        Severity::Error => Report::error(),
        Severity::Warning => Report::warning(),
    }
    .with_message(&d.message);
    match span(source, d.line, d.column) {
        Some(range) => {
            let label = Label::primary((), range);
            let label = if d.path.is_empty() {
                label
            } else {
                label.with_message(format!("at `{}`", d.path))
            };
            report.with_labels(vec![label])
        }
        // No position (values built from JSON objects): the path says where.
        None if !d.path.is_empty() => report.with_notes(vec![format!("at `{}`", d.path)]),
        None => report,
    }
}

/// The bytes of the token at 1-based `line`:`column` (columns in characters): a quoted
/// string to its closing quote, anything else up to a flow separator, a comment or the end
/// of the line. `None` when the position is unknown or outside the text.
fn span(source: &str, line: u32, column: u32) -> Option<Range<usize>> {
    if line == 0 || column == 0 {
        return None;
    }
    let start_of_line = if line == 1 {
        0
    } else {
        source
            .match_indices('\n')
            .nth(line as usize - 2)
            .map(|(i, _)| i + 1)?
    };
    let text = &source[start_of_line..];
    let text = &text[..text.find('\n').unwrap_or(text.len())];
    let text = text.strip_suffix('\r').unwrap_or(text);
    let (offset, _) = text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
        .nth(column as usize - 1)?;
    let rest = &text[offset..];
    let len = match rest.chars().next() {
        None => 0,
        Some(q @ ('"' | '\'')) => rest[1..].find(q).map_or(rest.len(), |i| i + 2),
        Some('{' | '[') => {
            let mut depth = 0i32;
            rest.char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' | '[' => 1,
                        '}' | ']' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i + 1)
        }
        Some(_) => {
            let end = rest
                .char_indices()
                .find(|&(i, c)| {
                    let after = rest[i + c.len_utf8()..].chars().next();
                    matches!(c, ',' | ']' | '}')
                        || (c == '#' && rest[..i].ends_with(' '))
                        || (c == ':' && after.is_none_or(char::is_whitespace))
                })
                .map_or(rest.len(), |(i, _)| i);
            rest[..end].trim_end().len()
        }
    };
    let start = start_of_line + offset;
    Some(start..start + len.max(usize::from(offset < text.len())))
}

#[cfg(test)]
mod tests;
