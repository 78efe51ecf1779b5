//! Writes straight to their partition's holder in a cluster: the partition map
//! (`GET /v1/cluster`) is cached per daemon URL under `$XDG_CACHE_HOME/berth/` (else
//! `~/.cache/berth/`). A write goes to the holder the cached map names, else to `--url`, which
//! forwards it. An answer saying it was forwarded (`x-berth-forwarded-to`) or a 503 re-reads
//! the map for the next call, so a single daemon never costs a map request.

use std::path::PathBuf;

use berth_api::cluster::{ClusterView, FORWARDED_TO};
use serde_json::Value;

/// The cached map of the daemon at `url`.
pub struct Routes {
    url: String,
    cache: Option<PathBuf>,
    map: Option<ClusterView>,
}

impl Routes {
    /// Loads the map cached for `url`, if any (a cache that cannot be read is no cache).
    pub fn load(url: &str) -> Routes {
        let url = url.trim_end_matches('/').to_owned();
        let cache = cache_dir().map(|d| d.join(format!("cluster-{:016x}.json", fnv(&url))));
        let map = cache
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok());
        Routes { url, cache, map }
    }

    /// The base URL for a write with `body`: its holder by the map, else `--url`.
    pub fn base(&self, body: &Value) -> String {
        self.map
            .as_ref()
            .and_then(|m| m.route(body))
            .map_or_else(|| self.url.clone(), |u| u.trim_end_matches('/').to_owned())
    }

    /// Whether an answer shows the map stale: relayed by a non-holder, or a 503.
    pub fn stale(status: u16, headers: &reqwest::header::HeaderMap) -> bool {
        status == 503 || headers.contains_key(FORWARDED_TO)
    }

    /// Stores `map` as the cache for the next call; `None` forgets it.
    pub fn store(&mut self, map: Option<ClusterView>) {
        if let Some(path) = &self.cache {
            let _ = match &map {
                Some(m) => std::fs::create_dir_all(path.parent().unwrap_or(path.as_path()))
                    .and_then(|()| std::fs::write(path, serde_json::to_vec(m).unwrap_or_default())),
                None => std::fs::remove_file(path),
            };
        }
        self.map = map;
    }

    /// The daemon URL given on the command line.
    pub fn url(&self) -> &str {
        &self.url
    }
}

fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("berth"))
}

/// FNV-1a of `text`: a stable file name per daemon URL.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_map_routes_and_no_map_goes_to_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Routes {
            url: "http://a:1".into(),
            cache: Some(dir.path().join("berth/cluster-x.json")),
            map: None,
        };
        let body = serde_json::json!({"zone": "z2"});
        assert_eq!(r.base(&body), "http://a:1");
        let map: ClusterView = serde_json::from_value(serde_json::json!({
            "node": "n1", "partition_key": "zone",
            "partitions": [{"partition": "z2", "holder": "n2", "url": "http://b:2/", "token": 3,
                "expires_at": "2030-01-01T00:00:00.000Z"}]
        }))
        .unwrap();
        r.store(Some(map.clone()));
        assert_eq!(r.base(&body), "http://b:2");
        assert_eq!(r.base(&serde_json::json!({"zone": "z9"})), "http://a:1");
        let cached: ClusterView = serde_json::from_slice(
            &std::fs::read(dir.path().join("berth/cluster-x.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(cached, map);
        r.store(None);
        assert!(!dir.path().join("berth/cluster-x.json").exists());
        assert_eq!(fnv("http://a:1"), fnv("http://a:1"));
        assert_ne!(fnv("http://a:1"), fnv("http://a:2"));
    }
}
