//! The thin HTTP part: a Keystone v3 session (password or application credential, the token
//! renewed before it expires and once more on a 401) and calls to the catalog's services.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::error::OpenStackError;
use crate::wire;

/// Placement microversion Berth speaks: 1.39 (consumer generations, consumer types).
pub const PLACEMENT_VERSION: &str = "placement 1.39";
/// Compute microversion: 2.79 (boot on a `host`, from 2.74; extra specs in flavor lists,
/// from 2.61; `networks: none`, from 2.37).
pub const COMPUTE_VERSION: &str = "compute 2.79";

/// Who Berth is to Keystone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A user and password, scoped to a project.
    Password {
        /// User name.
        username: String,
        /// Password.
        password: String,
        /// The user's domain (`Default`).
        user_domain: String,
        /// Project name.
        project: String,
        /// The project's domain (`Default`).
        project_domain: String,
    },
    /// An application credential (scoped to its project already).
    ApplicationCredential {
        /// Its id.
        id: String,
        /// Its secret.
        secret: String,
    },
}

/// How to reach a cloud.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    /// Keystone's v3 URL (`http://keystone:5000/v3`).
    pub auth_url: String,
    /// Credentials.
    pub credentials: Credentials,
    /// Region of the endpoints (`None`: the first).
    pub region: Option<String>,
    /// Interface of the endpoints (`public`, `internal`).
    pub interface: String,
    /// Per-request timeout.
    pub timeout: Duration,
}

/// A token in hand.
#[derive(Debug, Clone)]
struct Token {
    id: String,
    expires_at: DateTime<Utc>,
    info: wire::TokenInfo,
}

/// A Keystone session: every call carries a valid token.
#[derive(Debug)]
pub struct Session {
    http: reqwest::Client,
    auth: Auth,
    token: Mutex<Option<Token>>,
}

/// A token is renewed when less than this is left of it.
const RENEW_BEFORE: chrono::TimeDelta = chrono::TimeDelta::seconds(120);

/// An answer: status and body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Body text.
    pub body: String,
}

impl Session {
    /// A session for `auth` (no call is made yet).
    pub fn new(auth: Auth) -> Result<Session, OpenStackError> {
        if !(auth.auth_url.starts_with("http://") || auth.auth_url.starts_with("https://")) {
            return Err(OpenStackError::Config {
                field: "auth_url",
                message: format!(
                    "`{}` is not an http(s) URL; expected Keystone's v3 URL such as http://keystone:5000/v3",
                    auth.auth_url
                ),
            });
        }
        let http = reqwest::Client::builder()
            .timeout(auth.timeout)
            .build()
            .map_err(|e| OpenStackError::Config {
                field: "auth_url",
                message: format!("cannot build an HTTP client: {e}"),
            })?;
        Ok(Session {
            http,
            auth,
            token: Mutex::new(None),
        })
    }

    /// The auth settings.
    pub fn auth(&self) -> &Auth {
        &self.auth
    }

    /// Authenticates now: `POST /v3/auth/tokens`.
    async fn authenticate(&self) -> Result<Token, OpenStackError> {
        let base = self.auth.auth_url.trim_end_matches('/');
        let url = format!("{base}/auth/tokens");
        let body = match &self.auth.credentials {
            Credentials::Password {
                username,
                password,
                user_domain,
                project,
                project_domain,
            } => json!({"auth": {
                "identity": {"methods": ["password"], "password": {"user": {
                    "name": username, "domain": {"name": user_domain}, "password": password}}},
                "scope": {"project": {"name": project, "domain": {"name": project_domain}}}}}),
            Credentials::ApplicationCredential { id, secret } => json!({"auth": {
                "identity": {"methods": ["application_credential"],
                    "application_credential": {"id": id, "secret": secret}}}}),
        };
        let res = self
            .http
            .post(&url)
            .json(&body)
            .send()
            .await
            .map_err(|e| transport(&url, &e))?;
        let status = res.status().as_u16();
        let id = res
            .headers()
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = res.text().await.map_err(|e| transport(&url, &e))?;
        if status != 201 {
            let (message, code) = wire::error_message(&text);
            return Err(OpenStackError::Status {
                method: "POST",
                url,
                status,
                message,
                code,
            });
        }
        let Some(id) = id else {
            return Err(OpenStackError::Wire {
                what: "keystone token",
                path: "X-Subject-Token".into(),
                message: "the header is missing".into(),
            });
        };
        let body: wire::TokenBody = wire::parse("keystone token", &text)?;
        Ok(Token {
            id,
            expires_at: body.token.expires_at,
            info: body.token,
        })
    }

