//! Load probe: N clients append to one command stream; prints appends/s and commit latency.
//! `cargo run -p berth-store --example append_load -- URL [CLIENTS] [EACH] [race|serial|group]`
//!
//! Modes: `race` = every client appends optimistically and retries on conflict (what several
//! daemons do against each other); `serial` = clients of one process take turns on an async
//! mutex that owns the head; `group` = one writer task commits everything queued in one
//! transaction (group commit), answering each client after its fsync.

use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_calendar::chrono::{TimeZone, Utc};
use berth_calendar::{Amounts, CapacityChange, Command, LogEntry, PoolKey};
use berth_store::{Store, StoreError};
use tokio::sync::{Mutex, mpsc, oneshot};

type Reply = oneshot::Sender<Result<u64, StoreError>>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "sqlite::memory:".to_owned());
    let clients: usize = args.next().map_or(Ok(64), |a| a.parse())?;
    let each: usize = args.next().map_or(Ok(50), |a| a.parse())?;
    let mode = args.next().unwrap_or_else(|| "group".to_owned());
    let options = berth_store::StoreOptions {
        max_connections: 16,
        ..berth_store::StoreOptions::default()
    };
    let store = berth_store::open_with(&url, &options).await?;
    let stream = format!("load-{}-{mode}", std::process::id());
    let t0 = Utc
        .with_ymd_and_hms(2016, 2, 1, 0, 0, 0)
        .single()
        .ok_or("bad time")?;
    let entry = LogEntry {
        at: t0,
        command: Command::IncreaseCapacity(CapacityChange {
            pool: PoolKey::new("zone-1", "openstack"),
            start: t0,
            end: None,
            amounts: Amounts::new().with("cores", 1),
        }),
    };
    let head = Arc::new(Mutex::new(store.head(&stream).await?));
    let (tx, rx) = mpsc::channel::<(LogEntry, Reply)>(4096);
    let writer = tokio::spawn(group_writer(store.clone(), stream.clone(), rx));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (store, stream, entry) = (store.clone(), stream.clone(), entry.clone());
        let (head, tx, mode) = (head.clone(), tx.clone(), mode.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(each);
            let mut conflicts = 0u64;
            let mut seq = store.head(&stream).await?;
            for _ in 0..each {
                let t = Instant::now();
                match mode.as_str() {
                    "serial" => {
                        let mut h = head.lock().await;
                        *h = store
                            .append_commands(&stream, *h, std::slice::from_ref(&entry))
                            .await?;
                    }
                    "group" => {
                        let (reply, answer) = oneshot::channel();
                        if tx.send((entry.clone(), reply)).await.is_err() {
                            break;
                        }
                        let Ok(res) = answer.await else { break };
                        res?;
                    }
                    _ => loop {
                        match store
                            .append_commands(&stream, seq, std::slice::from_ref(&entry))
                            .await
                        {
                            Ok(s) => {
                                seq = s;
                                break;
                            }
                            Err(StoreError::Conflict { actual, .. }) => {
                                conflicts += 1;
                                seq = actual;
                            }
                            Err(e) => return Err(e),
                        }
                    },
                }
                lat.push(t.elapsed());
            }
            Ok::<_, StoreError>((lat, conflicts))
        }));
    }
    drop(tx);
    let mut all: Vec<Duration> = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        let (lat, c) = t.await??;
        all.extend(lat);
        conflicts += c;
    }
    let elapsed = started.elapsed();
    writer.await??;
    all.sort();
    let pct = |p: f64| {
        let i = ((all.len() as f64 - 1.0) * p).round() as usize;
        all.get(i).copied().unwrap_or_default()
    };
    println!(
        "{:?} {mode}: {clients} clients x {each} appends: {:.0} appends/s, p50 {:.2} ms, p99 {:.2} ms, {conflicts} conflicts retried",
        store.backend(),
        all.len() as f64 / elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
    );
    store.close().await?;
    Ok(())
}

/// Commits everything queued in one append per round.
async fn group_writer(
    store: Arc<dyn Store>,
    stream: String,
    mut rx: mpsc::Receiver<(LogEntry, Reply)>,
) -> Result<(), StoreError> {
    let mut head = store.head(&stream).await?;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < 512 {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        let entries: Vec<LogEntry> = batch.iter().map(|(e, _)| e.clone()).collect();
        let res = store.append_commands(&stream, head, &entries).await;
        if let Ok(h) = res {
            head = h;
        }
        for (i, (_, reply)) in batch.into_iter().enumerate() {
            let r = match &res {
                Ok(h) => Ok(h - (entries.len() - 1 - i) as u64),
                Err(e) => Err(StoreError::Invalid {
                    what: "group commit",
                    reason: e.to_string(),
                }),
            };
            reply.send(r).ok();
        }
    }
    Ok(())
}
