//! Intrinsic functions: `get_param` and `get_file`, resolved in every section of a template.
//!
//! Resolution turns the parsed document into one without intrinsics. Each failure is reported
//! once, where it occurs; the failed node becomes null and its path is "poisoned" so that the
//! typed reader does not pile a type error on top of it. Substitution is bounded in nodes and
//! depth, so parameters referring to each other cannot blow up (a "billion laughs" by
//! `get_param`).

use std::collections::{BTreeMap, HashMap, HashSet};

use berth_doc::{Diagnostics, Key, Kind, Map, Path, Pos, Value};

use crate::suggest::did_you_mean;

/// Most nodes substituted by `get_param` in one template.
pub(crate) const MAX_SUBSTITUTED_NODES: usize = 1_000_000;
/// Deepest nesting a substituted value may produce.
pub(crate) const MAX_DEPTH: usize = 256;

/// The intrinsic function names.
pub(crate) const FUNCTIONS: [&str; 2] = ["get_param", "get_file"];

/// A document with every intrinsic resolved.
pub(crate) struct Resolved {
    /// The root, same shape as the input with calls replaced by their values.
    pub root: Value,
    /// Resolved parameter values in declaration order (overrides applied, undeclared ones last).
    pub parameters: Vec<(String, Value)>,
    /// Paths whose value failed to resolve (already reported).
    pub poisoned: HashSet<Path>,
}

enum State<'a> {
    Raw(&'a Value),
    Resolving,
    Done(Option<Value>),
}

struct Resolver<'a> {
    params: HashMap<String, State<'a>>,
    order: Vec<String>,
    stack: Vec<String>,
    files: &'a BTreeMap<String, String>,
    diags: &'a mut Diagnostics,
    poisoned: HashSet<Path>,
    substituted: usize,
}

/// Resolves every intrinsic of `root` (a mapping; anything else is returned as is).
pub(crate) fn resolve(
    root: &Value,
    overrides: &BTreeMap<String, serde_json::Value>,
    files: &BTreeMap<String, String>,
    diags: &mut Diagnostics,
) -> Resolved {
    let Some(top) = root.as_map() else {
        return Resolved {
            root: root.clone(),
            parameters: Vec::new(),
            poisoned: HashSet::new(),
        };
    };
    let mut r = Resolver {
        params: HashMap::new(),
        order: Vec::new(),
        stack: Vec::new(),
        files,
        diags,
        poisoned: HashSet::new(),
        substituted: 0,
    };
    let params_path = Path::root().key("parameters");
    if let Some(declared) = top.get("parameters").and_then(Value::as_map) {
        for (k, v) in declared.iter() {
            r.params.insert(k.name.clone(), State::Raw(v));
            r.order.push(k.name.clone());
        }
    }
    for (name, json) in overrides {
        if !r.params.contains_key(name) {
            r.order.push(name.clone());
            r.diags.warning(
                &params_path.key(name),
                Pos::UNKNOWN,
                format!(
                    "parameter `{name}` is given at instantiation but not declared in the template"
                ),
            );
        }
        // Overrides are literal values: intrinsics inside them are not evaluated.
        r.params
            .insert(name.clone(), State::Done(Some(Value::from_json(json))));
    }
    let order = r.order.clone();
    let mut parameters = Vec::with_capacity(order.len());
    for name in &order {
        let v = r
            .param(name, &params_path.key(name))
            .unwrap_or_else(|| Value::new(Kind::Null));
        parameters.push((name.clone(), v));
    }
    let mut out = Map::default();
    for (k, v) in top.iter() {
        let path = Path::root().key(&k.name);
        let value = if k.name == "parameters" && v.as_map().is_some() {
            let mut m = Map::default();
            for (name, pv) in &parameters {
                let pos = v
                    .as_map()
                    .and_then(|m| m.entry(name))
                    .map_or(Pos::UNKNOWN, |(k, _)| k.pos);
                m.insert(
                    Key {
                        name: name.clone(),
                        pos,
                    },
                    pv.clone(),
                );
            }
            Value {
                kind: Kind::Map(m),
                pos: v.pos,
            }
        } else {
            r.value(v, &path, 1)
        };
        out.insert(k.clone(), value);
    }
    Resolved {
        root: Value {
            kind: Kind::Map(out),
            pos: root.pos,
        },
        parameters,
        poisoned: r.poisoned,
    }
}

/// The intrinsic called by a mapping, if any: the name and its argument.
fn call_of(m: &Map) -> Option<(&Key, &Value)> {
    m.iter().find(|(k, _)| FUNCTIONS.contains(&k.name.as_str()))
}

