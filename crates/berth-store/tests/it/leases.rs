//! Conformance checks of partition leases, fencing and spanning (multi-stream) appends.

use std::sync::Arc;

use berth_calendar::chrono::{DateTime, TimeDelta, Utc};
use berth_store::{Append, BatchOutcome, Fence, LeaseRequest, Store, StoreError, WriteBatch};
use tokio::sync::Barrier;

use crate::fixtures::{marker, marker_of, t0};

fn secs(n: i64) -> DateTime<Utc> {
    t0() + TimeDelta::seconds(n)
}

/// A lease request of `owner` at `now` for 10 s.
fn ask<'a>(lease: &'a str, owner: &'a str, held: Option<u64>, now: i64) -> LeaseRequest<'a> {
    LeaseRequest {
        lease,
        owner,
        owner_url: owner,
        held_token: held,
        now: secs(now),
        expires_at: secs(now + 10),
    }
}

/// One marker appended to `stream` at `expected`, fenced by `(lease, token)`.
async fn fenced_append(
    s: &dyn Store,
    stream: &str,
    expected: u64,
    lease: &str,
    token: u64,
    mark: u64,
) -> Result<BatchOutcome, StoreError> {
    let entries = [marker(mark)];
    let fences = [Fence { lease, token }];
    s.write(WriteBatch {
        append: Some(Append {
            stream,
            expected_seq: expected,
            entries: &entries,
        }),
        fences: &fences,
        ..WriteBatch::default()
    })
    .await
}

/// Grant, refusal, renewal, takeover after expiry, and the old owner fenced out.
pub async fn leases_and_fencing(store: Arc<dyn Store>) {
    let s = &*store;
    assert_eq!(s.lease("p").await.unwrap(), None);
    let a = s.acquire_lease(ask("p", "a", None, 0)).await.unwrap();
    assert_eq!(
        (a.owner.as_str(), a.token, a.expires_at),
        ("a", 1, secs(10))
    );
    assert!(a.held_by("a", secs(9)) && !a.held_by("a", secs(10)) && !a.held_by("b", secs(1)));
    // b is refused while a's lease runs, and learns who holds it.
    let seen = s.acquire_lease(ask("p", "b", None, 5)).await.unwrap();
    assert_eq!(
        (seen.owner.as_str(), seen.token, seen.owner_url.as_str()),
        ("a", 1, "a")
    );
    // a renews with its token: same token, later expiry.
    let a = s.acquire_lease(ask("p", "a", Some(1), 8)).await.unwrap();
    assert_eq!((a.token, a.expires_at), (1, secs(18)));
    fenced_append(s, "cal-p", 0, "p", 1, 1).await.unwrap();
    // a pauses; its lease lapses and b takes over with a new token.
    let b = s.acquire_lease(ask("p", "b", None, 18)).await.unwrap();
    assert_eq!((b.owner.as_str(), b.token), ("b", 2));
    // a wakes up: its fenced write fails and writes nothing, even at the right head.
    let err = fenced_append(s, "cal-p", 1, "p", 1, 2).await.unwrap_err();
    match &err {
        StoreError::Fenced {
            lease,
            token,
            holder,
            actual,
        } => assert_eq!(
            (lease.as_str(), *token, holder.as_str(), *actual),
            ("p", 1, "b", 2)
        ),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .contains("lease `p` is no longer held with token 1")
    );
    assert_eq!(s.head("cal-p").await.unwrap(), 1);
    // Nor can it renew with its old token while b's lease runs.
    let seen = s.acquire_lease(ask("p", "a", Some(1), 19)).await.unwrap();
    assert_eq!((seen.owner.as_str(), seen.token), ("b", 2));
    fenced_append(s, "cal-p", 1, "p", 2, 3).await.unwrap();
    let log = s.commands_since("cal-p", 0).await.unwrap();
    assert_eq!(
        log.iter().map(|c| marker_of(&c.entry)).collect::<Vec<_>>(),
        [1, 3]
    );
    // The same node re-acquiring without its token (a restart) gets a new token.
    let b2 = s.acquire_lease(ask("p", "b", None, 20)).await.unwrap();
    assert_eq!(b2.token, 3);
    assert!(matches!(
        fenced_append(s, "cal-p", 2, "p", 2, 4).await,
        Err(StoreError::Fenced { actual: 3, .. })
    ));
    // Release: only the holder with the current token; then anyone may take it at once.
    assert!(!s.release_lease("p", "b", 2).await.unwrap());
    assert!(!s.release_lease("p", "a", 3).await.unwrap());
    assert!(s.release_lease("p", "b", 3).await.unwrap());
    let a = s.acquire_lease(ask("p", "a", None, 21)).await.unwrap();
    assert_eq!((a.owner.as_str(), a.token), ("a", 4));
    // A fence on a lease nobody ever took fails too.
    assert!(matches!(
        fenced_append(s, "cal-q", 0, "q", 1, 5).await,
        Err(StoreError::Fenced { actual: 0, ref holder, .. }) if holder.is_empty()
    ));
    assert_eq!(s.head("cal-q").await.unwrap(), 0);
    s.acquire_lease(ask("o", "c", None, 0)).await.unwrap();
    let names: Vec<String> = s
        .leases()
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.lease)
        .collect();
    assert_eq!(names, ["o", "p"]);
}

