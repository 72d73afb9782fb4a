//! `joulenet list` names every preset a scenario can use (issue 19: "the
//! energy models and battery presets"), so a preset added to the code
//! cannot be missing from the listing.

use std::process::Command;

use joulenet_channel::battery::cells;
use joulenet_channel::radio::{serrano, FrameModel, RadioProfile};

#[test]
fn list_shows_every_energy_preset() {
    let out = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .arg("list")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let names = RadioProfile::preset_names()
        .iter()
        .chain(FrameModel::preset_names())
        .copied()
        .chain(serrano::device_names())
        .chain(cells::cell_names());
    for name in names {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(name)),
            "`joulenet list` does not show {name}"
        );
    }
    for model in ["state", "per_packet", "ideal, kibam", "peukert"] {
        assert!(text.contains(model), "{model}");
    }
}
