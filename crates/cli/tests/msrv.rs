//! The workspace's `rust-version` is true of its lock file: no locked
//! dependency asks for a newer compiler than the one the README promises.

use std::process::Command;

fn version(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

#[test]
fn rust_version_covers_every_locked_dependency() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours = packages
        .iter()
        .find(|p| p["name"] == "joulenet")
        .and_then(|p| p["rust_version"].as_str())
        .expect("joulenet declares a rust-version");
    let needed = packages
        .iter()
        .filter_map(|p| Some((p["rust_version"].as_str()?, p["name"].as_str()?)))
        .max_by_key(|(v, _)| version(v))
        .expect("some dependency declares one");
    assert!(
        version(ours) >= version(needed.0),
        "rust-version {ours} in Cargo.toml, but {} needs {}",
        needed.1,
        needed.0
    );
}
