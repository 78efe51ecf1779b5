//! "Did you mean" suggestions for misspelled keys and names.

/// Most names compared for one suggestion.
const MAX_CANDIDATES: usize = 2_000;

/// Levenshtein distance in characters, bounded work: inputs are truncated to 64 characters.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate to `name`, if it is close enough to be a likely typo.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = (len / 3).max(1);
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        // Bounded work however many names a template declares.
        .take(MAX_CANDIDATES)
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| (distance(&lower, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|(da, a), (db, b)| da.cmp(db).then_with(|| a.cmp(b)))
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)` or the empty string.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(name, candidates).map_or_else(String::new, |c| format!(" (did you mean `{c}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(closest("demand", ["demands", "locations"]), Some("demands"));
        assert_eq!(closest("xyz", ["demands", "locations"]), None);
        assert_eq!(
            did_you_mean("optimisation", ["optimization"]),
            " (did you mean `optimization`?)"
        );
    }
}
