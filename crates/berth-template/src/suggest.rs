//! "Did you mean" suggestions for misspelled keys and names.

/// Most names compared for one suggestion.
const MAX_CANDIDATES: usize = 2_000;

/// Optimal string alignment distance (a swap of two neighbours is one edit), bounded work.
fn distance(a: &str, b: &str) -> usize {
    berth_doc::edit_distance(a, b)
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
