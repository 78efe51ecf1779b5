//! Runs the example binary the way the guide does and checks what it prints.

#![allow(clippy::unwrap_used)]

#[test]
fn the_example_prints_its_plan_reservations_and_offer() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_berth-embed-example"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("plan (proven optimal, "), "{text}");
    assert_eq!(lines[1], "  vfw -> dallas, reservation r1");
    assert_eq!(lines[2], "  vrouter -> dallas, reservation r2");
    assert_eq!(
        lines[3],
        "8 more vCPUs at dallas: conflict; 0 reservable in that window, all 8 from 2030-01-02 01:00:00 UTC"
    );
}