/// Nesting depth and node count of a value, computed without recursion.
fn shape(v: &Value) -> (usize, usize) {
    let mut nodes = 0usize;
    let mut deepest = 0usize;
    let mut todo = vec![(v, 1usize)];
    while let Some((v, d)) = todo.pop() {
        nodes += 1;
        deepest = deepest.max(d);
        match &v.kind {
            Kind::Seq(items) => todo.extend(items.iter().map(|i| (i, d + 1))),
            Kind::Map(m) => todo.extend(m.iter().map(|(_, i)| (i, d + 1))),
            _ => {}
        }
    }
    (deepest, nodes)
}

impl Resolver<'_> {
    fn fail(&mut self, path: &Path, pos: Pos, msg: String) -> Value {
        self.diags.error(path, pos, msg);
        self.poisoned.insert(path.clone());
        Value {
            kind: Kind::Null,
            pos,
        }
    }

    /// Resolves `v` found at `path`, `depth` levels below the root.
    fn value(&mut self, v: &Value, path: &Path, depth: usize) -> Value {
        match &v.kind {
            Kind::Map(m) => {
                if let Some((key, arg)) = call_of(m) {
                    if m.len() != 1 {
                        let msg = format!(
                            "`{}` must be the only key of its mapping; found {} keys",
                            key.name,
                            m.len()
                        );
                        return self.fail(path, key.pos, msg);
                    }
                    let name = key.name.clone();
                    let before = self.diags.len();
                    let out = self.call(&name, arg, path, v.pos, depth);
                    if self.diags.len() != before {
                        // Whatever the call failed on, the value here is unusable: say so once.
                        self.poisoned.insert(path.clone());
                    }
                    return out;
                }
                let mut out = Map::default();
                for (k, item) in m.iter() {
                    let resolved = self.value(item, &path.key(&k.name), depth + 1);
                    out.insert(k.clone(), resolved);
                }
                Value {
                    kind: Kind::Map(out),
                    pos: v.pos,
                }
            }
            Kind::Seq(items) => {
                let out = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.value(item, &path.index(i), depth + 1));
                Value {
                    kind: Kind::Seq(out.collect()),
                    pos: v.pos,
                }
            }
            _ => v.clone(),
        }
    }

    fn call(&mut self, func: &str, arg: &Value, path: &Path, pos: Pos, depth: usize) -> Value {
        let arg_path = path.key(func);
        if func == "get_file" {
            if arg.as_map().is_some_and(|m| call_of(m).is_some()) {
                return self.fail(
                    &arg_path,
                    arg.pos,
                    "get_file takes a static path or URL; found a function call".to_owned(),
                );
            }
            return self.get_file(arg, &arg_path, pos);
        }
        let before = self.diags.len();
        let arg = self.value(arg, &arg_path, depth + 1);
        if self.diags.len() != before {
            // A nested call in the arguments failed and was reported.
            return Value {
                kind: Kind::Null,
                pos,
            };
        }
        let (name, steps): (String, &[Value]) = match &arg.kind {
            Kind::Str(s) => (s.clone(), &[]),
            Kind::Seq(items) => match items.split_first() {
                Some((first, rest)) if first.as_str().is_some() => {
                    (first.as_str().unwrap_or_default().to_owned(), rest)
                }
                _ => {
                    return self.fail(
                        &arg_path,
                        arg.pos,
                        "get_param list must start with a parameter name; expected [name, key-or-index, ...]"
                            .to_owned(),
                    );
                }
            },
            _ => {
                let msg = format!(
                    "get_param takes a parameter name or a list [name, key-or-index, ...]; found a {}",
                    arg.type_name()
                );
                return self.fail(&arg_path, arg.pos, msg);
            }
        };
        let Some(mut current) = self.param_at(&name, path, arg.pos) else {
            self.poisoned.insert(path.clone());
            return Value {
                kind: Kind::Null,
                pos,
            };
        };
        let mut walked = name.clone();
        for (i, step) in steps.iter().enumerate() {
            let step_path = arg_path.index(i + 1);
            match self.step(&current, step, &walked) {
                Ok(next) => current = next,
                Err(msg) => return self.fail(&step_path, step.pos, msg),
            }
            walked.push_str(&format!("[{}]", step.scalar_text().unwrap_or_default()));
        }
        let (d, nodes) = shape(&current);
        self.substituted = self.substituted.saturating_add(nodes);
        if self.substituted > MAX_SUBSTITUTED_NODES {
            let msg = format!(
                "parameter substitution expands to more than {MAX_SUBSTITUTED_NODES} nodes"
            );
            return self.fail(path, pos, msg);
        }
        if depth + d > MAX_DEPTH {
            let msg = format!("parameter substitution nests deeper than {MAX_DEPTH} levels");
            return self.fail(path, pos, msg);
        }
        current.pos = pos;
        current
    }

    /// One navigation step of the `get_param` list form.
    fn step(&self, current: &Value, step: &Value, walked: &str) -> Result<Value, String> {
        match &current.kind {
            Kind::Map(m) => {
                let Some(key) = step.scalar_text().filter(|_| !step.is_null()) else {
                    return Err(format!(
                        "expected a key to select from `{walked}`; found a {}",
                        step.type_name()
                    ));
                };
                m.get(&key).cloned().ok_or_else(|| {
                    let names: Vec<&str> = m.iter().map(|(k, _)| k.name.as_str()).collect();
                    format!(
                        "key `{key}` not found in `{walked}`; expected one of {}",
                        if names.is_empty() {
                            "(none: it is empty)".to_owned()
                        } else {
                            names.join(", ")
                        }
                    )
                })
            }
            Kind::Seq(items) => {
                let index = match &step.kind {
                    Kind::Int(i) => usize::try_from(*i).ok(),
                    Kind::Str(s) => s.parse::<usize>().ok(),
                    _ => None,
                };
                let Some(index) = index else {
                    return Err(format!(
                        "expected a zero-based index into list `{walked}`; found `{}`",
                        step.scalar_text()
                            .unwrap_or_else(|| step.type_name().to_owned())
                    ));
                };
                items.get(index).cloned().ok_or_else(|| {
                    format!(
                        "index {index} out of range: `{walked}` has {} items; expected 0..{}",
                        items.len(),
                        items.len()
                    )
                })
            }
            _ => Err(format!(
                "cannot select `{}` from `{walked}`: it is a {}, not a mapping or list",
                step.scalar_text().unwrap_or_default(),
                current.type_name()
            )),
        }
    }

    /// The resolved value of parameter `name`, reporting an undefined name at `path`.
    fn param_at(&mut self, name: &str, path: &Path, pos: Pos) -> Option<Value> {
        if !self.params.contains_key(name) {
            let names: Vec<&str> = self.order.iter().map(String::as_str).collect();
            let msg = if names.is_empty() {
                format!("undefined parameter `{name}`; the template declares no parameters")
            } else {
                format!(
                    "undefined parameter `{name}`{}",
                    did_you_mean(name, names.iter().copied())
                )
            };
            self.diags.error(&path.key("get_param"), pos, msg);
            return None;
        }
        if matches!(self.params.get(name), Some(State::Resolving)) {
            let start = self.stack.iter().position(|n| n == name).unwrap_or(0);
            let mut cycle: Vec<&str> = self.stack[start..].iter().map(String::as_str).collect();
            cycle.push(name);
            let msg = format!("parameter cycle: {}", cycle.join(" -> "));
            self.diags.error(&path.key("get_param"), pos, msg);
            return None;
        }
        self.param(name, &Path::root().key("parameters").key(name))
    }

    /// Resolves parameter `name` (declared at `path`) once; `None` when it failed.
    fn param(&mut self, name: &str, path: &Path) -> Option<Value> {
        match self.params.get(name) {
            None => None,
            Some(State::Done(v)) => v.clone(),
            Some(State::Resolving) => None,
            Some(State::Raw(raw)) => {
                let raw = *raw;
                self.params.insert(name.to_owned(), State::Resolving);
                self.stack.push(name.to_owned());
                let before = self.diags.len();
                let v = self.value(raw, path, 2);
                self.stack.pop();
                let result = (self.diags.len() == before).then_some(v);
                self.params
                    .insert(name.to_owned(), State::Done(result.clone()));
                result
            }
        }
    }

    fn get_file(&mut self, arg: &Value, path: &Path, pos: Pos) -> Value {
        let Some(key) = arg.as_str() else {
            let msg = format!(
                "get_file takes a path or URL string; found a {}",
                arg.type_name()
            );
            return self.fail(path, arg.pos, msg);
        };
        if let Some(content) = self.files.get(key) {
            return Value {
                kind: Kind::Str(content.clone()),
                pos,
            };
        }
        let remote = key.contains("://") && !key.starts_with("file://");
        let msg = if remote {
            format!(
                "cannot fetch `{key}`: remote files are not fetched; supply its content in the files map"
            )
        } else if self.files.is_empty() {
            format!("file `{key}` not found: no files were supplied with the template")
        } else {
            format!(
                "file `{key}` not found{}",
                did_you_mean(key, self.files.keys().map(String::as_str))
            )
        };
        self.fail(path, arg.pos, msg)
    }
}
