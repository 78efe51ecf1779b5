//! Reading templates from disk: `-p name=value` overrides and the `get_file` map.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Parses `name=value`; the value is read as a YAML scalar or flow value (`250`, `true`, `[a, b]`).
pub fn parse_param(s: &str) -> Result<(String, serde_json::Value), String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(format!("expected name=value, found `{s}`"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("expected a parameter name before `=` in `{s}`"));
    }
    let json = match berth_doc::parse(value) {
        Ok(v) if !v.is_null() || value.trim().is_empty() => v.to_json(),
        _ => serde_json::Value::String(value.to_owned()),
    };
    Ok((name.to_owned(), json))
}

/// Collects the parameter overrides given on the command line.
pub fn params(list: &[(String, serde_json::Value)]) -> BTreeMap<String, serde_json::Value> {
    list.iter().cloned().collect()
}

/// A template's text and the files its `get_file` calls name, read relative to `files_dir`
/// (default: the template's directory). URLs are left out: the template crate reports them.
pub struct Loaded {
    pub text: String,
    pub files: BTreeMap<String, String>,
}

pub fn read_template(path: &Path, files_dir: Option<&Path>) -> Result<Loaded> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read template {}", path.display()))?;
    let base: PathBuf = match files_dir {
        Some(d) => d.to_path_buf(),
        None => path.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let mut files = BTreeMap::new();
    // A template that does not parse has no file references; validation reports why.
    if let Ok(doc) = berth_doc::parse(&text) {
        for name in file_references(&doc) {
            if name.contains("://") {
                continue;
            }
            let full = base.join(&name);
            match std::fs::read_to_string(&full) {
                Ok(content) => {
                    files.insert(name, content);
                }
                // Missing files are reported by validation with the template position.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => bail!("cannot read {} (named by get_file): {e}", full.display()),
            }
        }
    }
    Ok(Loaded { text, files })
}

/// Every string argument of a `get_file` anywhere in the document.
fn file_references(doc: &berth_doc::Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![doc];
    while let Some(v) = todo.pop() {
        match &v.kind {
            berth_doc::Kind::Seq(items) => todo.extend(items.iter()),
            berth_doc::Kind::Map(m) => {
                for (k, val) in m.iter() {
                    if k.name == "get_file"
                        && let Some(s) = val.as_str()
                    {
                        out.push(s.to_owned());
                    }
                    todo.push(val);
                }
            }
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_typed_like_yaml() {
        assert_eq!(
            parse_param("max=250").unwrap(),
            ("max".into(), serde_json::json!(250))
        );
        assert_eq!(parse_param("on=true").unwrap().1, serde_json::json!(true));
        assert_eq!(
            parse_param("l=[a, b]").unwrap().1,
            serde_json::json!(["a", "b"])
        );
        assert_eq!(parse_param("s=dfw1").unwrap().1, serde_json::json!("dfw1"));
        assert_eq!(parse_param("e=").unwrap().1, serde_json::json!(null));
        assert_eq!(parse_param("x=a=b").unwrap().1, serde_json::json!("a=b"));
        assert!(
            parse_param("novalue")
                .unwrap_err()
                .contains("expected name=value")
        );
        assert!(parse_param("=3").unwrap_err().contains("parameter name"));
    }

    #[test]
    fn file_references_are_found_anywhere() {
        let doc = berth_doc::parse(
            "a: {get_file: x.yaml}\nb: [{c: {get_file: y.yaml}}, {get_file: x.yaml}]\n",
        )
        .unwrap();
        assert_eq!(
            file_references(&doc),
            vec!["x.yaml".to_owned(), "y.yaml".to_owned()]
        );
    }
}
