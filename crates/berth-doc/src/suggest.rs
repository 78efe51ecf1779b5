//! "Did you mean" for misspelt keys and names: the nearest known name by edit distance.

/// Most names compared for one suggestion (bounded work on any input).
const MAX_CANDIDATES: usize = 4_000;

/// Optimal string alignment distance (an adjacent transposition counts one), in characters;
/// inputs are cut at 64 characters to bound the work.
#[must_use]
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The candidate nearest to `name` ignoring case, within one edit per three characters (at
/// least one); ties go to the earlier candidate. `None` when nothing is that close, or when
/// `name` is itself a candidate.
#[must_use]
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let len = lower.chars().count();
    let limit = (len / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates.into_iter().take(MAX_CANDIDATES) {
        if c == name {
            return None;
        }
        if c.chars().count().abs_diff(len) > limit {
            continue;
        }
        let d = edit_distance(&lower, &c.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_within_the_limit() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("vcpsu", "vcpus"), 1);
        assert_eq!(
            closest(
                "OS::Nova::Servr",
                ["OS::Nova::ServerGroup", "OS::Nova::Server"]
            ),
            Some("OS::Nova::Server")
        );
        assert_eq!(closest("Resources", ["resources"]), Some("resources"));
        assert_eq!(closest("xyz", ["resources", "groups"]), None);
        assert_eq!(closest("groups", ["resources", "groups"]), None);
        assert_eq!(closest("", ["a"]), Some("a"));
    }
}
