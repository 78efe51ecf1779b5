//! Fuzz target: arbitrary bytes as a homing template; validation must never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let opts = berth_template::LoadOptions::default().file("stack.yaml", "resources: {}");
        let analysis = berth_template::analyze(text, &opts);
        // The model exists exactly when there is no error.
        assert_eq!(analysis.template.is_some(), !analysis.has_errors());
    }
});