/// Many nodes grabbing one lapsed lease at once: exactly one gets it, the token moves once.
pub async fn concurrent_takeover_has_one_winner(store: Arc<dyn Store>) {
    const N: usize = 16;
    store.acquire_lease(ask("p", "old", None, 0)).await.unwrap();
    for round in 1..=3i64 {
        let barrier = Arc::new(Barrier::new(N));
        let mut tasks = Vec::new();
        for i in 0..N {
            let (store, barrier) = (store.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let me = format!("n{round}-{i}");
                barrier.wait().await;
                let got = store
                    .acquire_lease(ask("p", &me, None, 20 * round))
                    .await
                    .unwrap();
                (me, got)
            }));
        }
        let mut winners = Vec::new();
        let mut tokens = std::collections::BTreeSet::new();
        for t in tasks {
            let (me, got) = t.await.unwrap();
            tokens.insert(got.token);
            if got.owner == me {
                winners.push(me);
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        assert_eq!(tokens.into_iter().collect::<Vec<_>>(), [1 + round as u64]);
    }
}

/// An old owner writing as fast as it can while a new owner takes over: once the takeover
/// commits, no write of the old owner lands (the new owner's first append at the head it
/// reads after the takeover always succeeds), and the old owner ends fenced.
pub async fn paused_owner_cannot_write_after_takeover(store: Arc<dyn Store>) {
    for round in 0..4u64 {
        let lease = format!("p{round}");
        let stream = format!("cal-p{round}");
        let old = store
            .acquire_lease(ask(&lease, "old", None, 0))
            .await
            .unwrap();
        let writer = {
            let (store, lease, stream) = (store.clone(), lease.clone(), stream.clone());
            tokio::spawn(async move {
                let mut written = 0u64;
                loop {
                    let head = store.head(&stream).await.unwrap();
                    match fenced_append(&*store, &stream, head, &lease, old.token, 1000 + head)
                        .await
                    {
                        Ok(_) => written += 1,
                        Err(StoreError::Conflict { .. }) => {}
                        Err(StoreError::Fenced { .. }) => return written,
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(20 + 10 * round)).await;
        let new = store
            .acquire_lease(ask(&lease, "new", None, 10))
            .await
            .unwrap();
        assert_eq!((new.owner.as_str(), new.token), ("new", 2));
        let head = store.head(&stream).await.unwrap();
        fenced_append(&*store, &stream, head, &lease, new.token, 1)
            .await
            .unwrap();
        let written = writer.await.unwrap();
        assert_eq!(written, head, "round {round}");
        assert_eq!(store.head(&stream).await.unwrap(), head + 1);
    }
}

/// A reservation spanning partitions: appends to several streams commit together or not at
/// all, and concurrent spanning writers in either stream order neither deadlock nor interleave.
pub async fn spanning_appends_are_atomic(store: Arc<dyn Store>) {
    let s = &*store;
    let (one, two) = ([marker(1)], [marker(2)]);
    let both = |ea: u64, eb: u64| {
        (
            Append {
                stream: "zone-a",
                expected_seq: ea,
                entries: &one,
            },
            [Append {
                stream: "zone-b",
                expected_seq: eb,
                entries: &two,
            }],
        )
    };
    let (a, b) = both(0, 0);
    let out = s
        .write(WriteBatch {
            append: Some(a),
            also_append: &b,
            ..WriteBatch::default()
        })
        .await
        .unwrap();
    assert_eq!(
        out,
        BatchOutcome::Committed {
            seq: Some(1),
            plan: None
        }
    );
    assert_eq!(
        (
            s.head("zone-a").await.unwrap(),
            s.head("zone-b").await.unwrap()
        ),
        (1, 1)
    );
    // The second stream is stale: the first stream's append is undone too.
    let (a, b) = both(1, 0);
    let err = s
        .write(WriteBatch {
            append: Some(a),
            also_append: &b,
            ..WriteBatch::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { ref stream, actual: 1, .. } if stream == "zone-b")
    );
    assert_eq!(
        (
            s.head("zone-a").await.unwrap(),
            s.head("zone-b").await.unwrap()
        ),
        (1, 1)
    );
    // One of two fences is stale: nothing is written.
    s.acquire_lease(ask("a", "n1", None, 0)).await.unwrap();
    s.acquire_lease(ask("b", "n1", None, 0)).await.unwrap();
    s.acquire_lease(ask("b", "n2", None, 30)).await.unwrap();
    let fences = [
        Fence {
            lease: "a",
            token: 1,
        },
        Fence {
            lease: "b",
            token: 1,
        },
    ];
    let (a, b) = both(1, 1);
    let err = s
        .write(WriteBatch {
            append: Some(a),
            also_append: &b,
            fences: &fences,
            ..WriteBatch::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Fenced { ref lease, actual: 2, .. } if lease == "b"));
    assert_eq!(
        (
            s.head("zone-a").await.unwrap(),
            s.head("zone-b").await.unwrap()
        ),
        (1, 1)
    );
    // Streams listed by prefix, with their heads (no wildcard meaning in the prefix).
    assert_eq!(
        s.streams("zone-").await.unwrap(),
        [("zone-a".to_owned(), 1), ("zone-b".to_owned(), 1)]
    );
    assert_eq!(s.streams("zone-b").await.unwrap().len(), 1);
    assert!(s.streams("zone_").await.unwrap().is_empty());
    assert!(s.streams("%").await.unwrap().is_empty());
    // A stream named twice is refused.
    let twice = [Append {
        stream: "zone-a",
        expected_seq: 1,
        entries: &two,
    }];
    let (a, _) = both(1, 1);
    assert!(matches!(
        s.write(WriteBatch {
            append: Some(a),
            also_append: &twice,
            ..WriteBatch::default()
        })
        .await,
        Err(StoreError::Invalid { .. })
    ));
    // Racing spanning writers, half naming the streams in the other order.
    const N: usize = 12;
    for round in 0..3u64 {
        let barrier = Arc::new(Barrier::new(N));
        let mut tasks = Vec::new();
        for i in 0..N {
            let (store, barrier) = (store.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                let entries = [marker(100 * (round + 1) + i as u64)];
                let (first, second) = if i % 2 == 0 {
                    ("zone-a", "zone-b")
                } else {
                    ("zone-b", "zone-a")
                };
                let also = [Append {
                    stream: second,
                    expected_seq: 1 + round,
                    entries: &entries,
                }];
                barrier.wait().await;
                store
                    .write(WriteBatch {
                        append: Some(Append {
                            stream: first,
                            expected_seq: 1 + round,
                            entries: &entries,
                        }),
                        also_append: &also,
                        ..WriteBatch::default()
                    })
                    .await
            }));
        }
        let mut wins = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => wins += 1,
                Err(StoreError::Conflict { actual, .. }) => assert_eq!(actual, 2 + round),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(wins, 1, "round {round}");
    }
    let a: Vec<u64> = s
        .commands_since("zone-a", 1)
        .await
        .unwrap()
        .iter()
        .map(|c| marker_of(&c.entry))
        .collect();
    let b: Vec<u64> = s
        .commands_since("zone-b", 1)
        .await
        .unwrap()
        .iter()
        .map(|c| marker_of(&c.entry))
        .collect();
    assert_eq!(a.len(), 3);
    assert_eq!(a, b, "both streams got the same winners in the same order");
}
