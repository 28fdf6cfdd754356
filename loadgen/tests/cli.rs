//! The binary's exit codes: 2 for a bad command line (naming the flag), 0 for a run with errors.

mod common;

use std::process::Command;

fn stackbench_load(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench-load"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_command_lines_exit_2_naming_the_flag() {
    let cases: [(&[&str], &str); 6] = [
        (&["not-a-url"], "URL"),
        (&["https://127.0.0.1/"], "https"),
        (&["-c", "0", "http://127.0.0.1/"], "-c/--connections"),
        (&["-R", "100", "http://127.0.0.1/"], "-d/--duration"),
        (
            &["--pipeline", "2", "--no-keepalive", "http://127.0.0.1/"],
            "--pipeline",
        ),
        (&["--bogus", "http://127.0.0.1/"], "--bogus"),
    ];
    for (args, mentions) in cases {
        let (code, _, stderr) = stackbench_load(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(mentions), "{args:?}: {stderr}");
    }
}

const ENGINES: [&str; 2] = ["epoll", "uring"];

#[test]
fn errors_are_data_not_failures() {
    let url = format!("http://{}/", common::closed_port());
    for engine in ENGINES {
        let args = ["-d", "200ms", "-c", "1", "--engine", engine, "--json", &url];
        let (code, stdout, stderr) = stackbench_load(&args);
        assert_eq!(code, 0, "{stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
        assert!(doc["errors"]["refused"].as_u64().unwrap() > 0);
        assert_eq!(doc["tool"]["engine"], engine);
    }
}

#[test]
fn the_default_engine_is_one_that_runs() {
    let url = format!("http://{}/", common::closed_port());
    let (code, stdout, stderr) = stackbench_load(&["-d", "100ms", "-c", "1", "--json", &url]);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert!(ENGINES.contains(&doc["tool"]["engine"].as_str().unwrap()));
}

#[test]
fn too_many_files_is_counted_and_reported() {
    for engine in ENGINES {
        too_many_files_on(engine);
    }
}

fn too_many_files_on(engine: &str) {
    let server = common::TestServer::start(common::Behavior::Fixed {
        status: 200,
        body: "ok",
    });
    let script = format!(
        "ulimit -n 64 && exec {} -d 300ms -c 200 -t 1 --engine {engine} --json {}",
        env!("CARGO_BIN_EXE_stackbench-load"),
        server.url("/")
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .output()
        .expect("sh runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(doc["errors"]["too_many_files"].as_u64().unwrap() > 0);
    assert!(
        doc["requests"]["ok"].as_u64().unwrap() > 0,
        "the connections that fit still work"
    );
    let warnings = doc["limits"]["warnings"].to_string();
    assert!(warnings.contains("RLIMIT_NOFILE"), "{warnings}");
    assert!(
        warnings.contains("requested connections could be open"),
        "{warnings}"
    );
}
