//! Replays the committed `simulator_steps` fuzz corpus through the fuzz target's check.

#[path = "../fuzz/sim_checks.rs"]
mod sim_checks;

#[test]
fn simulator_steps_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/simulator_steps");
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    assert!(entries.len() > 100);
    for path in &entries {
        let data = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(|| sim_checks::check(&data));
        assert!(result.is_ok(), "{} fails", path.display());
    }
}
