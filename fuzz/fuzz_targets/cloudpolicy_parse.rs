//! Fuzz target: arbitrary text as a cloud selection policy, owner catalog and cost file (the
//! first byte picks the document); parsing never panics and rejections explain themselves.
#![no_main]

use berth_cloudpolicy::{CloudSelectionPolicy, CostFile, OwnerCatalog};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let message = match pick % 3 {
        0 => CloudSelectionPolicy::parse(text).err().map(|e| e.to_string()),
        1 => OwnerCatalog::parse(text).err().map(|e| e.to_string()),
        _ => CostFile::parse(text).err().map(|e| e.to_string()),
    };
    if let Some(m) = message {
        assert!(!m.is_empty());
    }
});
