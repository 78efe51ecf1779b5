//! Error bodies: RFC 9457 problem+json by default, HAS-shaped on HAS routes, Promise-shaped
//! (`result: conflict|error`) on Promise routes. Internal details are logged, not sent.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use berth_service::{ErrorKind, ServiceError};
use serde_json::json;

/// Which wire dialect an error is rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `application/problem+json` (RFC 9457).
    Problem,
    /// ONAP HAS: `{"title", "explanation"}`.
    Has,
    /// Promise shim: `{"result": "conflict"|"error", "message", "offers"?}`.
    Promise,
}

/// An error on its way to the client.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Detail sent to the client.
    pub detail: String,
    /// Offers of a capacity conflict (Promise routes).
    pub offers: Option<serde_json::Value>,
    /// How to render it.
    pub dialect: Dialect,
}

impl ApiError {
    /// An error with `status` and `detail`.
    pub fn new(status: StatusCode, detail: impl Into<String>, dialect: Dialect) -> ApiError {
        ApiError {
            status,
            detail: detail.into(),
            offers: None,
            dialect,
        }
    }

    /// 400 with `detail`.
    pub fn bad_request(detail: impl Into<String>, dialect: Dialect) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, detail, dialect)
    }

    /// Maps a service error to a status; internal causes are logged and replaced.
    pub fn from_service(e: &ServiceError, dialect: Dialect) -> ApiError {
        let status = match e.kind() {
            ErrorKind::InvalidInput => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let detail = if status.is_server_error() {
            tracing::error!(error = %e, "request failed");
            match status {
                StatusCode::SERVICE_UNAVAILABLE => {
                    "the service is unavailable; try again".to_owned()
                }
                _ => "internal error".to_owned(),
            }
        } else {
            e.to_string()
        };
        let offers = e
            .conflict()
            .and_then(|c| serde_json::to_value(&c.offers).ok());
        ApiError {
            status,
            detail,
            offers,
            dialect,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let title = self.status.canonical_reason().unwrap_or("Error");
        let (body, ctype) = match self.dialect {
            Dialect::Problem => (
                json!({"type": "about:blank", "title": title, "status": self.status.as_u16(), "detail": self.detail}),
                "application/problem+json",
            ),
            Dialect::Has => (
                json!({"title": title, "explanation": self.detail}),
                "application/json",
            ),
            Dialect::Promise => {
                let result = if self.status == StatusCode::CONFLICT {
                    "conflict"
                } else {
                    "error"
                };
                let mut b = json!({"result": result, "message": self.detail});
                if let Some(o) = self.offers {
                    b["offers"] = o;
                }
                (b, "application/json")
            }
        };
        let mut r = (self.status, body.to_string()).into_response();
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
        r
    }
}

/// Parses a JSON body, rendering a parse failure in `dialect`.
pub fn parse_body<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    dialect: Dialect,
) -> Result<T, ApiError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}"), dialect))
}
