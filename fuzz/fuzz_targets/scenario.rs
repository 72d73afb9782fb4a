//! The scenario reader on arbitrary text: an error naming a key, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = joulenet_sim::Scenario::parse_str(text, "fuzz", std::env::temp_dir());
    }
});
