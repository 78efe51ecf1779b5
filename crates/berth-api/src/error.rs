//! Error bodies: RFC 9457 problem+json by default, ONAP HAS-shaped on HAS routes, Promise-shaped
//! (`result: conflict|error`) on Promise routes. Internal details are logged, not sent.
//!
//! The HAS shape is what HAS itself writes (conductor `api/controllers/errors.py`, the
//! `error_wrapper`, wrapped by `api/middleware.py`'s `ParsableErrorMiddleware` for a JSON
//! client): `{"error_message": {"explanation", "code", "error": {"message", "type"}, "title"}}`,
//! where `message`, `type` and `title` are those of the webob exception class of the status.
//! A 401 takes that shape too, with HAS's explanations from `plans.check_auth` (its
//! `/errors/authentication_error`): HAS's plain-text `unauthorized` handler ("Authentication
//! required") is referenced only from a commented-out line, and `ParsableErrorMiddleware`
//! would wrap its text as `{"error_message": "..."}` for a JSON client anyway. Unlike HAS,
//! missing credentials are a 401 as well (HAS answers 417 Expectation Failed).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use berth_service::{ErrorKind, ServiceError};
use serde::Serialize;
use utoipa::ToSchema;

pub use crate::dialect::Dialect;

/// One problem with the input, located by field path and (when known) line:column — Berth's
/// addition to every error dialect, under `diagnostics`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct DiagnosticBody {
    /// Field path (`timeout`, `template.demands.vG[0]`); empty for the whole document.
    pub path: String,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
    /// What is wrong, saying what was expected.
    pub message: String,
}

/// ONAP HAS error body.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HasError {
    /// The error.
    pub error_message: HasErrorMessage,
}

/// ONAP HAS error (`conductor.api.controllers.errors.error_wrapper`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HasErrorMessage {
    /// What went wrong with this request.
    pub explanation: String,
    /// HTTP status.
    pub code: u16,
    /// The webob exception of the status.
    pub error: HasErrorKind,
    /// Reason phrase of the status, as webob names it (`Bad Request`).
    pub title: String,
    /// Berth's addition: problems located by field path and line:column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<DiagnosticBody>,
}

/// The webob exception class of an HTTP status.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HasErrorKind {
    /// webob's default explanation of the status.
    pub message: String,
    /// webob class name (`HTTPBadRequest`, `HTTPNotFound`, ...).
    #[serde(rename = "type")]
    pub kind: String,
}

/// RFC 9457 problem details.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Problem {
    /// Always `about:blank`: the status says it all.
    #[serde(rename = "type")]
    pub kind: String,
    /// Reason phrase of the status.
    pub title: String,
    /// HTTP status.
    pub status: u16,
    /// What went wrong with this request.
    pub detail: String,
    /// Problems located by field path and line:column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<DiagnosticBody>,
}

/// Promise shim error body.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PromiseError {
    /// `conflict` (capacity) or `error`.
    pub result: String,
    /// What went wrong.
    pub message: String,
    /// On a capacity conflict: what could be reserved instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub offers: Option<serde_json::Value>,
    /// Problems located by field path and line:column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<DiagnosticBody>,
}

/// webob's name, title and default explanation of `status` (`webob.exc.status_map`, with
/// webob's whitespace normalization of the explanation).
pub fn webob_status(status: StatusCode) -> (&'static str, &'static str, &'static str) {
    match status.as_u16() {
        400 => (
            "HTTPBadRequest",
            "Bad Request",
            "The server could not comply with the request since it is either malformed or otherwise incorrect.",
        ),
        401 => (
            "HTTPUnauthorized",
            "Unauthorized",
            "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.",
        ),
        403 => (
            "HTTPForbidden",
            "Forbidden",
            "Access was denied to this resource.",
        ),
        404 => (
            "HTTPNotFound",
            "Not Found",
            "The resource could not be found.",
        ),
        405 => ("HTTPMethodNotAllowed", "Method Not Allowed", ""),
        406 => ("HTTPNotAcceptable", "Not Acceptable", ""),
        408 => (
            "HTTPRequestTimeout",
            "Request Timeout",
            "The server has waited too long for the request to be sent by the client.",
        ),
        409 => (
            "HTTPConflict",
            "Conflict",
            "There was a conflict when trying to complete your request.",
        ),
        413 => (
            "HTTPRequestEntityTooLarge",
            "Request Entity Too Large",
            "The body of your request was too large for this server.",
        ),
        415 => ("HTTPUnsupportedMediaType", "Unsupported Media Type", ""),
        422 => (
            "HTTPUnprocessableEntity",
            "Unprocessable Entity",
            "Unable to process the contained instructions",
        ),
        429 => (
            "HTTPTooManyRequests",
            "Too Many Requests",
            "The client has sent too many requests in a given amount of time",
        ),
        501 => ("HTTPNotImplemented", "Not Implemented", ""),
        502 => ("HTTPBadGateway", "Bad Gateway", "Bad gateway."),
        503 => (
            "HTTPServiceUnavailable",
            "Service Unavailable",
            "The server is currently unavailable. Please try again at a later time.",
        ),
        504 => (
            "HTTPGatewayTimeout",
            "Gateway Timeout",
            "The gateway has timed out.",
        ),
        _ if status.is_client_error() => (
            "HTTPClientError",
            "Bad Request",
            "The server could not comply with the request since it is either malformed or otherwise incorrect.",
        ),
        _ => (
            "HTTPInternalServerError",
            "Internal Server Error",
            "The server has either erred or is incapable of performing the requested operation.",
        ),
    }
}

