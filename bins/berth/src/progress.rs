//! A spinner on stderr for long solves and placements: elapsed time, the best objective and
//! the bound as the search improves. Drawn only when stderr is a terminal and not `--quiet`.

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

impl berth_engine::Progress for Live {
    fn improved(&self, best: f64, bound: Option<f64>) {
        self.bar.set_message(message(self.what, best, bound));
    }
}

/// `solving: best 12.5, bound 10 (gap 20.0%)`.
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
        Some(b) => {
            let gap = (best - b).abs() / best.abs().max(1e-9);
            format!(
                "{what}: best {}, bound {} (gap {:.1}%)",
                num(best),
                num(b),
                100.0 * gap.min(1e9)
            )
        }
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
            "solving: best 12.5, bound 10 (gap 20.0%)"
        );
        assert_eq!(
            message("placing", 3.0, Some(3.0)),
            "placing: best 3, bound 3 (gap 0.0%)"
        );
        assert_eq!(message("x", -0.00001, None), "x: best 0");
    }

    #[test]
    fn nothing_is_drawn_when_quiet() {
        let live = Live::start("solving", true);
        assert!(live.bar.is_hidden());
        berth_engine::Progress::improved(&*live, 1.0, Some(0.5));
        assert_eq!(live.bar.message(), "solving: best 1, bound 0.5 (gap 50.0%)");
    }
}