    /// A valid token, renewed when it is missing, near its end, or `stale` (a 401).
    async fn token(&self, stale: Option<&str>) -> Result<Token, OpenStackError> {
        let mut g = self.token.lock().await;
        let fresh = g.as_ref().is_some_and(|t| {
            t.expires_at - Utc::now() > RENEW_BEFORE && Some(t.id.as_str()) != stale
        });
        if !fresh {
            let t = self.authenticate().await?;
            tracing::debug!(expires_at = %t.expires_at, "keystone token issued");
            *g = Some(t);
        }
        g.clone().ok_or_else(|| OpenStackError::Config {
            field: "credentials",
            message: "no token".into(),
        })
    }

    /// The project and user the token is for.
    pub async fn identity(&self) -> Result<(String, String), OpenStackError> {
        let t = self.token(None).await?;
        let project = t.info.project.map(|p| p.id).unwrap_or_default();
        Ok((project, t.info.user.id))
    }

    /// The token's expiry (for status).
    pub async fn expires_at(&self) -> Result<DateTime<Utc>, OpenStackError> {
        Ok(self.token(None).await?.expires_at)
    }

    /// The catalog URL of `service` for the configured interface and region.
    pub async fn endpoint(&self, service: &str) -> Result<String, OpenStackError> {
        let t = self.token(None).await?;
        wire::endpoint(
            &t.info.catalog,
            service,
            &self.auth.interface,
            self.auth.region.as_deref(),
        )
    }

    /// The region of the endpoints used: the configured one, or the compute endpoint's.
    pub async fn region(&self) -> Result<Option<String>, OpenStackError> {
        if let Some(r) = &self.auth.region {
            return Ok(Some(r.clone()));
        }
        let t = self.token(None).await?;
        Ok(t.info
            .catalog
            .iter()
            .filter(|s| s.service_type == "compute")
            .flat_map(|s| &s.endpoints)
            .find(|e| e.interface == self.auth.interface)
            .and_then(|e| e.region_id.clone()))
    }

    /// Calls `service` (`placement`, `compute`) at `path` with a microversion; a 401 renews
    /// the token and tries once more. Any status is returned; transport failures are errors.
    pub async fn call(
        &self,
        method: reqwest::Method,
        service: &str,
        path: &str,
        version: &str,
        body: Option<&Value>,
    ) -> Result<Answer, OpenStackError> {
        let base = self.endpoint(service).await?;
        let url = format!("{base}{path}");
        let mut stale: Option<String> = None;
        loop {
            let token = self.token(stale.as_deref()).await?;
            let mut req = self
                .http
                .request(method.clone(), &url)
                .header("X-Auth-Token", &token.id)
                .header("OpenStack-API-Version", version)
                .header("Accept", "application/json");
            if service == "compute" {
                let v = version.trim_start_matches("compute ");
                req = req.header("X-OpenStack-Nova-API-Version", v);
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            let res = req.send().await.map_err(|e| transport(&url, &e))?;
            let status = res.status().as_u16();
            let text = res.text().await.map_err(|e| transport(&url, &e))?;
            if status == 401 && stale.is_none() {
                stale = Some(token.id);
                continue;
            }
            return Ok(Answer { status, body: text });
        }
    }

    /// `GET`, expecting 200; the body.
    pub async fn get(
        &self,
        service: &str,
        path: &str,
        version: &str,
    ) -> Result<String, OpenStackError> {
        let a = self
            .call(reqwest::Method::GET, service, path, version, None)
            .await?;
        expect(a, "GET", &format!("{service}{path}"), &[200])
    }
}

/// The body of an answer whose status is one of `ok`, or the status as an error.
pub fn expect(
    a: Answer,
    method: &'static str,
    url: &str,
    ok: &[u16],
) -> Result<String, OpenStackError> {
    if ok.contains(&a.status) {
        return Ok(a.body);
    }
    let (message, code) = wire::error_message(&a.body);
    Err(OpenStackError::Status {
        method,
        url: url.to_owned(),
        status: a.status,
        message,
        code,
    })
}

fn transport(url: &str, e: &reqwest::Error) -> OpenStackError {
    OpenStackError::Transport {
        url: url.to_owned(),
        message: e.to_string(),
    }
}