/// Marks a response whose error body an [`ApiError`] wrote, in this dialect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shaped(pub(crate) Dialect);

/// An error on its way to the client.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Detail sent to the client.
    pub detail: String,
    /// Offers of a capacity conflict (Promise routes); boxed to keep results small.
    pub offers: Option<Box<serde_json::Value>>,
    /// Problems located in the input.
    pub diagnostics: Vec<DiagnosticBody>,
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
            diagnostics: Vec::new(),
            dialect,
        }
    }

    /// 400 with `detail`.
    pub fn bad_request(detail: impl Into<String>, dialect: Dialect) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, detail, dialect)
    }

    /// 400 for the field at `path`: `message` as detail and as a located diagnostic.
    pub fn bad_field(path: &str, message: impl Into<String>, dialect: Dialect) -> ApiError {
        let message = message.into();
        let mut e = ApiError::bad_request(message.clone(), dialect);
        e.diagnostics.push(DiagnosticBody {
            path: path.to_owned(),
            line: 0,
            column: 0,
            message,
        });
        e
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
        let detail = if let ServiceError::WritesRefused { .. } = e {
            // Our own words on why writes stop; the operator needs them and they leak nothing.
            tracing::warn!(error = %e, "write refused by the store");
            e.to_string()
        } else if status.is_server_error() {
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
        let field = e.field();
        let offers = e
            .conflict()
            .and_then(|c| match dialect {
                // Promise clients read the dimensions by their Promise names.
                Dialect::Promise => Some(crate::promise_wire::promise_offers(&c.offers)),
                _ => serde_json::to_value(&c.offers).ok(),
            })
            .map(Box::new);
        let err = ApiError {
            status,
            detail,
            offers,
            diagnostics: Vec::new(),
            dialect,
        };
        match field {
            Some(f) => err.at(f),
            None => err,
        }
    }

    /// Names `path` as the field this error is about (a located diagnostic), unless one is
    /// named already.
    pub fn at(mut self, path: &str) -> ApiError {
        if self.diagnostics.is_empty() {
            self.diagnostics.push(DiagnosticBody {
                path: path.to_owned(),
                line: 0,
                column: 0,
                message: self.detail.clone(),
            });
        }
        self
    }

    /// A client error whose message starts with its field (`` `capacity.cores` is … ``, as
    /// every message here is written) carries that field as a diagnostic too, so clients can
    /// branch on the path without parsing text.
    fn with_leading_field(self) -> ApiError {
        if !self.diagnostics.is_empty() || !self.status.is_client_error() {
            return self;
        }
        let path = self
            .detail
            .strip_prefix('`')
            .and_then(|rest| rest.split_once('`'))
            .map(|(p, _)| p.to_owned())
            .filter(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.[]".contains(c))
            });
        match path {
            Some(p) => self.at(&p),
            None => self,
        }
    }

    /// The body and content type in this error's dialect.
    fn body(self) -> (serde_json::Value, &'static str) {
        let e = self.with_leading_field();
        let (kind, title, message) = webob_status(e.status);
        let value = match e.dialect {
            Dialect::Problem => serde_json::to_value(Problem {
                kind: "about:blank".to_owned(),
                title: e.status.canonical_reason().unwrap_or(title).to_owned(),
                status: e.status.as_u16(),
                detail: e.detail,
                diagnostics: e.diagnostics,
            }),
            Dialect::Has => serde_json::to_value(HasError {
                error_message: HasErrorMessage {
                    explanation: e.detail,
                    code: e.status.as_u16(),
                    error: HasErrorKind {
                        message: message.to_owned(),
                        kind: kind.to_owned(),
                    },
                    title: title.to_owned(),
                    diagnostics: e.diagnostics,
                },
            }),
            Dialect::Promise => serde_json::to_value(PromiseError {
                result: if e.status == StatusCode::CONFLICT {
                    "conflict"
                } else {
                    "error"
                }
                .to_owned(),
                message: e.detail,
                offers: e.offers.map(|o| *o),
                diagnostics: e.diagnostics,
            }),
        };
        let ctype = match e.dialect {
            Dialect::Problem => "application/problem+json",
            Dialect::Has | Dialect::Promise => "application/json",
        };
        (value.unwrap_or_default(), ctype)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, dialect) = (self.status, self.dialect);
        let (body, ctype) = self.body();
        let mut r = (status, body.to_string()).into_response();
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // Every 503 is temporary: say when to try again.
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r.extensions_mut().insert(Shaped(dialect));
        r
    }
}

