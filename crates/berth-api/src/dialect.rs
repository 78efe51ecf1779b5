//! The three wire dialects Berth answers in, and which routes speak which.

/// Which wire dialect an error is rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `application/problem+json` (RFC 9457).
    Problem,
    /// ONAP HAS: `{"error_message": {"explanation", "code", "error": {"message", "type"},
    /// "title"}}`.
    Has,
    /// Promise shim: `{"result": "conflict"|"error", "message", "offers"?}`.
    Promise,
}

impl Dialect {
    /// The dialect of the routes under `path`: HAS for `/` and `/v1/...`, Promise for the
    /// Promise operations and subscriptions, Problem otherwise.
    pub fn of_path(path: &str) -> Dialect {
        const PROMISE: &[&str] = &[
            "/add-provider",
            "/create-reservation",
            "/update-reservation",
            "/cancel-reservation",
            "/query-reservation",
            "/create-instance",
            "/destroy-instance",
            "/increase-capacity",
            "/decrease-capacity",
            "/query-capacity",
        ];
        if path == "/" || path == "/v1" || path.starts_with("/v1/") {
            Dialect::Has
        } else if PROMISE.contains(&path)
            || path.starts_with("/capacity/")
            || path.starts_with("/reservation/")
        {
            Dialect::Promise
        } else {
            Dialect::Problem
        }
    }
}
