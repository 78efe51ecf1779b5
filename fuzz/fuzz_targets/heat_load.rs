//! Fuzz target: arbitrary text as a Heat policy template; loading never panics, and the
//! template exists exactly when no diagnostic is an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let loaded = berth_heat::load(text);
    let has_errors = loaded
        .diagnostics
        .iter()
        .any(|d| d.severity == berth_doc::Severity::Error);
    assert_eq!(loaded.template.is_some(), !has_errors);
});
