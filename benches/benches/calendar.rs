//! Criterion benchmarks for berth-calendar: admission, create, cancel and earliest-window search
//! with 10^4, 10^5 and 10^6 live reservations spread over a year (minute-aligned instants);
//! restoring a snapshot against replaying the command log at 10^4 and 10^5.

use std::hint::black_box;
use std::time::{Duration, Instant};

use berth_calendar::chrono::{DateTime, TimeDelta, TimeZone, Utc};
use berth_calendar::{
    Amounts, Calendar, CapacityChange, Command, LogEntry, Policy, PoolKey, ReservationRequest,
    WindowQuery, ZoneId,
};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};

const YEAR_MINUTES: i64 = 365 * 24 * 60;

/// xorshift64*: a fixed-seed generator so every run builds the same calendar.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn minute(m: i64) -> DateTime<Utc> {
    t0() + TimeDelta::minutes(m)
}

/// A random request: 1-8 cores, 1-16 GiB, 1-48 hours, starting anywhere in the year.
fn request(rng: &mut Rng) -> ReservationRequest {
    let start = rng.below(YEAR_MINUTES as u64 - 48 * 60) as i64;
    let len = 60 + rng.below(47 * 60) as i64;
    let amounts = Amounts::new()
        .with("cores", 1 + rng.below(8))
        .with("ram", 1024 * (1 + rng.below(16)));
    ReservationRequest::new("zone-1", amounts).window(minute(start), minute(start + len))
}

/// A calendar with `n` live reservations. Capacity is sized so the year is busy but not full
/// (mean load about 60% of capacity), so admission does real work and some requests wait.
fn build(n: u64) -> Calendar {
    let mut cal = Calendar::new(Policy {
        max_duration_hours: None,
        ..Policy::default()
    });
    // Mean concurrency = n * mean length / year; mean cores 4.5, mean length 24.5 h.
    let concurrent = (n as f64 * 24.5 * 60.0 / YEAR_MINUTES as f64).max(1.0);
    let cores = (concurrent * 4.5 / 0.6) as u64 + 16;
    let ram = (concurrent * 8.5 * 1024.0 / 0.6) as u64 + 32 * 1024;
    let _ = cal.increase_capacity(
        CapacityChange {
            pool: PoolKey::new("zone-1", "openstack"),
            start: t0(),
            end: None,
            amounts: Amounts::new().with("cores", cores).with("ram", ram),
        },
        t0(),
    );
    let mut rng = Rng(0x5eed_0000 + n);
    // The first n requests go through the sorted bulk loader, which gives exactly what n
    // one-by-one creates give; the rest (when some did not fit) top up one by one as before.
    let first: Vec<ReservationRequest> = (0..n).map(|_| request(&mut rng)).collect();
    let mut live = cal
        .create_reservations(first, t0())
        .iter()
        .filter(|r| r.is_ok())
        .count() as u64;
    let mut tries = n;
    while live < n && tries < 3 * n {
        tries += 1;
        if cal.create_reservation(request(&mut rng), t0()).is_ok() {
            live += 1;
        }
    }
    // Re-lay the profiles level by level (already so after the sorted loader; tidies up after
    // one-by-one top-ups).
    cal.compact();
    cal
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("calendar");
    for n in berth_benches::sizes(&[10_000u64, 100_000, 1_000_000]) {
        let started = Instant::now();
        let mut cal = build(n);
        eprintln!("built {n} reservations in {:.2?}", started.elapsed());
        let mut rng = Rng(42);
        let probes: Vec<ReservationRequest> = (0..1024).map(|_| request(&mut rng)).collect();

        let mut i = 0;
        g.bench_function(BenchmarkId::new("admission_check", n), |b| {
            b.iter(|| {
                i = (i + 1) % probes.len();
                black_box(cal.check_reservation(&probes[i], t0()).is_ok())
            })
        });

        let mut i = 0;
        g.bench_function(BenchmarkId::new("create", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    i = (i + 1) % probes.len();
                    let start = Instant::now();
                    let made = cal.create_reservation(probes[i].clone(), t0());
                    total += start.elapsed();
                    if let Ok((id, _)) = made {
                        let _ = cal.cancel_reservation(id, t0());
                    }
                }
                total
            })
        });

        let mut i = 0;
        g.bench_function(BenchmarkId::new("cancel", n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    i = (i + 1) % probes.len();
                    if let Ok((id, _)) = cal.create_reservation(probes[i].clone(), t0()) {
                        let start = Instant::now();
                        let _ = black_box(cal.cancel_reservation(id, t0()));
                        total += start.elapsed();
                    }
                }
                total
            })
        });

        // A quarter of the capacity for three days: usually has to jump past busy stretches.
        let cores = cal
            .query_capacity(&berth_calendar::CapacityQuery {
                zone: None,
                provider: None,
                window: berth_calendar::Window::new(t0(), minute(1)),
                timeline: false,
            })
            .ok()
            .and_then(|r| {
                r.pools.first().and_then(|p| {
                    p.summary
                        .get(&berth_calendar::Dimension::vcpu())
                        .map(|s| s.total)
                })
            })
            .unwrap_or(16);
        let mut i = 0u64;
        g.bench_function(BenchmarkId::new("earliest_window", n), |b| {
            b.iter(|| {
                i = (i + 7919) % (YEAR_MINUTES as u64 / 2);
                let q = WindowQuery {
                    zone: ZoneId::new("zone-1"),
                    provider: None,
                    amounts: Amounts::new().with("cores", (cores as u64) / 4),
                    not_before: minute(i as i64),
                    duration: Some(TimeDelta::hours(72)),
                };
                black_box(cal.find_window(&q).ok())
            })
        });
    }
    g.finish();
}

