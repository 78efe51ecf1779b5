//! The connection loop: admission below HTTP. At most `max_connections` connections are open at
//! once (more wait in the kernel's backlog, costing the daemon nothing), a client gets
//! `header_timeout` to send each request's headers (also the longest a kept-alive connection
//! may sit idle), and shutdown lets every connection finish its request.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::serve::Listener;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// Limits of the connection loop.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Time to send a request's headers, and to send the next request on a kept-alive
    /// connection.
    pub header_timeout: Duration,
}

/// Serves `app` on `listener` until `shutdown` resolves, then waits for open requests.
pub async fn serve<L: Listener>(
    mut listener: L,
    app: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop, stopped) = watch::channel(false);
    let mut conns = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (io, _) = tokio::select! {
            c = listener.accept() => c,
            () = &mut shutdown => break,
        };
        // Reap finished connection tasks so the set stays as small as the open connections.
        while conns.try_join_next().is_some() {}
        let service = TowerToHyperService::new(app.clone());
        let mut stopped = stopped.clone();
        conns.spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(io), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                }
                _ = stopped.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(permit);
        });
    }
    let _ = stop.send(true);
    while conns.join_next().await.is_some() {}
}
