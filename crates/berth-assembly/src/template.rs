//! Property value templates: literal text with `${prop}` and `${owner.prop}` references.

use std::fmt;

/// One piece of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// Literal text.
    Lit(String),
    /// `${name}` (owner `None`) or `${owner.name}`.
    Ref {
        /// `instance`, `source`, `target`, a component or a reference; `None` for a top-level property.
        owner: Option<String>,
        /// The property name.
        name: String,
    },
}

/// A parsed property value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template(pub Vec<Seg>);

impl Template {
    /// Parses text; a `$` not followed by `{` is literal.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut segs = Vec::new();
        let mut lit = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${") {
            lit.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(end) = after.find('}') else {
                return Err(format!("unterminated `${{` in `{text}`; expected `}}`"));
            };
            let inner = after[..end].trim();
            let parts: Vec<&str> = inner.split('.').collect();
            let valid = |p: &str| {
                !p.is_empty()
                    && !p
                        .chars()
                        .any(|c| c.is_whitespace() || matches!(c, '$' | '{' | '}'))
            };
            if !parts.iter().all(|p| valid(p)) || parts.len() > 2 {
                return Err(format!(
                    "malformed reference `${{{inner}}}`; expected `${{property}}` or `${{name.property}}`"
                ));
            }
            if !lit.is_empty() {
                segs.push(Seg::Lit(std::mem::take(&mut lit)));
            }
            let (owner, name) = match parts.as_slice() {
                [n] => (None, (*n).to_owned()),
                [o, n] => (Some((*o).to_owned()), (*n).to_owned()),
                _ => return Err(format!("malformed reference `${{{inner}}}`")),
            };
            segs.push(Seg::Ref { owner, name });
            rest = &after[end + 1..];
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            segs.push(Seg::Lit(lit));
        }
        Ok(Template(segs))
    }

    /// The literal text if the template has no references.
    pub fn as_literal(&self) -> Option<String> {
        self.0
            .iter()
            .map(|s| match s {
                Seg::Lit(t) => Some(t.as_str()),
                Seg::Ref { .. } => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.concat())
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.0 {
            match s {
                Seg::Lit(t) => f.write_str(t)?,
                Seg::Ref { owner: None, name } => write!(f, "${{{name}}}")?,
                Seg::Ref {
                    owner: Some(o),
                    name,
                } => write!(f, "${{{o}.{name}}}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn parses_references_and_literals() {
        let t = Template::parse("srv-${instance.name}-${ zone }$x").unwrap();
        assert_eq!(
            t.0,
            vec![
                Seg::Lit("srv-".into()),
                Seg::Ref {
                    owner: Some("instance".into()),
                    name: "name".into()
                },
                Seg::Lit("-".into()),
                Seg::Ref {
                    owner: None,
                    name: "zone".into()
                },
                Seg::Lit("$x".into()),
            ]
        );
        assert_eq!(
            Template::parse("m1.small").unwrap().as_literal().as_deref(),
            Some("m1.small")
        );
        assert_eq!(t.as_literal(), None);
    }

    #[test]
    fn refuses_malformed_references() {
        for bad in ["${", "${}", "${a.b.c}", "${a b}", "x${.y}", "${a.}"] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn display_round_trips(parts in proptest::collection::vec(("[a-z-]{0,5}", proptest::option::of("[a-z_]{1,5}"), "[a-z-]{1,5}"), 0..5)) {
            let text: String = parts.iter().map(|(lit, owner, name)| match owner {
                Some(o) => format!("{lit}${{{o}.{name}}}"),
                None => format!("{lit}${{{name}}}"),
            }).collect();
            let t = Template::parse(&text).unwrap();
            prop_assert_eq!(t.to_string(), text);
        }
    }
}
