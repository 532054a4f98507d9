//! Every sample in `samples/` normalizes to its snapshot in `snapshots/`.
//!
//! After a deliberate change: `cargo insta review` (or `INSTA_UPDATE=always cargo test`), then
//! read the diff before committing it.

use crate::common;

use bench_normalize::Report;

#[test]
fn sample() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::glob!("../../samples", "*/*.{txt,json,jsonl,csv,md,yaml,gz,zst,xz}", |path| {
            let name = common::sample_name(path);
            if !common::is_sample(&name) {
                return;
            }
            // Exactly what `bench-normalize --format json` prints, in report order.
            let text = match common::normalize_file(path) {
                Ok(runs) => serde_json::to_string_pretty(&Report::new(runs)).unwrap(),
                Err(e) => serde_json::to_string_pretty(
                    &serde_json::json!({ "error": e.to_string(), "exit_code": e.exit_code() as i32 }),
                )
                .unwrap(),
            };
            insta::assert_snapshot!(text);
        });
    });
}
