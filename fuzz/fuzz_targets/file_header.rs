//! The file-transfer stream's header, which `recv` decodes from whatever a
//! sender sends (names become paths: the name check is part of it).
#![no_main]

use joulenet_runtime::app::FileHeader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((h, len))) = FileHeader::decode(data) {
        assert!(len <= data.len());
        assert!(!h.name.starts_with('.') && !h.name.contains('/'));
        assert!(h.offset <= h.size);
    }
});
