//! The `joulenet` command-line tool.
fn main() {}
