//! The `berthd` daemon (not yet built: see issue 6).

fn main() {
    eprintln!("berthd: the daemon is not built yet");
    std::process::exit(2);
}
