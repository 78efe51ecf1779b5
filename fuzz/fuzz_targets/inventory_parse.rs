//! Fuzz target: arbitrary text as an inventory document; parsing never panics and every
//! rejection explains itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = berth_inventory::Inventory::parse(text) {
        assert!(!e.to_string().is_empty());
    }
});