/// The command log of a calendar with `n` live reservations (as `build`, without top-ups):
/// one capacity increase and one create per admitted request, all at `t0`.
fn logged(n: u64) -> (Policy, Vec<LogEntry>, Calendar) {
    let policy = Policy {
        max_duration_hours: None,
        ..Policy::default()
    };
    let mut cal = Calendar::new(policy.clone());
    let concurrent = (n as f64 * 24.5 * 60.0 / YEAR_MINUTES as f64).max(1.0);
    let capacity = Command::IncreaseCapacity(CapacityChange {
        pool: PoolKey::new("zone-1", "openstack"),
        start: t0(),
        end: None,
        amounts: Amounts::new()
            .with("cores", (concurrent * 4.5 / 0.6) as u64 + 16)
            .with("ram", (concurrent * 8.5 * 1024.0 / 0.6) as u64 + 32 * 1024),
    });
    let mut log = Vec::new();
    if cal.apply(capacity.clone(), t0()).is_ok() {
        log.push(LogEntry {
            at: t0(),
            command: capacity,
        });
    }
    let mut rng = Rng(0x5eed_0000 + n);
    let requests: Vec<ReservationRequest> = (0..n).map(|_| request(&mut rng)).collect();
    // The bulk loader gives exactly what one-by-one creates give, so the log replays to it.
    let made = cal.create_reservations(requests.clone(), t0());
    for (r, m) in requests.into_iter().zip(made) {
        if m.is_ok() {
            log.push(LogEntry {
                at: t0(),
                command: Command::CreateReservation(r),
            });
        }
    }
    (policy, log, cal)
}

/// Restore from a snapshot against replaying the whole log: one timed run of each (a replay
/// of 10^5 creates takes seconds), then criterion on restore alone.
fn restore_vs_replay(c: &mut Criterion) {
    let mut g = c.benchmark_group("calendar_restore");
    g.sample_size(10);
    for n in berth_benches::sizes(&[10_000u64, 100_000]) {
        let (policy, log, cal) = logged(n);
        let entries = log.len();
        let started = Instant::now();
        let replayed = Calendar::replay(policy, log);
        let replay = started.elapsed();
        let started = Instant::now();
        let snap = cal.snapshot();
        let snapshot = started.elapsed();
        let started = Instant::now();
        let restored = Calendar::restore(snap.clone());
        let restore = started.elapsed();
        let same = match (&replayed, &restored) {
            (Ok(a), Ok(b)) => a.state() == b.state() && b.state() == cal.state(),
            _ => false,
        };
        assert!(same, "replay and restore disagree");
        eprintln!(
            "{n} reservations ({entries} log entries): replay {replay:.2?}, snapshot {snapshot:.2?}, restore {restore:.2?}"
        );
        g.bench_function(BenchmarkId::new("restore", n), |b| {
            b.iter_batched(
                || snap.clone(),
                |s| black_box(Calendar::restore(s).is_ok()),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(calendar, benches, restore_vs_replay);
criterion_main!(calendar);
