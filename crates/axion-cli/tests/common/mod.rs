//! Shared by the corpus tests.

use std::path::PathBuf;

/// The corpus's `pybullet_data/` folder (fetched by `scripts/fetch-corpus.sh` into
/// `corpus/`, or the folder `AXION_CORPUS` names), or `None` (with the reason printed)
/// when it has not been fetched. Without the corpus the tests pass, unless
/// `AXION_CORPUS_REQUIRED=1` (set by `.ci/run`) makes a missing corpus a failure.
pub fn corpus() -> Option<PathBuf> {
    let data = axion_cli::corpus_root().join("pybullet_data");
    if data.is_dir() {
        return Some(data);
    }
    let reason = format!(
        "skipped: no robot corpus at {} (run scripts/fetch-corpus.sh)",
        data.display()
    );
    assert!(
        std::env::var_os("AXION_CORPUS_REQUIRED").is_none_or(|v| v != "1"),
        "{reason}, and AXION_CORPUS_REQUIRED=1"
    );
    println!("{reason}");
    None
}
