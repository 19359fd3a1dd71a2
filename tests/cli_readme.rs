//! Every `kcp` command in README.md runs as written.
//!
//! The convention (also written in README.md, in an HTML comment): every line that starts with
//! `kcp ` inside a ```` ```sh ```` block is run with `bash -c` (with `pipefail`), the built `kcp`
//! first on `PATH`, from a scratch directory that sees the repository's `examples/` and
//! `testdata/`, and must exit 0, or N when the line ends with `# exit N`. A line
//! `<!-- needs: NAME -->` before a block skips the block unless `NAME` is a program on `PATH`;
//! `<!-- needs: broker -->` always skips it (commands that need a live Kafka cluster).
#![cfg(all(feature = "cli", unix))]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A README command and the exit status it must end with.
struct ReadmeCommand {
    line: String,
    exit: i32,
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The `kcp` lines of the README's sh blocks, and those of the blocks skipped by `needs`.
fn commands(readme: &str) -> (Vec<ReadmeCommand>, Vec<String>) {
    enum Block {
        Outside,
        Sh { skip: bool },
        Other,
    }
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    let mut block = Block::Outside;
    let mut last_text = "";
    for line in readme.lines() {
        let trimmed = line.trim();
        match block {
            Block::Outside if trimmed.starts_with("```") => {
                let needs = last_text.strip_prefix("<!-- needs:").and_then(|r| r.strip_suffix("-->")).map(str::trim);
                let skip = match needs {
                    None => false,
                    Some("broker") => true,
                    Some(program) => !on_path(program),
                };
                block = if trimmed == "```sh" { Block::Sh { skip } } else { Block::Other };
            }
            Block::Outside => {
                if !trimmed.is_empty() {
                    last_text = trimmed;
                }
            }
            Block::Sh { .. } | Block::Other if trimmed.starts_with("```") => {
                block = Block::Outside;
                last_text = "";
            }
            Block::Sh { skip } if trimmed.starts_with("kcp ") => {
                if skip {
                    skipped.push(trimmed.to_owned());
                } else {
                    let exit = trimmed.rsplit_once("# exit ").and_then(|(_, n)| n.trim().parse().ok()).unwrap_or(0);
                    run.push(ReadmeCommand { line: trimmed.to_owned(), exit });
                }
            }
            Block::Sh { .. } | Block::Other => {}
        }
    }
    (run, skipped)
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kcp-readme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["examples", "testdata"] {
        let link = dir.join(name);
        if !link.exists() {
            std::os::unix::fs::symlink(root.join(name), &link).unwrap();
        }
    }
    dir
}

#[test]
fn every_readme_command_runs_as_written() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let (run, skipped) = commands(&readme);
    assert!(run.len() >= 12, "only {} kcp commands found in README.md", run.len());
    let dir = scratch();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kcp")).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    for command in &run {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("set -o pipefail; {}", command.line))
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .expect("bash runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(command.exit),
            "README command `{}` exited {:?}: {stderr}{}",
            command.line,
            out.status.code(),
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!stderr.contains("panicked"), "`{}`: {stderr}", command.line);
        if command.exit == 0 {
            assert!(!out.stdout.is_empty(), "`{}` printed nothing", command.line);
        }
    }
    for line in skipped {
        println!("SKIP (needs a program or a broker): {line}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_convention_runs_kcp_lines_and_skips_marked_blocks() {
    let text = "intro\n\n```sh\nkcp decode --example\ncargo test\nkcp decode --strict x   # exit 1\n```\n\
                <!-- needs: broker -->\n```sh\nkcp group list\n```\n\n<!-- needs: sh -->\n```sh\nkcp compat --example\n```\n\
                ```text\nkcp not-run\n```\n";
    let (run, skipped) = commands(text);
    let lines: Vec<(&str, i32)> = run.iter().map(|c| (c.line.as_str(), c.exit)).collect();
    assert_eq!(
        lines,
        [("kcp decode --example", 0), ("kcp decode --strict x   # exit 1", 1), ("kcp compat --example", 0)]
    );
    assert_eq!(skipped, ["kcp group list"]);
}
