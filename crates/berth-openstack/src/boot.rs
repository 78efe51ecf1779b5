//! Boots and deletes servers through the compute API: on the host Berth chose (`host`, from
//! microversion 2.74), tagged with Berth's instance id, waited for until ACTIVE or ERROR.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{COMPUTE_VERSION, Session, expect};
use crate::error::OpenStackError;
use crate::fetch::INSTANCE_KEY;
use crate::wire;

/// What to boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boot {
    /// Server name.
    pub name: String,
    /// Flavor id or name.
    pub flavor: String,
    /// Image id or name.
    pub image: String,
    /// The compute host.
    pub host: String,
    /// Berth's instance id (kept in the server's metadata).
    pub instance: String,
}

/// Polling interval while a server builds or is deleted.
const POLL: Duration = Duration::from_millis(250);

/// The flavor id of `flavor` (an id or a name).
async fn flavor_id(s: &Session, flavor: &str) -> Result<String, OpenStackError> {
    let list: wire::Flavors = wire::parse(
        "compute flavors",
        &s.get("compute", "/flavors/detail?is_public=None", COMPUTE_VERSION)
            .await?,
    )?;
    list.flavors
        .iter()
        .find(|f| f.id == flavor)
        .or_else(|| list.flavors.iter().find(|f| f.name == flavor))
        .map(|f| f.id.clone())
        .ok_or_else(|| OpenStackError::Config {
            field: "flavor",
            message: format!(
                "flavor `{flavor}` is unknown to the compute API; expected one of [{}]",
                list.flavors
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// The image id of `image` (an id or a name), from the image service.
async fn image_id(s: &Session, image: &str) -> Result<String, OpenStackError> {
    let body = s.get("image", "/v2/images", "image 2.0").await?;
    let v: Value = wire::parse("image list", &body)?;
    let images = v["images"].as_array().cloned().unwrap_or_default();
    let field = |i: &Value, k: &str| i[k].as_str().map(str::to_owned);
    images
        .iter()
        .find(|i| field(i, "id").as_deref() == Some(image))
        .or_else(|| {
            images
                .iter()
                .find(|i| field(i, "name").as_deref() == Some(image))
        })
        .and_then(|i| field(i, "id"))
        .ok_or_else(|| OpenStackError::Config {
            field: "image",
            message: format!("image `{image}` is unknown to the image service"),
        })
}

/// Boots `b` and waits until it is ACTIVE (its server) or ERROR (an error with Nova's fault;
/// the server is deleted) or `deadline` passes (an error; the server is deleted).
pub async fn boot(
    s: &Session,
    b: &Boot,
    deadline: Duration,
) -> Result<wire::Server, OpenStackError> {
    let flavor = flavor_id(s, &b.flavor).await?;
    let image = image_id(s, &b.image).await?;
    let body = json!({"server": {
        "name": b.name,
        "flavorRef": flavor,
        "imageRef": image,
        "networks": "none",
        "host": b.host,
        "metadata": {INSTANCE_KEY: b.instance},
    }});
    let a = s
        .call(
            reqwest::Method::POST,
            "compute",
            "/servers",
            COMPUTE_VERSION,
            Some(&body),
        )
        .await?;
    let created: wire::ServerBody = wire::parse(
        "compute server",
        &expect(a, "POST", "compute/servers", &[202])?,
    )?;
    let id = created.server.id;
    tracing::info!(server = %id, host = %b.host, instance = %b.instance, "server requested");
    let started = tokio::time::Instant::now();
    loop {
        let v = server(s, &id).await?;
        match v.as_ref().and_then(|v| v.status.as_deref()) {
            Some("ACTIVE") => return v.ok_or_else(|| gone(&id)),
            Some("ERROR") => {
                let fault = v
                    .and_then(|v| v.fault)
                    .map(|f| f.message)
                    .unwrap_or_else(|| "no fault given".into());
                let _ = delete(s, &id, deadline).await;
                return Err(OpenStackError::Boot {
                    server: id,
                    message: format!("went to ERROR: {fault}"),
                });
            }
            None => return Err(gone(&id)),
            Some(_) => {}
        }
        if started.elapsed() >= deadline {
            let _ = delete(s, &id, deadline).await;
            return Err(OpenStackError::Boot {
                server: id,
                message: format!("was not ACTIVE within {} s", deadline.as_secs()),
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

fn gone(id: &str) -> OpenStackError {
    OpenStackError::Boot {
        server: id.to_owned(),
        message: "disappeared while building".into(),
    }
}

/// A server, or `None` when it does not exist.
pub async fn server(s: &Session, id: &str) -> Result<Option<wire::Server>, OpenStackError> {
    let path = format!("/servers/{id}");
    let a = s
        .call(
            reqwest::Method::GET,
            "compute",
            &path,
            COMPUTE_VERSION,
            None,
        )
        .await?;
    if a.status == 404 {
        return Ok(None);
    }
    let body = expect(a, "GET", &format!("compute{path}"), &[200])?;
    Ok(Some(
        wire::parse::<wire::ServerBody>("compute server", &body)?.server,
    ))
}

/// The server Berth booted for `instance`, if any.
pub async fn find(s: &Session, instance: &str) -> Result<Option<wire::Server>, OpenStackError> {
    let list: wire::ServersBody = wire::parse(
        "compute servers",
        &s.get("compute", "/servers/detail?all_tenants=1", COMPUTE_VERSION)
            .await?,
    )?;
    Ok(list
        .servers
        .into_iter()
        .find(|v| v.metadata.get(INSTANCE_KEY).map(String::as_str) == Some(instance)))
}

/// Deletes a server and waits until it is gone (its allocations leave Placement with it).
pub async fn delete(s: &Session, id: &str, deadline: Duration) -> Result<(), OpenStackError> {
    let path = format!("/servers/{id}");
    let a = s
        .call(
            reqwest::Method::DELETE,
            "compute",
            &path,
            COMPUTE_VERSION,
            None,
        )
        .await?;
    expect(a, "DELETE", &format!("compute{path}"), &[204, 404])?;
    let started = tokio::time::Instant::now();
    while server(s, id).await?.is_some() {
        if started.elapsed() >= deadline {
            return Err(OpenStackError::Boot {
                server: id.to_owned(),
                message: format!("was not gone within {} s of its delete", deadline.as_secs()),
            });
        }
        tokio::time::sleep(POLL).await;
    }
    tracing::info!(server = %id, "server deleted");
    Ok(())
}
