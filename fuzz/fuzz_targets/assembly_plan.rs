//! Fuzz target: arbitrary text as an assembly descriptor, validated and planned; never panics,
//! and a failed plan always says why.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(diags) = berth_assembly::plan_text(text, &BTreeMap::new()) {
        assert!(!diags.is_empty());
    }
});
