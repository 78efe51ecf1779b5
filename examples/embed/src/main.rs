//! `cargo run -p berth-embed-example`: plans, reserves and prints what it decided.

use std::process::ExitCode;

fn main() -> ExitCode {
    let now = berth_embed_example::example_now();
    match berth_embed_example::run(now) {
        Ok(r) => {
            let proven = if r.optimal {
                "proven optimal"
            } else {
                "best found"
            };
            println!("plan ({proven}, {:.1} km to the customer):", r.objective);
            for ((demand, site), (_, id)) in r.placements.iter().zip(&r.reservations) {
                println!("  {demand} -> {site}, reservation {id}");
            }
            match r.offer {
                Some((max, Some(at))) => println!(
                    "8 more vCPUs at {}: conflict; {max} reservable in that window, all 8 from {at}",
                    r.placements[0].1
                ),
                Some((max, None)) => println!("8 more vCPUs: conflict; {max} reservable"),
                None => println!("8 more vCPUs: reserved"),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("berth-embed-example: {e}");
            ExitCode::FAILURE
        }
    }
}
