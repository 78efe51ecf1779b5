//! A spinner on stderr for long solves and placements: elapsed time, the best objective,
//! the proven bound and the gap as the search improves them. Drawn only when stderr is a terminal and not `--quiet`.

use std::io::IsTerminal as _;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this shows nothing (no flicker on quick commands).
const SHOW_AFTER: Duration = Duration::from_millis(400);

/// The display; the searches hold it as their `Progress`.
pub struct Live {
    bar: ProgressBar,
    what: &'static str,
    /// The best plan's score and the proven bound, as last heard.
    known: Mutex<(Option<f64>, Option<f64>)>,
    /// Stops the thread that shows the bar after [`SHOW_AFTER`].
    shower: Mutex<Option<(Sender<()>, JoinHandle<()>)>>,
}

impl Live {
    /// Starts a spinner saying `what` (e.g. "solving"), drawn after a moment if stderr is a
    /// terminal and `quiet` is off; messages set before then show when it appears.
    pub fn start(what: &'static str, quiet: bool) -> Arc<Live> {
        let bar = ProgressBar::hidden();
        bar.set_message(what);
        let shower = (!quiet && std::io::stderr().is_terminal()).then(|| {
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
                bar.set_style(style);
            }
            let (tx, rx) = mpsc::channel::<()>();
            let shown = bar.clone();
            let thread = std::thread::spawn(move || {
                if rx.recv_timeout(SHOW_AFTER) == Err(RecvTimeoutError::Timeout) {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(120));
                }
            });
            (tx, thread)
        });
        Arc::new(Live {
            bar,
            what,
            known: Mutex::new((None, None)),
            shower: Mutex::new(shower),
        })
    }

    /// Replaces the message (a status while waiting on a daemon).
    pub fn say(&self, message: String) {
        self.bar.set_message(message);
    }

    /// Clears the spinner (the answer follows on stdout).
    pub fn finish(&self) {
        let shower = self.shower.lock().map(|mut s| s.take()).unwrap_or_default();
        if let Some((stop, thread)) = shower {
            let _ = stop.send(());
            let _ = thread.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Live {
    /// Updates what is known and redraws the message.
    fn hear(&self, best: Option<f64>, bound: Option<f64>) {
        let Ok(mut known) = self.known.lock() else {
            return;
        };
        known.0 = best.or(known.0);
        known.1 = bound.or(known.1);
        if let Some(b) = known.0 {
            self.bar.set_message(message(self.what, b, known.1));
        }
    }
}

impl berth_engine::Progress for Live {
    fn improved(&self, best: f64, bound: Option<f64>) {
        self.hear(Some(best), bound);
    }

    fn bound_raised(&self, bound: f64) {
        self.hear(None, Some(bound));
    }
}

/// `solving: best 12.5, bound 10 (gap 20%)`: the gap as `berth solve` reports it
/// ([`berth_engine::relative_gap`]).
pub fn message(what: &str, best: f64, bound: Option<f64>) -> String {
    let num = |x: f64| {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".to_owned()
        } else {
            s.to_owned()
        }
    };
    match bound {
        None => format!("{what}: best {}", num(best)),
        Some(b) => format!(
            "{what}: best {}, bound {} (gap {})",
            num(best),
            num(b),
            berth_engine::fmt_gap(berth_engine::relative_gap(best, b))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_shows_best_bound_and_gap() {
        assert_eq!(message("solving", 12.5, None), "solving: best 12.5");
        assert_eq!(
            message("solving", 12.5, Some(10.0)),
            "solving: best 12.5, bound 10 (gap 20%)"
        );
        assert_eq!(
            message("solving", 1000.0, Some(999.9)),
            "solving: best 1000, bound 999.9 (gap 0.01%)"
        );
        assert_eq!(
            message("placing", 3.0, Some(3.0)),
            "placing: best 3, bound 3 (gap 0%)"
        );
        assert_eq!(message("x", -0.00001, None), "x: best 0");
    }

    #[test]
    fn nothing_is_drawn_when_quiet() {
        let live = Live::start("solving", true);
        assert!(live.bar.is_hidden());
        berth_engine::Progress::improved(&*live, 1.0, Some(0.5));
        assert_eq!(live.bar.message(), "solving: best 1, bound 0.5 (gap 50%)");
    }

    #[test]
    fn a_raised_bound_is_shown_with_the_best_plan() {
        let live = Live::start("solving", true);
        // Before any plan there is nothing to compare the bound with.
        berth_engine::Progress::bound_raised(&*live, 2.0);
        assert_eq!(live.bar.message(), "solving");
        berth_engine::Progress::improved(&*live, 10.0, Some(2.0));
        berth_engine::Progress::bound_raised(&*live, 8.0);
        assert_eq!(live.bar.message(), "solving: best 10, bound 8 (gap 20%)");
    }
}