/// Largest error body read back when reshaping one.
const RESHAPE_LIMIT: usize = 64 * 1024;

/// Outermost layer: an error response not written by an [`ApiError`] (from the router, a body
/// limit, the timeout or the panic guard) is rewritten in its route's dialect — on HAS routes
/// what HAS's `ParsableErrorMiddleware` does — keeping its text as the explanation, so every
/// error a client sees is JSON in the shape it parses.
pub(crate) async fn error_shape(req: Request, next: Next) -> Response {
    let dialect = Dialect::of_path(req.uri().path());
    let method = req.method().clone();
    let resp = next.run(req).await;
    let status = resp.status();
    if !(status.is_client_error() || status.is_server_error())
        || resp
            .extensions()
            .get::<Shaped>()
            .is_some_and(|s| s.0 == dialect)
    {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, RESHAPE_LIMIT)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    // A problem+json body (panic guard) keeps its detail; plain text is the explanation.
    let problem_detail = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get("detail").and_then(|d| d.as_str()).map(str::to_owned));
    let detail = match (problem_detail, status) {
        (Some(d), _) => d,
        (None, StatusCode::METHOD_NOT_ALLOWED) => format!("The {method} method is not allowed."),
        (None, _) if !text.trim().is_empty() => text.trim().to_owned(),
        (None, _) => webob_status(status).2.to_owned(),
    };
    let mut out = ApiError::new(status, detail, dialect).into_response();
    // Keep what the inner layers said beyond the body (Allow, WWW-Authenticate).
    for name in [header::ALLOW, header::WWW_AUTHENTICATE, header::RETRY_AFTER] {
        if let Some(v) = parts.headers.get(&name) {
            out.headers_mut().insert(name, v.clone());
        }
    }
    if method == Method::HEAD {
        *out.body_mut() = Body::empty();
    }
    out
}

/// Parses a JSON body strictly (a repeated key is an error), rendering a failure in `dialect`
/// with the field path and line:column of the problem. Unknown fields are named back
/// ([`crate::fields`]): near misses (and, in Berth's own dialect, every unknown field) are a
/// 400 naming each of them; others are ignored with a warning in the answer and the log.
pub fn parse_body<T: serde::de::DeserializeOwned + utoipa::ToSchema + 'static>(
    bytes: &[u8],
    dialect: Dialect,
) -> Result<T, ApiError> {
    let located = |p: crate::body::BodyProblem| {
        let mut err = ApiError::bad_request(format!("invalid JSON body: {}", p.message), dialect);
        err.diagnostics.push(DiagnosticBody {
            path: p.path,
            line: u32::try_from(p.line).unwrap_or(u32::MAX),
            column: u32::try_from(p.column).unwrap_or(u32::MAX),
            message: p.message,
        });
        err
    };
    let tree: serde_json::Value = crate::body::decode(bytes).map_err(located)?;
    let unknown = crate::fields::unknown_fields::<T>(&tree);
    let (refused, ignored): (Vec<_>, Vec<_>) =
        unknown.into_iter().partition(|u| u.refused(dialect));
    if !refused.is_empty() {
        let messages: Vec<String> = refused
            .iter()
            .map(crate::fields::Unknown::message)
            .collect();
        let mut err = ApiError::bad_request(messages.join("; "), dialect);
        err.diagnostics = refused
            .into_iter()
            .zip(messages)
            .map(|(u, message)| DiagnosticBody {
                path: u.path,
                line: 0,
                column: 0,
                message,
            })
            .collect();
        return Err(err);
    }
    let value = crate::body::decode(bytes).map_err(located)?;
    for u in ignored {
        let message = u.message();
        tracing::warn!(field = %u.path, body = %T::name(), "{message}");
        crate::fields::warn(message);
    }
    Ok(value)
}
